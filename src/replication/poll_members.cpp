// The committing thread polls its rdma:// members' completion queues
// itself while it waits for a quorum, as it reads its tcp:// members'
// sockets through the I/O group (IoGroup::Drive): their answers are
// handled where they are awaited, instead of each member's I/O thread
// handing its completion over through a wake-up (docs/benchmarks-history.md,
// "Replication over rdma:// in the lab": seven threads wanting two CPUs).
#include "client/connection_state.hpp"
#include "core/adaptive_spin.hpp"
#include "replication/impl.hpp"

#include <cerrno>
#include <cstdint>
#include <poll.h>

namespace rpm {

namespace {

// How long the committer spins on its members' queues after the last
// completion before it sleeps (adaptive). Not kAdaptiveSpinInFlight yet,
// although it waits only while answers are outstanding: with several
// members answering one after the other it would spin through every
// commit, which the replication benchmark has not measured, and the lab's
// kv fault test (four processes on two vCPUs) is where that CPU is missed.
constexpr auto kSpin = kAdaptiveSpin;
// Clock reads are rationed: in the lab VM each one is a system call.
constexpr unsigned kClockEvery = 16;

} // namespace

replication::Holds Replicator::Impl::hold_members() {
    // The states, not the transports: a member's connection may be replaced
    // meanwhile, and its state keeps the transport alive. A hold is taken
    // without mu: the member's I/O thread may be in a callback that takes it.
    std::vector<std::shared_ptr<detail::ConnectionState>> states;
    {
        std::lock_guard lock(mu);
        for (auto& m : replicas)
            if (m.conn && m.state == ReplicaState::live) states.push_back(detail::ConnectionAccess::state(*m.conn));
    }
    replication::Holds holds;
    for (auto& s : states)
        if (auto h = s->transport->hold_polling()) holds.push_back(std::move(h));
    return holds;
}

bool Replicator::Impl::poll_until(replication::Holds& holds, const std::function<bool()>& done,
                                  Clock::time_point deadline) {
    const CompletionMode mode = replicas.empty() ? CompletionMode::adaptive : replicas.front().spec.client.completion;
    auto last_work = Clock::now();
    std::vector<pollfd> fds;
    std::vector<int> raw;
    for (unsigned spins = 1;; ++spins) {
        if (done()) return true;
        std::size_t n = 0;
        for (auto& h : holds) n += h->poll(false);
        if (n > 0) {
            last_work = Clock::now();
            continue;
        }
        if (mode != CompletionMode::event && spins % kClockEvery != 0) continue;
        const auto now = Clock::now();
        if (now >= deadline) return false;
        if (mode == CompletionMode::busy || (mode == CompletionMode::adaptive && now - last_work < kSpin)) continue;
        // Asleep until a member's completion channel or connection, or a
        // completion elsewhere (wake_waiters), says so.
        raw.clear();
        for (auto& h : holds) h->fds(raw);
        fds.clear();
        for (int fd : raw) fds.push_back({fd, POLLIN, 0});
        fds.push_back({poll_wake.fd(), POLLIN, 0});
        poll_wake.set_spinning(false);
        if (done()) {
            poll_wake.set_spinning(true);
            return true;
        }
        const auto ms = std::chrono::ceil<std::chrono::milliseconds>(deadline - now).count();
        int rc = 0;
        do {
            rc = ::poll(fds.data(), fds.size(), static_cast<int>(std::min<long long>(ms, 1000)));
        } while (rc < 0 && errno == EINTR);
        poll_wake.set_spinning(true);
        poll_wake.drain();
        for (auto& h : holds) h->poll(true);
        last_work = Clock::now();
    }
}

} // namespace rpm
