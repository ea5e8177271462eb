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
    if (opts.fencing_term != 0) ro.term = opts.fencing_term;
    auto region = conn->open_region(spec.region, ro);
    if (!region) return Error(region.error().code(), spec.uri + " region " + spec.region + ": " + region.error().detail());
    if (region->size() < local->size())
        return Error(errc::bad_size, spec.uri + " region " + spec.region + " has " + std::to_string(region->size()) +
                                         " bytes, the local region " + std::to_string(local->size()));
    std::vector<std::byte> page(replication::kHeaderBytes);
    if (auto ec = region->read(0, page)) return Error(ec, spec.uri + ": reading the replica header");
    auto h = replication::decode_header(page);
    return Dialed{std::move(*conn), *region, h};
}

bool Replicator::Impl::install(std::size_t i, Dialed d, replication::LineSet& missed) {
    // Called with issue_mu held: no write slips between taking the missed
    // set and the member starting to receive new writes.
    std::lock_guard lock(mu);
    Member& m = replicas[i];
    const bool same = d.header.valid && d.header.h.group == header.group && d.header.h.term == header.term;
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
    return full;
}

Result<void> Replicator::Impl::reconnect(std::size_t i) {
    ReplicaSpec spec;
    {
        std::lock_guard lock(mu);
        spec = replicas[i].spec;
    }
    auto d = dial(spec);
    if (!d) return d.error();
    if (d->header.valid && d->header.h.group != header.group && !opts.adopt_foreign)
        return Error(errc::bad_config, spec.uri + " region " + spec.region + " holds another group's data");
    replication::LineSet missed;
    bool full = false;
    {
        std::lock_guard issue(issue_mu);
        full = install(i, std::move(*d), missed);
        std::lock_guard lock(mu);
        events.push_back({ReplicaEvent::Kind::catching_up, i, spec.uri, {}, replicas[i].frontier, {}});
    }
    return resync(i, full, missed, ReplicaEvent::Kind::rejoined);
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
            if (fenced || m.dialing || m.state != ReplicaState::failed || m.needs_close || m.conn ||
                now - m.last_attempt < opts.reconnect_interval)
                continue;
            m.last_attempt = now;
            if (serial_dials) {
                lock.unlock();
                attempt(m.index);
                lock.lock();
                continue;
            }
            m.dialing = true;
            // The previous attempt has ended (it cleared `dialing`); its
            // thread is at most returning.
            std::thread done = std::move(m.dialer);
            lock.unlock();
            if (done.joinable()) done.join();
            std::thread t;
            try {
                t = std::thread([this, i = m.index] { attempt(i); });
            } catch (const std::system_error&) {
                // No thread to be had now (a limit): the next tick tries again.
            }
            lock.lock();
            // (The attempt may have ended already and cleared `dialing`.)
            if (!t.joinable()) m.dialing = false;
            m.dialer = std::move(t);
        }
    }
}

void Replicator::Impl::attempt(std::size_t i) {
    auto r = reconnect(i);
    std::lock_guard l(mu);
    Member& m = replicas[i];
    m.dialing = false;
    if (r) return;
    m.last_error = r.error();
    m.last_attempt = Clock::now();
    if (r.error() == errc::fenced && !fenced) {
        fenced = r.error();
        wake_waiters();
    }
    // A resync that broke off: the member fails again (an event), and its
    // connection is closed by the monitor.
    if (m.state != ReplicaState::failed) fail_locked(m, r.error());
}

} // namespace rpm
