// Catching a member up: copy (or compare and copy) from the local copy,
// write its header, flush, and only then let it count. Writes keep flowing
// to a syncing member meanwhile; each chunk is read from the local copy and
// sent under issue_mu, so a newer write to the same bytes always lands after
// the chunk and wins.
#include "replication/impl.hpp"

#include <algorithm>
#include <cstring>

namespace rpm {

using replication::Member;

namespace {

bool same_epoch(const Replicator::Impl& impl, std::size_t i, std::uint64_t epoch) {
    std::lock_guard lock(impl.mu);
    return impl.replicas[i].epoch == epoch && impl.replicas[i].state != ReplicaState::failed;
}

} // namespace

Result<void> Replicator::Impl::compare_chunk(std::size_t i, std::uint64_t region_offset, std::size_t length) {
    std::vector<std::byte> remote(length);
    {
        std::optional<RemoteRegion> r;
        {
            std::lock_guard lock(mu);
            r = replicas[i].region;
        }
        if (!r) return Error(errc::io_error, "the member has no connection");
        if (auto got = r->read(region_offset, remote); !got.has_value()) return got.error().with_context("resync read of " + replicas[i].spec.uri);
    }
    std::lock_guard issue(issue_mu);
    const std::byte* mine = local->bytes().data() + region_offset;
    if (std::memcmp(remote.data(), mine, length) == 0) return {};
    // Sent to this member only: the others already have these bytes.
    auto staged = std::make_shared<std::vector<std::byte>>(mine, mine + length);
    std::optional<RemoteRegion> r;
    std::uint64_t epoch = 0;
    {
        std::lock_guard lock(mu);
        Member& m = replicas[i];
        if (m.state == ReplicaState::failed || !m.region) return Error(errc::io_error, "the member failed during resync");
        m.dirty.add(region_offset, length);
        if (m.outstanding++ == 0) m.last_progress = Clock::now();
        m.bytes_resynced += length;
        r = m.region;
        epoch = m.epoch;
    }
    r->write(region_offset, std::span<const std::byte>(*staged),
             [this, i, epoch, staged](Result<void> done) { on_write_done(i, epoch, std::move(done)); });
    return {};
}

Result<void> Replicator::Impl::write_member_header(std::size_t i) {
    std::lock_guard issue(issue_mu);
    replication::Header h = header;
    h.position = last_lsn.load();
    auto raw = replication::encode_header(h);
    auto staged = std::make_shared<std::vector<std::byte>>(raw.begin(), raw.end());
    std::optional<RemoteRegion> r;
    std::uint64_t epoch = 0;
    {
        std::lock_guard lock(mu);
        Member& m = replicas[i];
        if (m.state == ReplicaState::failed || !m.region) return Error(errc::io_error, "the member failed during resync");
        m.dirty.add(0, staged->size());
        if (m.outstanding++ == 0) m.last_progress = Clock::now();
        r = m.region;
        epoch = m.epoch;
    }
    r->write(0, std::span<const std::byte>(*staged),
             [this, i, epoch, staged](Result<void> done) { on_write_done(i, epoch, std::move(done)); });
    return {};
}

Result<void> Replicator::Impl::flush_member(std::size_t i) {
    std::uint64_t epoch = 0, issued_before = 0;
    {
        std::lock_guard issue(issue_mu);
        (void)issue_flushes();
        std::lock_guard lock(mu);
        epoch = replicas[i].epoch;
        issued_before = next_flush_id;
    }
    // Wait for every flush sent to it so far, not for its frontier: a
    // member whose frontier is already at the last LSN (nothing was written
    // since) would otherwise count before the copy is durable there.
    std::unique_lock lock(mu);
    const auto deadline = Clock::now() + opts.failure_timeout + dial_timeout();
    const bool done = cv.wait_until(lock, deadline, [&] {
        const Member& m = replicas[i];
        if (m.epoch != epoch || m.state == ReplicaState::failed) return true;
        return m.flushes.empty() || m.flushes.front().id >= issued_before;
    });
    const Member& m = replicas[i];
    if (!done || m.epoch != epoch || m.state == ReplicaState::failed)
        return Error(errc::io_error, "replica " + m.spec.uri + ": the resync flush did not complete");
    return {};
}

Result<void> Replicator::Impl::resync(std::size_t i, bool full, const replication::LineSet& missed,
                                      ReplicaEvent::Kind kind) {
    std::uint64_t epoch = 0;
    {
        std::lock_guard lock(mu);
        epoch = replicas[i].epoch;
    }
    if (full) {
        const replication::Span all{kReplicaHeaderSize, header.high_water};
        for (std::uint64_t off = 0; off < all.length; off += replication::kResyncChunk) {
            if (!same_epoch(*this, i, epoch)) return Error(errc::io_error, "the member failed during resync");
            const auto n = std::min<std::uint64_t>(replication::kResyncChunk, all.length - off);
            if (auto r = compare_chunk(i, all.offset + off, n); !r) return r;
        }
    } else if (auto r = copy_missed(i, epoch, missed); !r) {
        return r;
    }
    if (auto r = write_member_header(i); !r) return r;
    if (auto r = flush_member(i); !r) return r;
    std::vector<std::pair<Frontier, Lsn>> notes;
    {
        std::lock_guard lock(mu);
        Member& m = replicas[i];
        if (m.epoch != epoch || m.state == ReplicaState::failed)
            return Error(errc::io_error, "the member failed during resync");
        m.state = ReplicaState::live;
        m.full_resync = false;
        ++m.resyncs;
        m.last_heartbeat = Clock::now();
        events.push_back({kind, i, m.spec.uri, {}, m.frontier, {}});
        recompute_locked(notes);
    }
    wake_waiters();
    notify(notes);
    return {};
}

} // namespace rpm
