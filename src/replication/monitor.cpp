// The threads that watch members. The monitor fails members that stop
// answering, closes their connections, sends heartbeats and delivers
// events; the syncer starts, for each failed member whose turn has come, an
// attempt on that member's own dialer thread, which reconnects it and
// catches it up. They are separate so a slow connect never delays failure
// detection, and one member's dial never delays another's rejoin (a
// black-holed replica's connect lasts the whole dial timeout).
#include "replication/impl.hpp"

#include <algorithm>
#include <system_error>

namespace rpm {

using replication::Member;

std::chrono::milliseconds Replicator::Impl::dial_timeout() const {
    if (opts.dial_timeout.count() > 0) return opts.dial_timeout;
    return std::max<std::chrono::milliseconds>(2 * opts.failure_timeout, std::chrono::seconds(1));
}

Result<Replicator::Impl::Dialed> Replicator::Impl::dial(const ReplicaSpec& spec) const {
    ClientOptions client = spec.client;
    if (!client.io_group) client.io_group = io_group;
    client.timeout = dial_timeout();
    auto conn = Client(client).connect(spec.uri);
    if (!conn) return conn.error();
    RegionOptions ro = spec.region_options;
    // The one fencing term of the group: Replicator::open refused a
    // ReplicaSpec that set its own.
    ro.fencing_term = opts.fencing_term;
    auto region = conn->open_region(spec.region, ro);
    if (!region) return Error(region.error().code(), spec.uri + " region " + spec.region + ": " + region.error().detail());
    if (region->size() < local->size())
        return Error(errc::bad_size, spec.uri + " region " + spec.region + " has " + std::to_string(region->size()) +
                                         " bytes, the local region " + std::to_string(local->size()));
    std::vector<std::byte> page(replication::kHeaderBytes);
    if (auto r = region->read(0, page); !r.has_value()) return r.error().with_context(spec.uri + ": reading the replica header");
    auto h = replication::decode_header(page);
    return Dialed{std::move(*conn), *region, h};
}

std::optional<bool> Replicator::Impl::install(std::size_t i, Dialed& d, replication::LineSet& missed) {
    // Called with issue_mu held: no write slips between taking the missed
    // set and the member starting to receive new writes.
    std::lock_guard lock(mu);
    Member& m = replicas[i];
    // Connected by an earlier attempt, or failed again and its connection
    // not yet closed by the monitor: this attempt is not needed.
    if (stopping || m.state != ReplicaState::failed || m.conn || m.needs_close) return std::nullopt;
    const bool same = d.header.valid && d.header.h.group == header.group && d.header.h.generation == header.generation;
    const bool full = m.full_resync || !same;
    m.conn.emplace(std::move(d.conn));
    m.region.emplace(d.region);
    ++m.epoch;
    m.state = ReplicaState::syncing;
    m.dirty.clear();
    m.flushes.clear();
    m.outstanding = 0;
    m.needs_close = false;
    m.last_progress = Clock::now();
    m.round_trips.clear();
    m.degraded = false;
    missed = std::move(m.missed);
    m.missed.clear();
    // If this resync fails half way, only a full compare is safe next time.
    m.full_resync = true;
    events.push_back({ReplicaEvent::Kind::catching_up, i, m.spec.uri, {}, m.frontier, {}});
    return full;
}

void Replicator::Impl::attempt(std::size_t i, std::size_t slot) {
    ReplicaSpec spec;
    {
        std::lock_guard lock(mu);
        spec = replicas[i].spec;
    }
    auto d = dial(spec);
    if (d && d->header.valid && d->header.h.group != header.group && !opts.adopt_foreign)
        d = Error(errc::bad_config, spec.uri + " region " + spec.region + " holds another group's data");
    if (!d) {
        std::lock_guard lock(mu);
        return attempt_ended_locked(replicas[i], slot, d.error(), 0);
    }
    replication::LineSet missed;
    std::optional<bool> full;
    std::uint64_t epoch = 0;
    {
        std::lock_guard issue(issue_mu);
        full = install(i, *d, missed);
        std::lock_guard lock(mu);
        epoch = replicas[i].epoch;
    }
    if (!full) {
        d->conn.close();  // outside the locks: closing joins its I/O
        std::lock_guard lock(mu);
        return attempt_ended_locked(replicas[i], slot, Error(), 0);
    }
    auto r = resync(i, *full, missed, ReplicaEvent::Kind::rejoined);
    std::lock_guard lock(mu);
    attempt_ended_locked(replicas[i], slot, r ? Error() : r.error(), epoch);
}

void Replicator::Impl::attempt_ended_locked(Member& m, std::size_t slot, const Error& why, std::uint64_t epoch) {
    m.dialing[slot] = false;
    if (!why.code()) return;
    if (why == errc::fenced && !fenced) {
        fenced = why;
        wake_waiters();
    }
    if (epoch == 0) {
        // Its dial failed: what to show while the member is away (an
        // attempt that connected may have made it live meanwhile).
        if (m.state == ReplicaState::failed) m.last_error = why, m.last_attempt = Clock::now();
        return;
    }
    // Its resync broke off: the member fails again (an event), and its
    // connection is closed by the monitor; unless it already failed since.
    if (m.epoch == epoch && m.state != ReplicaState::failed) fail_locked(m, why);
}

void Replicator::Impl::start_threads() {
    monitor = std::thread([this] { monitor_loop(); });
    syncer = std::thread([this] { syncer_loop(); });
}

namespace {

std::chrono::milliseconds tick(const ReplicatorOptions& o) {
    auto t = std::min({o.heartbeat_interval, o.failure_timeout / 4, o.reconnect_interval});
    return std::max(t, std::chrono::milliseconds(1));
}

} // namespace

void Replicator::Impl::monitor_loop() {
    std::unique_lock lock(mu);
    auto last_tick = Clock::now();
    while (!stopping) {
        watch_cv.wait_for(lock, tick(opts));
        if (stopping) break;
        const auto now = Clock::now();
        if (now - last_tick > opts.failure_timeout / 2) {
            // This process did not run for a while (SIGSTOP, a VM paused,
            // starved): silence measured across our own pause says nothing
            // of the replicas, and their answers (a goodbye, say) may be
            // waiting in the sockets. Each gets a whole failure_timeout from
            // now.
            for (auto& m : replicas) m.last_progress = std::max(m.last_progress, now);
        }
        last_tick = now;
        std::vector<Connection> to_close;
        std::vector<std::pair<Frontier, Lsn>> notes;
        std::vector<std::size_t> beats;
        for (auto& m : replicas) {
            if (m.state != ReplicaState::failed && m.outstanding > 0 && now - m.last_progress > opts.failure_timeout) {
                fail_locked(m, Error(errc::io_error, "replica " + m.spec.uri + ": no answer within " +
                                                         std::to_string(opts.failure_timeout.count()) + " ms"));
                recompute_locked(notes);
            }
            if (m.needs_close) {
                if (m.conn) to_close.push_back(std::move(*m.conn));
                m.conn.reset();
                m.region.reset();
                m.needs_close = false;
            }
            check_degraded_locked(m);
            if (m.state == ReplicaState::live && m.outstanding == 0 && now - m.last_heartbeat >= opts.heartbeat_interval)
                beats.push_back(m.index);
        }
        auto evs = std::move(events);
        events.clear();
        lock.unlock();
        // Outside mu: closing joins the connection's I/O thread, whose
        // completions take mu.
        for (auto& c : to_close) c.close();
        to_close.clear();
        notify(notes);
        if (opts.on_event)
            for (const auto& e : evs) opts.on_event(e);
        for (auto i : beats) {
            std::lock_guard issue(issue_mu);
            send_heartbeat(i);
        }
        lock.lock();
    }
}

void Replicator::Impl::syncer_loop() {
    std::unique_lock lock(mu);
    while (!stopping) {
        watch_cv.wait_for(lock, tick(opts));
        if (stopping) break;
        const auto now = Clock::now();
        for (auto& m : replicas) {
            // A fenced primary stops dialling: every replica would refuse it.
            if (fenced || m.state != ReplicaState::failed || m.needs_close || m.conn ||
                now - m.last_attempt < attempt_spacing(m))
                continue;
            start_attempt(lock, m);
        }
    }
}

Clock::duration Replicator::Impl::attempt_spacing(const Member& m) const {
    const auto in_flight = std::count(m.dialing.begin(), m.dialing.end(), true);
    if (in_flight == 0) return opts.reconnect_interval;
    if (one_dial) return Clock::duration::max();  // the planted fault: wait for the attempt in flight
    // kMaxDials slots cover one dial timeout: a member reachable again has
    // an attempt begun within this of its return.
    return std::max<Clock::duration>(opts.reconnect_interval, dial_timeout() / Member::kMaxDials);
}

void Replicator::Impl::start_attempt(std::unique_lock<std::mutex>& lock, Member& m) {
    const auto free = std::find(m.dialing.begin(), m.dialing.end(), false);
    if (free == m.dialing.end()) return;  // kMaxDials in flight: the oldest ends within dial_timeout
    const auto slot = static_cast<std::size_t>(free - m.dialing.begin());
    m.last_attempt = Clock::now();
    m.dialing[slot] = true;
    lock.unlock();
    if (serial_dials) {
        attempt(m.index, slot);  // the planted fault: on this thread, one member after another
        return lock.lock();
    }
    // The slot's previous attempt has ended (it freed the slot); its
    // thread is at most returning.
    if (m.dialers[slot].joinable()) m.dialers[slot].join();
    std::thread t;
    try {
        t = std::thread([this, i = m.index, slot] { attempt(i, slot); });
    } catch (const std::system_error&) {
        // No thread to be had now (a limit): a later tick tries again.
    }
    lock.lock();
    if (!t.joinable()) m.dialing[slot] = false;
    m.dialers[slot] = std::move(t);
}

} // namespace rpm
