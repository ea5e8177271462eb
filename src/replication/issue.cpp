// Sending to members: writes in LSN order under issue_mu, flushes at
// commit, heartbeats. The local copy is written first, so it always holds
// at least what any replica was sent: it is what a resync copies from.
#include "replication/impl.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>

namespace rpm {

using replication::Member;

namespace replication {

// Named, not anonymous: Impl::MemberFlush (a member of a class with
// external linkage) holds one (-Wsubobject-linkage).
struct Destination {
    std::size_t index;
    std::uint64_t epoch;
    RemoteRegion region;
};

} // namespace replication

using replication::Destination;

namespace {
// Region offsets of a page-aligned mapping: a page of it is a page of these.
constexpr std::uint64_t kLocalPage = 4096;
} // namespace

Result<Lsn> Replicator::Impl::write_region(std::uint64_t region_offset, std::span<const std::byte> bytes,
                                           bool atomic) {
    std::memcpy(local->bytes().data() + region_offset, bytes.data(), bytes.size());
    if (local_msync) {
        // msync'ed at the commit (issue_flushes), a run of pages at a time.
        local_dirty.push_back({region_offset, bytes.size()});
        if (local_dirty.size() >= local_dirty_merge_at) {
            pmem::detail::page_runs(local_dirty, kLocalPage);
            local_dirty_merge_at = std::max<std::size_t>(4096, 2 * local_dirty.size());
        }
    } else {
        local->flush(local->bytes().data() + region_offset, bytes.size());
    }
    const Lsn lsn = last_lsn.load(std::memory_order_relaxed) + 1;
    last_lsn.store(lsn, std::memory_order_release);
    if (defer(region_offset, bytes)) return lsn;
    spill_deferred();  // the earlier small writes land first
    // One copy for every member: the caller's buffer may be reused as soon
    // as we return, and RDMA copies into its bounce buffer only when it posts.
    auto staged = std::make_shared<std::vector<std::byte>>(bytes.begin(), bytes.end());
    send_writes(region_offset, std::span<const std::byte>(*staged), atomic, staged);
    return lsn;
}

void Replicator::Impl::send_writes(std::uint64_t region_offset, std::span<const std::byte> bytes, bool atomic,
                                   std::shared_ptr<const void> keep) {
    std::vector<Destination> targets;
    {
        std::lock_guard lock(mu);
        for (auto& m : replicas) {
            if (m.state == ReplicaState::failed || !m.region) {
                m.miss(region_offset, bytes.size());
                continue;
            }
            m.dirty.add(region_offset, bytes.size());
            if (m.outstanding++ == 0) m.last_progress = Clock::now();
            targets.push_back({m.index, m.epoch, *m.region});
        }
    }
    std::uint64_t value = 0;
    if (atomic) std::memcpy(&value, bytes.data(), 8);
    for (auto& t : targets) {
        auto done = [this, i = t.index, e = t.epoch, keep](Result<void> r) { on_write_done(i, e, std::move(r)); };
        if (atomic)
            t.region.atomic_write(region_offset, value, std::move(done));
        else
            t.region.write(region_offset, bytes, std::move(done));
    }
}

bool Replicator::Impl::defer(std::uint64_t region_offset, std::span<const std::byte> bytes) {
    if (bytes.size() > replication::kDeferMaxWrite) return false;
    if (deferred.pieces.size() == replication::kDeferMaxPieces ||
        deferred.bytes.size() + bytes.size() > replication::kDeferMaxBytes)
        spill_deferred();
    deferred.pieces.push_back({region_offset, deferred.bytes.size(), bytes.size()});
    deferred.bytes.insert(deferred.bytes.end(), bytes.begin(), bytes.end());
    return true;
}

std::shared_ptr<const replication::Deferred> Replicator::Impl::take_deferred() {
    if (deferred.empty()) return nullptr;
    auto d = std::make_shared<replication::Deferred>(std::move(deferred));
    deferred = {};
    d->slices.reserve(d->pieces.size());
    for (const auto& p : d->pieces)
        d->slices.push_back({p.offset, std::span<const std::byte>(d->bytes).subspan(p.at, p.length)});
    return d;
}

void Replicator::Impl::spill_deferred() {
    const auto d = take_deferred();
    if (!d) return;
    for (const auto& s : d->slices) send_writes(s.offset, s.data, s.data.size() == 8 && s.offset % 8 == 0, d);
}

void Replicator::Impl::extend_high_water(std::uint64_t end) {
    if (end <= header.high_water) return;
    const std::uint64_t step = replication::kHighWaterStep;
    header.high_water = std::min<std::uint64_t>((end + step - 1) / step * step, data.size());
    // Every member's header says how far data may have been written, so a
    // primary recovering from any of them compares far enough.
    std::uint64_t hw = header.high_water;
    std::byte raw[8];
    std::memcpy(raw, &hw, 8);
    (void)write_region(replication::kOffHighWater, raw, true);
}

// A member's flush at commit: planned under mu, sent after it.
struct Replicator::Impl::MemberFlush {
    Destination t;
    std::uint64_t id;
    std::vector<replication::Span> spans;  ///< of the writes sent already
};

void Replicator::Impl::flush_local_dirty() {
    pmem::detail::page_runs(local_dirty, kLocalPage);
    for (const auto& run : local_dirty) local->flush(local->bytes().data() + run.offset, run.length);
    local_dirty.clear();
}

Lsn Replicator::Impl::issue_flushes() {
    const Lsn target = last_lsn.load(std::memory_order_acquire);
    flush_local_dirty();
    local->drain();
    // The local header's position: where a restarted primary resumes its LSNs.
    std::memcpy(local->bytes().data() + replication::kOffPosition, &target, 8);
    local->persist(local->bytes().data() + replication::kOffPosition, 8);
    const auto batch = take_deferred();
    std::vector<std::pair<Frontier, Lsn>> notes;
    auto flushes = plan_flushes(target, batch, notes);
    wake_waiters();
    send_flushes(flushes, batch);
    notify(notes);
    return target;
}

std::vector<Replicator::Impl::MemberFlush> Replicator::Impl::plan_flushes(
    Lsn target, const std::shared_ptr<const replication::Deferred>& batch, std::vector<std::pair<Frontier, Lsn>>& notes) {
    std::vector<MemberFlush> flushes;
    std::lock_guard lock(mu);
    if (target > local_frontier) {
        local_frontier = target;
        notes.emplace_back(Frontier::local, target);
    }
    for (auto& m : replicas) {
        if (m.state == ReplicaState::failed || !m.region) {
            if (batch)
                for (const auto& p : batch->pieces) m.miss(p.offset, p.length);
            continue;
        }
        if (m.dirty.empty() && !batch) {
            // Nothing new since its last flush: that flush (or none)
            // covers everything issued up to target.
            if (m.flushes.empty()) m.frontier = std::max(m.frontier, target);
            else m.flushes.back().lsn = target;
            continue;
        }
        replication::PendingFlush pf{next_flush_id++, target, 0, std::move(m.dirty)};
        m.dirty = replication::IntervalSet(replication::kFlushMergeGap);
        auto spans = pf.ranges.spans();  // of the writes sent already
        pf.batch = batch;
        pf.remaining = static_cast<unsigned>(spans.size() + (batch ? batch->persists() : 0));
        if (m.outstanding == 0) m.last_progress = Clock::now();
        m.outstanding += pf.remaining;
        flushes.push_back({{m.index, m.epoch, *m.region}, pf.id, std::move(spans)});
        m.flushes.push_back(std::move(pf));
    }
    recompute_locked(notes);
    return flushes;
}

void Replicator::Impl::send_flushes(std::vector<MemberFlush>& flushes,
                                    const std::shared_ptr<const replication::Deferred>& batch) {
    for (auto& f : flushes) {
        for (std::size_t p = 0; batch && p < batch->persists(); ++p)
            f.t.region.persist(batch->persist(p), [this, i = f.t.index, e = f.t.epoch, id = f.id, batch](Result<void> r) {
                on_flush_done(i, e, id, std::move(r));
            });
        for (const auto& s : f.spans) {
            f.t.region.flush(s.offset, s.length, [this, i = f.t.index, e = f.t.epoch, id = f.id](Result<void> r) {
                on_flush_done(i, e, id, std::move(r));
            });
        }
    }
}

bool Replicator::Impl::nothing_unflushed() const {
    if (!deferred.empty() || !local_dirty.empty()) return false;
    std::lock_guard lock(mu);
    for (const auto& m : replicas)
        if (m.state != ReplicaState::failed && m.region && !m.dirty.empty()) return false;
    return true;
}

namespace {

// An aligned 8-byte slice is a commit word: stored whole, as atomic_write does.
void store_slice(std::byte* to, std::span<const std::byte> from) noexcept {
    if (from.size() == 8 && reinterpret_cast<std::uintptr_t>(to) % 8 == 0) {
        std::uint64_t v;
        std::memcpy(&v, from.data(), 8);
        std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(to)).store(v, std::memory_order_release);
        return;
    }
    std::memcpy(to, from.data(), from.size());
}

} // namespace

std::shared_ptr<const replication::Staged> replication::stage(std::span<const WriteSlice> slices) {
    auto st = std::make_shared<replication::Staged>();
    std::size_t total = 0;
    for (const auto& s : slices) total += s.data.size();
    st->bytes.resize(total);
    st->slices.reserve(slices.size());
    std::size_t at = 0;
    for (const auto& s : slices) {
        if (!s.data.empty()) std::memcpy(st->bytes.data() + at, s.data.data(), s.data.size());
        st->slices.push_back({s.offset, std::span<const std::byte>(st->bytes).subspan(at, s.data.size())});
        at += s.data.size();
    }
    return st;
}

Lsn Replicator::Impl::persist_slices(std::span<const WriteSlice> slices) {
    for (const auto& s : slices) {
        store_slice(local->bytes().data() + s.offset, s.data);
        local->flush(local->bytes().data() + s.offset, s.data.size());
    }
    const Lsn lsn = last_lsn.load(std::memory_order_relaxed) + 1;
    last_lsn.store(lsn, std::memory_order_release);
    // The local header's position, then one drain for all.
    std::memcpy(local->bytes().data() + replication::kOffPosition, &lsn, 8);
    local->persist(local->bytes().data() + replication::kOffPosition, 8);
    auto staged = replication::stage(slices);
    struct Sent {
        Destination t;
        std::uint64_t id;
    };
    std::vector<Sent> sends;
    std::vector<std::pair<Frontier, Lsn>> notes;
    {
        std::lock_guard lock(mu);
        local_frontier = lsn;
        notes.emplace_back(Frontier::local, lsn);
        for (auto& m : replicas) {
            if (m.state == ReplicaState::failed || !m.region) {
                for (const auto& s : slices) m.miss(s.offset, s.data.size());
                continue;
            }
            // Its completion moves the frontier like a flush's.
            replication::PendingFlush pf{next_flush_id++, lsn, 1, replication::IntervalSet(replication::kFlushMergeGap)};
            for (const auto& s : slices) pf.ranges.add(s.offset, s.data.size());
            if (m.outstanding++ == 0) m.last_progress = Clock::now();
            sends.push_back({{m.index, m.epoch, *m.region}, pf.id});
            m.flushes.push_back(std::move(pf));
        }
        recompute_locked(notes);
    }
    for (auto& s : sends) {
        s.t.region.persist(std::span<const WriteSlice>(staged->slices),
                           [this, i = s.t.index, e = s.t.epoch, id = s.id, staged](Result<void> r) {
                               on_flush_done(i, e, id, std::move(r));
                           });
    }
    wake_waiters();  // Replicator::wait(Frontier::local) callers
    notify(notes);
    return lsn;
}

Result<Lsn> Replicator::Impl::wait_quorum(Lsn target, IoGroup::Drive* drive, replication::Holds* holds) {
    // The failure detector bounds this wait: a member that does not answer
    // within failure_timeout is failed, which either lets the quorum form
    // without it or makes it impossible. The deadline is a second guard.
    const auto deadline = Clock::now() + 4 * opts.failure_timeout + 4 * opts.heartbeat_interval;
    auto settled = [&] { return quorum_frontier >= target || fenced || counted_live_locked() < needed; };
    std::unique_lock lock(mu);
    for (;;) {
        if (quorum_frontier >= target) return target;
        // Fenced: what a quorum held before stays held, nothing more may be
        // promised (a newer primary owns the replicas now).
        if (fenced) return Error(fenced->code(), "commit of LSN " + std::to_string(target) + ": " + fenced->message());
        const unsigned live = counted_live_locked();
        if (live < needed) {
            std::string last;
            for (const auto& m : replicas)
                if (m.state != ReplicaState::live && m.last_error.code()) last = m.last_error.message();
            return Error(errc::quorum_lost, "commit of LSN " + std::to_string(target) + ": " + std::to_string(live) +
                                                " live members, " + std::to_string(needed) + " needed" +
                                                (last.empty() ? "" : " (last failure: " + last + ")"));
        }
        if (holds && !holds->empty()) {
            // Completions take mu: it is not held while polling.
            lock.unlock();
            const bool ok = poll_until(*holds, [&] {
                std::lock_guard l(mu);
                return settled();
            }, deadline);
            lock.lock();
            if (!ok) holds = nullptr;  // the deadline: cv below decides
            continue;
        }
        if (drive) {
            // Completions take mu: it is not held while driving.
            lock.unlock();
            const bool ok = drive->run_until([&] {
                std::lock_guard l(mu);
                return settled();
            }, deadline);
            lock.lock();
            if (!ok) drive = nullptr;  // the deadline (or poll failed): cv below decides
            continue;
        }
        if (cv.wait_until(lock, deadline) == std::cv_status::timeout && quorum_frontier < target)
            return Error(errc::quorum_lost, "commit of LSN " + std::to_string(target) +
                                                ": no quorum of flushes within the failure timeout");
    }
}

void Replicator::Impl::wake_waiters() noexcept {
    cv.notify_all();
    io_group->wake_driver();
    poll_wake.notify();
}

void Replicator::Impl::send_heartbeat(std::size_t i) {
    // A heartbeat records the member's own position in its header and asks
    // for an answer: a member that gives none within failure_timeout fails.
    std::optional<Destination> t;
    Lsn position = 0;
    {
        std::lock_guard lock(mu);
        Member& m = replicas[i];
        if (m.state != ReplicaState::live || !m.region || m.outstanding > 0) return;
        m.outstanding += 2;
        m.last_progress = m.last_heartbeat = Clock::now();
        position = m.frontier;
        t = Destination{m.index, m.epoch, *m.region};
    }
    auto done = [this, i, e = t->epoch](Result<void> r) { on_write_done(i, e, std::move(r)); };
    t->region.atomic_write(replication::kOffPosition, position, done);
    t->region.flush(replication::kOffPosition, 8, [this, i, e = t->epoch, sent = Clock::now()](Result<void> r) {
        on_heartbeat_done(i, e, sent, std::move(r));
    });
}

} // namespace rpm
