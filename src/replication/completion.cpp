// Completions from the members' I/O threads: they move frontiers and fail
// members. Everything here holds mu; user callbacks run after it is released.
#include "replication/impl.hpp"
#include "replication/quorum.hpp"

#include <algorithm>

namespace rpm {

using replication::Member;

void Replicator::Impl::progress_locked(Member& m) {
    if (m.outstanding > 0) --m.outstanding;
    m.last_progress = Clock::now();
}

void Replicator::Impl::on_write_done(std::size_t i, std::uint64_t epoch, Result<void> r) {
    std::vector<std::pair<Frontier, Lsn>> notes;
    {
        std::lock_guard lock(mu);
        Member& m = replicas[i];
        if (m.epoch != epoch) return;  // a completion from before the member failed
        progress_locked(m);
        if (r) return;
        fail_locked(m, r.error().with_context("replica " + m.spec.uri + ": a write failed"));
        recompute_locked(notes);
    }
    notify(notes);
}

void Replicator::Impl::on_flush_done(std::size_t i, std::uint64_t epoch, std::uint64_t flush_id,
                                     Result<void> r) {
    std::vector<std::pair<Frontier, Lsn>> notes;
    bool syncing = false;
    {
        std::lock_guard lock(mu);
        Member& m = replicas[i];
        if (m.epoch != epoch) return;
        progress_locked(m);
        syncing = m.state == ReplicaState::syncing;  // its resync waits for its flushes (flush_member)
        if (!r) {
            fail_locked(m, r.error().with_context("replica " + m.spec.uri + ": a flush failed"));
        } else {
            // Flushes are queued in id order: found by bisection. A slow
            // member holds thousands (every commit adds one while it lags),
            // and a scan per answer made each burst of its answers cost
            // the square of that under mu: seconds in which no commit
            // completed (tools/bench/faults, 30% loss on one replica).
            const auto f = std::lower_bound(m.flushes.begin(), m.flushes.end(), flush_id,
                                            [](const auto& p, std::uint64_t id) { return p.id < id; });
            if (f != m.flushes.end() && f->id == flush_id && f->remaining > 0 && --f->remaining == 0 &&
                m.state == ReplicaState::live)
                m.round_trips.add(m.last_progress - f->sent);
            // Flushes may answer out of order across ranges; the frontier
            // moves only past a prefix of whole flushes.
            while (!m.flushes.empty() && m.flushes.front().remaining == 0) {
                m.frontier = std::max(m.frontier, m.flushes.front().lsn);
                m.flushes.pop_front();
            }
        }
        recompute_locked(notes);
    }
    // Wake waiters only when a frontier moved (a failure notifies in
    // fail_locked) or a resync waits: a commit's caller wakes once, when
    // its quorum holds, not on every member's answer.
    if (!notes.empty() || syncing) wake_waiters();
    notify(notes);
}

void Replicator::Impl::on_heartbeat_done(std::size_t i, std::uint64_t epoch, Clock::time_point sent,
                                         Result<void> r) {
    {
        std::lock_guard lock(mu);
        Member& m = replicas[i];
        if (m.epoch == epoch && r && m.state == ReplicaState::live) m.round_trips.add(Clock::now() - sent);
    }
    on_write_done(i, epoch, std::move(r));
}

std::chrono::microseconds Replicator::Impl::degraded_round_trip() const {
    if (opts.degraded_round_trip.count() > 0) return opts.degraded_round_trip;
    return std::max<std::chrono::microseconds>(opts.failure_timeout / 10, std::chrono::milliseconds(1));
}

void Replicator::Impl::check_degraded_locked(Member& m) {
    // A few answers are no pattern: one retransmission is not a bad link.
    constexpr std::size_t kEnough = 8;
    const auto rt = m.round_trips.summary();
    const bool slow = m.state == ReplicaState::live && rt.samples >= kEnough && rt.p90 > degraded_round_trip();
    if (slow == m.degraded) return;
    m.degraded = slow;
    if (m.state != ReplicaState::live) return;  // it left or is catching up: those events say it
    if (slow) ++m.degradations;
    const auto ms = [](std::chrono::microseconds d) {
        return std::to_string(d.count() / 1000) + "." + std::to_string(d.count() % 1000 / 100) + " ms";
    };
    ReplicaEvent e{slow ? ReplicaEvent::Kind::degraded : ReplicaEvent::Kind::healthy, m.index, m.spec.uri, {}, m.frontier, {}};
    e.detail = "round trips of its last " + std::to_string(rt.samples) + " answers: p50 " + ms(rt.p50) + ", p90 " +
               ms(rt.p90) + ", max " + ms(rt.max) + " (degraded past a p90 of " + ms(degraded_round_trip()) + ")";
    events.push_back(std::move(e));
}

void Replicator::Impl::fail_locked(Member& m, Error why) {
    if (why == errc::fenced && !fenced) fenced = why;
    if (m.state == ReplicaState::failed) return;
    // Everything not confirmed flushed must be sent again when it returns.
    m.missed.add(m.dirty);
    for (const auto& f : m.flushes) {
        m.missed.add(f.ranges);
        if (f.batch)
            for (const auto& p : f.batch->pieces) m.missed.add(p.offset, p.length);
    }
    m.dirty.clear();
    m.flushes.clear();
    m.state = ReplicaState::failed;
    ++m.epoch;
    m.outstanding = 0;
    ++m.failures;
    m.last_error = why;
    m.needs_close = true;
    m.last_attempt = Clock::now();
    m.round_trips.clear();
    m.degraded = false;  // the left event says more
    events.push_back({ReplicaEvent::Kind::left, m.index, m.spec.uri, std::move(why), m.frontier, {}});
    wake_waiters();
    watch_cv.notify_all();
}

std::optional<Error> Replicator::Impl::fenced_error() const {
    std::lock_guard lock(mu);
    return fenced;
}

unsigned Replicator::Impl::counted_live_locked() const {
    unsigned n = opts.durability.include_local ? 1 : 0;
    for (const auto& m : replicas)
        if (m.state == ReplicaState::live) ++n;
    return n;
}

void Replicator::Impl::recompute_locked(std::vector<std::pair<Frontier, Lsn>>& notes) {
    std::vector<Lsn> counted;
    if (opts.durability.include_local) counted.push_back(local_frontier);
    Lsn all = local_frontier;
    for (const auto& m : replicas) {
        if (m.state != ReplicaState::live) continue;
        counted.push_back(m.frontier);
        all = std::min(all, m.frontier);
    }
    // Frontiers never move back: a member leaving does not undo what a
    // quorum already held.
    const Lsn quorum = replication::kth_frontier(std::move(counted), needed);
    if (quorum > quorum_frontier) {
        quorum_frontier = quorum;
        notes.emplace_back(Frontier::quorum, quorum);
    }
    if (all > all_frontier && counted_live_locked() == members) {
        all_frontier = all;
        notes.emplace_back(Frontier::all, all);
    }
}

void Replicator::Impl::notify(const std::vector<std::pair<Frontier, Lsn>>& notes) {
    if (!opts.on_progress) return;
    for (const auto& [f, lsn] : notes) opts.on_progress(f, lsn);
}

} // namespace rpm
