#include "transport/rdma/loop.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

namespace rpm::rdma {

Ready wait_ready(int cq_fd, int event_fd, int wake_fd, int timeout_ms) noexcept {
    std::array<pollfd, 3> fds{pollfd{cq_fd, POLLIN, 0}, pollfd{event_fd, POLLIN, 0}, pollfd{wake_fd, POLLIN, 0}};
    int n = 0;
    do {
        n = ::poll(fds.data(), fds.size(), timeout_ms);
    } while (n < 0 && errno == EINTR);
    Ready r;
    r.timeout = n == 0;
    // A hung-up or failed fd counts as ready: the handler then sees the error.
    const auto hit = [](const pollfd& p) { return p.fd >= 0 && (p.revents & (POLLIN | POLLERR | POLLHUP)) != 0; };
    r.cq = hit(fds[0]);
    r.event = hit(fds[1]);
    r.wake = hit(fds[2]);
    return r;
}

Result<void> set_nonblocking(int fd) {
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
        return Error(errc::io_error, "fcntl(O_NONBLOCK) on a completion channel failed");
    return {};
}

Result<std::size_t> drain_cq(const Api& api, Cq* cq, bool had_event, FunctionRef<void(const ibv_wc&)> fn) {
    if (had_event) {
        // Acknowledges the event and re-arms the CQ before we drain it, so a
        // completion that arrives while draining raises a new event.
        const int ret = api.cq_wait(cq);
        if (ret != 0 && ret != kErrNoCompletion)
            return call_failure(errc::io_error, "completion queue", "cq_wait", ret);
    }
    // Not value-initialised: this runs on every spin of a busy or adaptive
    // wait, where zeroing 768 bytes each time is work for nothing; the
    // provider fills the entries it reports, and only those are read.
    std::array<ibv_wc, 16> wcs;  // NOLINT(cppcoreguidelines-pro-type-member-init)
    std::size_t total = 0;
    for (;;) {
        int got = 0;
        const int ret = api.cq_get_wc(cq, static_cast<int>(wcs.size()), wcs.data(), &got);
        if (ret == kErrNoCompletion) return total;
        if (ret != 0) return call_failure(errc::io_error, "completion queue", "cq_get_wc", ret);
        for (int i = 0; i < got; ++i) fn(wcs[static_cast<std::size_t>(i)]);
        total += static_cast<std::size_t>(got);
        if (got < static_cast<int>(wcs.size())) return total;
    }
}

Ready Waiter::wait(int cq_fd, int event_fd, Wakeup& wake, int timeout_ms, FunctionRef<std::size_t()> drain,
                   bool in_flight, std::chrono::steady_clock::time_point coarse) {
    if (mode_ == CompletionMode::event) {
        if (timeout_ms != 0) ++sleeps_;
        return wait_ready(cq_fd, event_fd, wake.fd(), timeout_ms);
    }
    const bool bounded = timeout_ms >= 0;
    const Clock::duration timeout = bounded ? Clock::duration(std::chrono::milliseconds(timeout_ms))
                                            : Clock::duration::max();
    Clock::time_point now = start_spin(timeout, in_flight, coarse);
    wake.set_spinning(true);
    const Spun spun = spin(cq_fd, event_fd, wake, timeout, drain, now);
    if (spun.over) return spun.r;
    const Clock::duration left = bounded ? time_after(pacer_.began(), timeout) - now : Clock::duration::max();
    return sleep_after_spin(cq_fd, event_fd, wake, bounded, left);
}

Waiter::Clock::time_point Waiter::start_spin(Clock::duration timeout, bool in_flight, Clock::time_point coarse) {
    const std::chrono::microseconds spin_bound = in_flight ? kAdaptiveSpinInFlight : kAdaptiveSpin;
    // How long the spin lasts: adaptive's bound (then it sleeps), or the deadline.
    const Clock::duration spin_length =
        mode_ == CompletionMode::adaptive ? std::min<Clock::duration>(timeout, spin_bound) : timeout;
    // Once the pacer knows the pace, a wait for an operation on the wire
    // starts without reading the precise clock (a system call in the lab
    // VM): its completion almost always comes before the pacer's first
    // read, half of the 1 ms bound in. An idle spin (50 µs; a server
    // session's between requests) reads it at its start, as it would reach
    // that first read anyway, and an unread start never ends at its first
    // read: preempted halfway, it would spin on for another half, on CPUs
    // the peer and rxe need (docs/benchmarks-history.md, "A wait reads no clock").
    if (in_flight && pacer_.knows_pace()) {
        pacer_.start_unread(coarse == Clock::time_point{} ? coarse_now() : coarse, spin_length);
        return {};
    }
    const Clock::time_point now = Clock::now();
    pacer_.start(now, time_after(now, spin_length));
    return now;
}

Waiter::Spun Waiter::spin(int cq_fd, int event_fd, Wakeup& wake, Clock::duration timeout,
                          FunctionRef<std::size_t()> drain, Clock::time_point& now) {
    const bool adaptive = mode_ == CompletionMode::adaptive;
    for (unsigned spins = 1;; ++spins) {
        Ready r;
        if (wake.pending()) r.wake = true;
        if (drain() > 0) r.progress = true;
        if (r.wake || r.progress) return {r, true};
        if (spins % kPollEvery == 0) {
            r = wait_ready(cq_fd, event_fd, wake.fd(), 0);
            r.timeout = false;
            if (r.cq || r.event || r.wake) return {r, true};
        }
        if (!pacer_.tick()) continue;
        now = Clock::now();
        if (!pacer_.passed(now)) continue;
        // The deadline counts from the pacer's start (estimated for an unread one).
        if (!adaptive || now >= time_after(pacer_.began(), timeout)) return {Ready{.timeout = true}, true};
        return {Ready{}, false};
    }
}

Ready Waiter::sleep_after_spin(int cq_fd, int event_fd, Wakeup& wake, bool bounded, Clock::duration left) {
    // Adaptive, nothing within the spin: sleep until the channel, the
    // connection or a notify() wakes us (see Wakeup::notify).
    wake.set_spinning(false);
    if (wake.pending()) {
        wake.set_spinning(true);
        return Ready{.wake = true};
    }
    int ms = -1;
    if (bounded) {
        const auto n = std::chrono::ceil<std::chrono::milliseconds>(left).count();
        ms = n < 0 ? 0 : static_cast<int>(n);
    }
    if (ms != 0) ++sleeps_;
    Ready r = wait_ready(cq_fd, event_fd, wake.fd(), ms);
    wake.set_spinning(true);
    return r;
}

Result<ConnEvent> wait_event(const Api& api, Conn* conn, int event_fd, std::chrono::milliseconds timeout) {
    // conn_next_event() blocks without a timeout; poll the event
    // channel first so a silent peer cannot hang us.
    const Ready r = wait_ready(-1, event_fd, -1, to_ms(timeout));
    if (!r.event) return Error(errc::io_error, "no connection event within " + std::to_string(timeout.count()) + " ms");
    ConnEvent ev = kConnUndefined;
    if (int ret = api.conn_next_event(conn, &ev); ret != 0)
        return call_failure(errc::io_error, "connection event", "conn_next_event", ret);
    return ev;
}

const char* event_name(ConnEvent e) noexcept {
    switch (e) {
    case kConnEstablished: return "established";
    case kConnClosed: return "closed by the peer";
    case kConnLost: return "lost";
    case kConnRejected: return "rejected";
    case kConnUnreachable: return "unreachable";
    default: return "undefined event";
    }
}

int to_ms(std::chrono::milliseconds t) noexcept {
    if (t.count() <= 0) return 0;
    return t.count() > INT_MAX ? INT_MAX : static_cast<int>(t.count());
}

} // namespace rpm::rdma
