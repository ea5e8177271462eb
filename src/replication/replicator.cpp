// rpm::Replicator: the public calls. open() assembles the Impl; the data
// path is in issue.cpp, completions in completion.cpp, the watchers in
// monitor.cpp.
#include "replication/impl.hpp"
#include "core/fault.hpp"
#include "core/longest_wait.hpp"
#include "replication/quorum.hpp"

#include <algorithm>
#include <array>
#include <cstring>

namespace rpm {

Replicator::Impl::~Impl() {
    {
        std::lock_guard lock(mu);
        stopping = true;
    }
    wake_waiters();
    watch_cv.notify_all();
    if (monitor.joinable()) monitor.join();
    if (syncer.joinable()) syncer.join();
    // A dial in progress ends within the dial timeout; no new one starts.
    for (auto& m : replicas)
        for (auto& t : m.dialers)
            if (t.joinable()) t.join();
    // close() returns once the member's pending operations have called
    // back, on either transport: after this no completion touches the
    // Impl. (Over rdma:// it used to leave them to the I/O thread, and the
    // flush a majority commit leaves outstanding on the slowest member
    // called back into a destroyed Member: a SIGSEGV in IntervalSet::add,
    // rpm-bench --replication in the lab, 1 run in 10 in busy mode.)
    for (auto& m : replicas)
        if (m.conn) m.conn->close();
}

namespace {

// The group has one fencing term, ReplicatorOptions::fencing_term. One set
// on a replica too would either be overridden in silence or fence that
// replica alone with another token: both hide a mistake, so it is refused.
Result<void> one_fencing_term(const ReplicatorOptions& o) {
    for (std::size_t i = 0; i < o.replicas.size(); ++i)
        if (o.replicas[i].region_options.fencing_term != 0)
            return Error(errc::invalid_argument,
                         "replica " + std::to_string(i) + " (" + o.replicas[i].uri +
                             ") sets region_options.fencing_term; set ReplicatorOptions::fencing_term instead, "
                             "the one fencing term of every replica");
    return {};
}

// Every interval and timeout at most detail::kLongestWait (its comment).
void cap_waits(ReplicatorOptions& o) noexcept {
    o.heartbeat_interval = detail::capped_wait(o.heartbeat_interval);
    o.failure_timeout = detail::capped_wait(o.failure_timeout);
    o.reconnect_interval = detail::capped_wait(o.reconnect_interval);
    o.dial_timeout = detail::capped_wait(o.dial_timeout);
    o.degraded_round_trip = detail::capped_wait(o.degraded_round_trip);
    for (auto& r : o.replicas) r.client.timeout = detail::capped_wait(r.client.timeout);
}

} // namespace

Replicator::Replicator(std::shared_ptr<Impl> impl) noexcept : impl_(std::move(impl)) {}
Replicator::Replicator(Replicator&&) noexcept = default;
Replicator& Replicator::operator=(Replicator&&) noexcept = default;
Replicator::~Replicator() = default;

Result<Replicator> Replicator::open(ReplicatorOptions opts) {
    auto impl = std::make_shared<Impl>();
    impl->opts = std::move(opts);
    cap_waits(impl->opts);
    impl->serial_dials = fault_planted("serial-dials");
    impl->one_dial = fault_planted("one-dial");
    const auto& o = impl->opts;
    if (o.heartbeat_interval.count() <= 0 || o.failure_timeout.count() <= 0 || o.reconnect_interval.count() <= 0)
        return Error(errc::invalid_argument, "heartbeat_interval, failure_timeout and reconnect_interval must be positive");
    if (o.dial_timeout.count() < 0)
        return Error(errc::invalid_argument, "dial_timeout must not be negative (0 = twice failure_timeout)");
    if (o.degraded_round_trip.count() < 0)
        return Error(errc::invalid_argument, "degraded_round_trip must not be negative (0 = failure_timeout / 10)");
    if (auto one = one_fencing_term(o); !one) return one.error();
    impl->members = static_cast<unsigned>(o.replicas.size()) + (o.durability.include_local ? 1 : 0);
    auto needed = replication::needed_members(o.durability, impl->members);
    if (!needed) return needed.error();
    impl->needed = *needed;
    if (auto r = impl->open_local(); !r) return r.error();
    std::string unreachable;
    if (auto r = impl->connect_all(unreachable); !r) return r.error();
    if (auto r = impl->recover(unreachable); !r) return r.error();
    for (std::size_t i = 0; i < impl->replicas.size(); ++i) {
        if (!impl->replicas[i].region) continue;
        if (auto r = impl->resync(i, true, replication::LineSet(), ReplicaEvent::Kind::joined); !r) {
            std::lock_guard lock(impl->mu);
            impl->fail_locked(impl->replicas[i], r.error());
        }
    }
    // Members that were not reachable are failed from the start (a left
    // event says why); the syncer will try them.
    std::deque<ReplicaEvent> at_open;
    {
        std::lock_guard lock(impl->mu);
        for (auto& m : impl->replicas) {
            if (m.region) continue;
            m.state = ReplicaState::failed;
            impl->events.push_back({ReplicaEvent::Kind::left, m.index, m.spec.uri, m.last_error, m.frontier, {}});
            m.last_attempt = Clock::now();
        }
        at_open = std::move(impl->events);
        impl->events.clear();
    }
    // What open() found is told before it returns, on the caller's thread
    // (ReplicatorOptions::on_event): a caller sees every member's joined or
    // left before its first write.
    if (impl->opts.on_event)
        for (const auto& e : at_open) impl->opts.on_event(e);
    impl->start_threads();
    return Replicator(std::move(impl));
}

Result<Lsn> Replicator::write(std::uint64_t offset, std::span<const std::byte> data) {
    auto& d = impl_->data;
    if (offset > d.size() || data.size() > d.size() - offset)
        return Error(errc::invalid_argument, "write of " + std::to_string(data.size()) + " bytes at " +
                                                 std::to_string(offset) + " is outside the data area (" +
                                                 std::to_string(d.size()) + " bytes)");
    if (auto f = impl_->fenced_error()) return *f;
    std::lock_guard issue(impl_->issue_mu);
    impl_->extend_high_water(offset + data.size());
    return impl_->write_region(kReplicaHeaderSize + offset, data, false);
}

Result<Lsn> Replicator::atomic_write(std::uint64_t offset, std::uint64_t value) {
    if (offset % 8 != 0) return Error(errc::invalid_argument, "atomic_write offset " + std::to_string(offset) + " is not 8-byte aligned");
    if (offset > impl_->data.size() || impl_->data.size() - offset < 8)
        return Error(errc::invalid_argument, "atomic_write at " + std::to_string(offset) + " is outside the data area");
    std::byte raw[8];
    std::memcpy(raw, &value, 8);
    if (auto f = impl_->fenced_error()) return *f;
    std::lock_guard issue(impl_->issue_mu);
    impl_->extend_high_water(offset + 8);
    return impl_->write_region(kReplicaHeaderSize + offset, raw, true);
}

Result<Lsn> Replicator::commit() {
    if (auto f = impl_->fenced_error()) return *f;
    // rdma:// members' completions are polled here; the tcp:// ones' I/O
    // group is driven only when no rdma:// member is held (the driver of
    // the group must read its sockets, which a poller of CQs does not).
    auto holds = impl_->hold_members();
    auto drive = holds.empty() ? impl_->io_group->try_drive() : std::nullopt;
    Lsn target = 0;
    {
        std::lock_guard issue(impl_->issue_mu);
        target = impl_->issue_flushes();
    }
    return impl_->wait_quorum(target, drive ? &*drive : nullptr, &holds);
}

Result<Lsn> Replicator::persist(std::uint64_t offset, std::span<const std::byte> data) {
    const WriteSlice one{offset, data};
    return persist(std::span<const WriteSlice>(&one, 1));
}

Result<Lsn> Replicator::persist(std::span<const WriteSlice> slices) {
    auto& d = impl_->data;
    if (slices.empty() || slices.size() > kMaxPersistSlices)
        return Error(errc::invalid_argument, "a persist takes 1 to " + std::to_string(kMaxPersistSlices) + " slices, not " +
                                                 std::to_string(slices.size()));
    std::uint64_t end = 0;
    for (const auto& s : slices) {
        if (s.offset > d.size() || s.data.size() > d.size() - s.offset)
            return Error(errc::invalid_argument, "write of " + std::to_string(s.data.size()) + " bytes at " +
                                                     std::to_string(s.offset) + " is outside the data area (" +
                                                     std::to_string(d.size()) + " bytes)");
        end = std::max<std::uint64_t>(end, s.offset + s.data.size());
    }
    // Region offsets: the data area starts after the replica header.
    std::array<WriteSlice, 8> small{};
    std::vector<WriteSlice> large;
    std::span<WriteSlice> at = small;
    if (slices.size() > small.size()) large.resize(slices.size()), at = large;
    at = at.first(slices.size());
    for (std::size_t i = 0; i < slices.size(); ++i) at[i] = {kReplicaHeaderSize + slices[i].offset, slices[i].data};
    if (auto f = impl_->fenced_error()) return *f;
    auto holds = impl_->hold_members();  // as in commit()
    auto drive = holds.empty() ? impl_->io_group->try_drive() : std::nullopt;
    Lsn target = 0;
    {
        std::lock_guard issue(impl_->issue_mu);
        impl_->extend_high_water(end);
        // One persist request per member, unless some member still has
        // writes that no flush covered (write() without commit(), or the
        // high-water mark just moved): then writes and the flushes of all.
        if (impl_->nothing_unflushed()) {
            target = impl_->persist_slices(at);
        } else {
            for (const auto& s : at)
                if (auto w = impl_->write_region(s.offset, s.data, s.data.size() == 8 && s.offset % 8 == 0); !w) return w;
            target = impl_->issue_flushes();
        }
    }
    return impl_->wait_quorum(target, drive ? &*drive : nullptr, &holds);
}

Lsn Replicator::frontier(Frontier f) const noexcept {
    std::lock_guard lock(impl_->mu);
    switch (f) {
    case Frontier::local: return impl_->local_frontier;
    case Frontier::quorum: return impl_->quorum_frontier;
    case Frontier::all: return impl_->all_frontier;
    }
    return 0;
}

Lsn Replicator::last_lsn() const noexcept { return impl_->last_lsn.load(); }

Result<void> Replicator::wait(Frontier f, Lsn lsn, std::chrono::milliseconds timeout) {
    auto& s = *impl_;
    std::unique_lock lock(s.mu);
    auto value = [&] { return f == Frontier::local ? s.local_frontier : f == Frontier::quorum ? s.quorum_frontier : s.all_frontier; };
    auto blocked = [&] {
        if (f == Frontier::local) return false;
        if (s.fenced) return true;  // a newer primary owns the replicas: nothing more will count
        const unsigned live = s.counted_live_locked();
        return f == Frontier::quorum ? live < s.needed : live < s.members;
    };
    const bool ok = s.cv.wait_for(lock, detail::capped_wait(timeout), [&] { return value() >= lsn || blocked(); });
    if (value() >= lsn) return {};
    if (ok && s.fenced) return Error(s.fenced->code(), std::string("frontier ") + std::string(to_string(f)) +
                                                           " cannot reach LSN " + std::to_string(lsn) + ": " +
                                                           s.fenced->message());
    if (ok) return Error(errc::quorum_lost, std::string("frontier ") + std::string(to_string(f)) + " cannot reach LSN " +
                                                std::to_string(lsn) + " with the members now live");
    return Error(errc::io_error, std::string("frontier ") + std::string(to_string(f)) + " did not reach LSN " +
                                     std::to_string(lsn) + " in time");
}

std::span<const std::byte> Replicator::data() const noexcept { return impl_->data; }
std::size_t Replicator::size() const noexcept { return impl_->data.size(); }
const Durability& Replicator::durability() const noexcept { return impl_->opts.durability; }
unsigned Replicator::members() const noexcept { return impl_->members; }
unsigned Replicator::needed() const noexcept { return impl_->needed; }
std::uint64_t Replicator::generation() const noexcept { return impl_->header.generation; }

std::vector<ReplicaStatus> Replicator::replicas() const {
    std::lock_guard lock(impl_->mu);
    std::vector<ReplicaStatus> out;
    for (const auto& m : impl_->replicas) {
        ReplicaStatus s;
        s.uri = m.spec.uri;
        s.state = m.state;
        s.frontier = m.frontier;
        s.position_at_open = m.position_at_open;
        if (m.region) s.method = m.region->method();
        if (m.conn) {
            const auto a = m.conn->atomic_write_stats();
            s.atomic_write = a.kind;
            s.native_atomic_writes = a.native_completed;
        }
        s.failures = m.failures;
        s.resyncs = m.resyncs;
        s.bytes_resynced = m.bytes_resynced;
        s.bytes_missed = m.bytes_missed;
        const auto rt = m.round_trips.summary();
        s.round_trip_p50 = rt.p50, s.round_trip_p90 = rt.p90, s.round_trip_max = rt.max;
        s.round_trip_samples = rt.samples;
        s.degraded = m.degraded;
        s.degradations = m.degradations;
        const Lsn last = impl_->last_lsn.load();
        s.lag = last - std::min(last, m.frontier);
        s.lag_bytes = m.behind_bytes();
        s.last_error = m.last_error;
        out.push_back(std::move(s));
    }
    return out;
}

} // namespace rpm
