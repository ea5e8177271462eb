// Sending to members: writes in LSN order under issue_mu, flushes at
// commit, heartbeats. The local copy is written first, so it always holds
// at least what any replica was sent: it is what a resync copies from.
#include "replication/detail/impl.hpp"

#include <algorithm>
#include <cstring>

namespace rpm {

using replication::Member;

namespace {

struct Target {
    std::size_t index;
    std::uint64_t epoch;
    RemoteRegion region;
};

} // namespace

Result<Lsn> Replicator::Impl::write_region(std::uint64_t region_offset, std::span<const std::byte> bytes,
                                           bool atomic) {
    std::memcpy(local->bytes().data() + region_offset, bytes.data(), bytes.size());
    local->flush(local->bytes().data() + region_offset, bytes.size());
    const Lsn lsn = last_lsn.load(std::memory_order_relaxed) + 1;
    last_lsn.store(lsn, std::memory_order_release);
    // One copy for every member: the caller's buffer may be reused as soon
    // as we return, and RDMA copies into its bounce buffer only when it posts.
    auto staged = std::make_shared<std::vector<std::byte>>(bytes.begin(), bytes.end());
    std::vector<Target> targets;
    {
        std::lock_guard lock(mu);
        for (auto& m : replicas) {
            if (m.state == ReplicaState::failed || !m.region) {
                m.missed.add(region_offset, bytes.size());
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
        auto done = [this, i = t.index, e = t.epoch, staged](std::error_code ec) { on_write_done(i, e, ec); };
        if (atomic)
            t.region.atomic_write(region_offset, value, std::move(done));
        else
            t.region.write(region_offset, std::span<const std::byte>(*staged), std::move(done));
    }
    return lsn;
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

Lsn Replicator::Impl::issue_flushes() {
    const Lsn target = last_lsn.load(std::memory_order_acquire);
    local->drain();
    // The local header's position: where a restarted primary resumes its LSNs.
    std::memcpy(local->bytes().data() + replication::kOffPosition, &target, 8);
    local->persist(local->bytes().data() + replication::kOffPosition, 8);
    std::vector<std::pair<Frontier, Lsn>> notes;
    struct Flush {
        Target t;
        std::uint64_t id;
        std::vector<replication::Span> spans;
    };
    std::vector<Flush> flushes;
    {
        std::lock_guard lock(mu);
        if (target > local_frontier) {
            local_frontier = target;
            notes.emplace_back(Frontier::local, target);
        }
        for (auto& m : replicas) {
            if (m.state == ReplicaState::failed || !m.region) continue;
            if (m.dirty.empty()) {
                // Nothing new since its last flush: that flush (or none)
                // covers everything issued up to target.
                if (m.flushes.empty()) m.frontier = std::max(m.frontier, target);
                else m.flushes.back().lsn = target;
                continue;
            }
            replication::PendingFlush pf{next_flush_id++, target, 0, std::move(m.dirty)};
            m.dirty = replication::IntervalSet(replication::kFlushMergeGap);
            auto spans = pf.ranges.spans();
            pf.remaining = static_cast<unsigned>(spans.size());
            if (m.outstanding == 0) m.last_progress = Clock::now();
            m.outstanding += pf.remaining;
            flushes.push_back({{m.index, m.epoch, *m.region}, pf.id, std::move(spans)});
            m.flushes.push_back(std::move(pf));
        }
        recompute_locked(notes);
    }
    cv.notify_all();
    for (auto& f : flushes) {
        for (const auto& s : f.spans) {
            f.t.region.flush(s.offset, s.length, [this, i = f.t.index, e = f.t.epoch, id = f.id](std::error_code ec) {
                on_flush_done(i, e, id, ec);
            });
        }
    }
    notify(notes);
    return target;
}

bool Replicator::Impl::nothing_unflushed() const {
    std::lock_guard lock(mu);
    for (const auto& m : replicas)
        if (m.state != ReplicaState::failed && m.region && !m.dirty.empty()) return false;
    return true;
}

Lsn Replicator::Impl::persist_region(std::uint64_t region_offset, std::span<const std::byte> bytes) {
    std::memcpy(local->bytes().data() + region_offset, bytes.data(), bytes.size());
    local->flush(local->bytes().data() + region_offset, bytes.size());
    const Lsn lsn = last_lsn.load(std::memory_order_relaxed) + 1;
    last_lsn.store(lsn, std::memory_order_release);
    // The local header's position, then one drain for both.
    std::memcpy(local->bytes().data() + replication::kOffPosition, &lsn, 8);
    local->persist(local->bytes().data() + replication::kOffPosition, 8);
    // One copy for every member: the caller may return (a quorum answered)
    // while a slower member's request still reads it.
    auto staged = std::make_shared<std::vector<std::byte>>(bytes.begin(), bytes.end());
    struct Sent {
        Target t;
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
                m.missed.add(region_offset, bytes.size());
                continue;
            }
            // Its completion moves the frontier like a flush's.
            replication::PendingFlush pf{next_flush_id++, lsn, 1, replication::IntervalSet(replication::kFlushMergeGap)};
            pf.ranges.add(region_offset, bytes.size());
            if (m.outstanding++ == 0) m.last_progress = Clock::now();
            sends.push_back({{m.index, m.epoch, *m.region}, pf.id});
            m.flushes.push_back(std::move(pf));
        }
        recompute_locked(notes);
    }
    for (auto& s : sends) {
        s.t.region.persist(region_offset, std::span<const std::byte>(*staged),
                           [this, i = s.t.index, e = s.t.epoch, id = s.id, staged](std::error_code ec) {
                               on_flush_done(i, e, id, ec);
                           });
    }
    cv.notify_all();  // Replicator::wait(Frontier::local) callers
    notify(notes);
    return lsn;
}

Result<Lsn> Replicator::Impl::wait_quorum(Lsn target) {
    std::unique_lock lock(mu);
    // The failure detector bounds this wait: a member that does not answer
    // within failure_timeout is failed, which either lets the quorum form
    // without it or makes it impossible. The deadline is a second guard.
    const auto deadline = Clock::now() + 4 * opts.failure_timeout + 4 * opts.heartbeat_interval;
    for (;;) {
        if (quorum_frontier >= target) return target;
        const unsigned live = counted_live_locked();
        if (live < needed) {
            std::string last;
            for (const auto& m : replicas)
                if (m.state != ReplicaState::live && m.last_error.code()) last = m.last_error.message();
            return Error(errc::quorum_lost, "commit of LSN " + std::to_string(target) + ": " + std::to_string(live) +
                                                " live members, " + std::to_string(needed) + " needed" +
                                                (last.empty() ? "" : " (last failure: " + last + ")"));
        }
        if (cv.wait_until(lock, deadline) == std::cv_status::timeout && quorum_frontier < target)
            return Error(errc::quorum_lost, "commit of LSN " + std::to_string(target) +
                                                ": no quorum of flushes within the failure timeout");
    }
}

void Replicator::Impl::send_heartbeat(std::size_t i) {
    // A heartbeat records the member's own position in its header and asks
    // for an answer: a member that gives none within failure_timeout fails.
    std::optional<Target> t;
    Lsn position = 0;
    {
        std::lock_guard lock(mu);
        Member& m = replicas[i];
        if (m.state != ReplicaState::live || !m.region || m.outstanding > 0) return;
        m.outstanding += 2;
        m.last_progress = m.last_heartbeat = Clock::now();
        position = m.frontier;
        t = Target{m.index, m.epoch, *m.region};
    }
    auto done = [this, i, e = t->epoch](std::error_code ec) { on_write_done(i, e, ec); };
    t->region.atomic_write(replication::kOffPosition, position, done);
    t->region.flush(replication::kOffPosition, 8, done);
}

} // namespace rpm
