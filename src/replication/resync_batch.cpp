// A returning member is sent what it missed as vectored persists: up to
// kMaxPersistSlices runs of missed lines and kResyncChunk bytes per request,
// so 100,000 scattered 64-byte lines cost about 400 requests, not 100,000,
// and the copy stays close to the bytes written while it was away.
#include "replication/impl.hpp"

#include <algorithm>

namespace rpm {

using replication::Member;

namespace {

/// Batches in flight per resync: bounds the staged copies (32 x 256 KiB).
constexpr unsigned kResyncWindow = 32;

struct Window {
    std::mutex mu;
    std::condition_variable cv;
    unsigned in_flight = 0;

    void release() {
        {
            std::lock_guard lock(mu);
            --in_flight;
        }
        cv.notify_all();
    }
    // False when the batches in flight did not drain below the window in time.
    bool acquire(Clock::time_point deadline) {
        std::unique_lock lock(mu);
        if (!cv.wait_until(lock, deadline, [&] { return in_flight < kResyncWindow; })) return false;
        ++in_flight;
        return true;
    }
};

// One batch of missed runs, read from the local copy and sent under
// issue_mu: a newer write to the same bytes is sent after it and wins. The
// batch counts as one of the member's flushes (its frontier stays where it
// is), so flush_member waits for it and a failure adds it back to `missed`.
Result<void> send_batch(Replicator::Impl& impl, std::size_t i, std::uint64_t epoch,
                        std::span<const replication::Span> batch, std::uint64_t batch_bytes,
                        const std::shared_ptr<Window>& window, Clock::duration patience) {
    if (!window->acquire(Clock::now() + patience))
        return Error(errc::io_error, "replica " + impl.replicas[i].spec.uri + ": resync batches did not complete");
    std::lock_guard issue(impl.issue_mu);
    std::vector<WriteSlice> slices;
    slices.reserve(batch.size());
    for (const auto& s : batch) slices.push_back({s.offset, impl.local->bytes().subspan(s.offset, s.length)});
    auto staged = replication::stage(slices);
    std::optional<RemoteRegion> r;
    std::uint64_t id = 0;
    {
        std::lock_guard lock(impl.mu);
        Member& m = impl.replicas[i];
        if (m.epoch != epoch || m.state == ReplicaState::failed || !m.region) {
            window->release();
            return Error(errc::io_error, "the member failed during resync");
        }
        replication::PendingFlush pf{impl.next_flush_id++, m.frontier, 1,
                                     replication::IntervalSet(replication::kFlushMergeGap)};
        for (const auto& s : batch) pf.ranges.add(s.offset, s.length);
        id = pf.id;
        m.flushes.push_back(std::move(pf));
        if (m.outstanding++ == 0) m.last_progress = Clock::now();
        m.bytes_resynced += batch_bytes;
        r = m.region;
    }
    r->persist(std::span<const WriteSlice>(staged->slices), [&impl, i, epoch, id, staged, window](Result<void> done) {
        impl.on_flush_done(i, epoch, id, std::move(done));
        window->release();
    });
    return {};
}

} // namespace

Result<void> Replicator::Impl::copy_missed(std::size_t i, std::uint64_t epoch, const replication::LineSet& missed) {
    const std::uint64_t end = local->bytes().size();
    const auto patience = opts.failure_timeout + dial_timeout();
    auto window = std::make_shared<Window>();
    std::vector<replication::Span> batch;
    std::uint64_t batch_bytes = 0;
    auto send = [&]() -> Result<void> {
        auto r = send_batch(*this, i, epoch, batch, batch_bytes, window, patience);
        batch.clear();
        batch_bytes = 0;
        return r;
    };
    for (auto s : missed.spans()) {
        if (s.offset >= end) break;
        s.length = std::min(s.length, end - s.offset);  // the last line may reach past the region
        while (s.length > 0) {
            const std::uint64_t n = std::min<std::uint64_t>(s.length, replication::kResyncChunk - batch_bytes);
            batch.push_back({s.offset, n});
            batch_bytes += n;
            s.offset += n;
            s.length -= n;
            if (batch.size() == kMaxPersistSlices || batch_bytes == replication::kResyncChunk)
                if (auto r = send(); !r) return r;
        }
    }
    if (!batch.empty()) return send();
    return {};
}

} // namespace rpm
