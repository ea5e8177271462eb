// The pieces of a connection's I/O thread: an eventfd to wake it, poll()
// over the completion channel, the rdma_cm event channel and the eventfd,
// draining the completion queue, and the Waiter that spins on the queue
// before (adaptive) or instead of (busy) sleeping (CompletionMode).
//
// The thread sleeps in poll() rather than in cq_wait() so that close()
// and new work can wake it; the CQ's fd is non-blocking, so cq_wait()
// only acknowledges an event that is there.
#pragma once

#include "core/adaptive_spin.hpp"
#include "core/function_ref.hpp"
#include "core/spin_clock.hpp"
#include "core/wakeup.hpp"
#include "transport/rdma/api.hpp"

#include <rpm/completion.hpp>
#include <rpm/result.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>

namespace rpm::rdma {

struct Ready {
    bool cq = false;
    bool event = false;
    bool wake = false;
    bool timeout = false;
    bool progress = false;  ///< the Waiter drained completions while spinning
};

/// poll() the completion channel, the connection's event channel and the
/// wakeup (any may be -1). timeout_ms -1 waits forever.
Ready wait_ready(int cq_fd, int event_fd, int wake_fd, int timeout_ms) noexcept;

/// O_NONBLOCK on a channel's fd. ERRORS: errc::io_error.
Result<void> set_nonblocking(int fd);

/// Acknowledge the CQ's event (when `had_event`) and hand every available
/// completion to `fn`. RETURN VALUE: how many. ERRORS: errc::io_error when
/// the verbs layer fails.
Result<std::size_t> drain_cq(const Api& api, Cq* cq, bool had_event, FunctionRef<void(const ibv_wc&)> fn);


/// An I/O thread's wait for work, by CompletionMode. event: poll() (as
/// wait_ready). busy: spin calling `drain` (the thread's own completion
/// handling; it returns how many it handled), reading the Wakeup's flag,
/// and poll()ing the descriptors without waiting every kPollEvery spins
/// (connection events, a completion channel event to acknowledge).
/// adaptive: busy for kAdaptiveSpin (kAdaptiveSpinInFlight when the caller
/// says a completion is expected), then event. The clock is read as rarely
/// as its SpinPacer allows: not at all in a wait for an operation on the
/// wire that completes within half its bound (start_unread), once at the
/// start of any other. Not
/// thread-safe: one per polling thread, kept across waits (the pacer learns
/// what a round of the spin costs there).
class Waiter {
public:
    // A system call, made by a thread that spins for nothing to do (a busy
    // server session between requests): at 256 spins, about every 0.1 ms
    // in the lab VM, a busy server slowed its client's reads by 10% to
    // 15% against 4096 (docs/benchmarks-history.md, "Inline locks, one clock read
    // per call, a quieter busy spin"). 4096 spins are 0.2 to 0.4 ms on
    // hardware, 1 to 2 ms in the lab: how late a connection event can be
    // seen while spinning.
    static constexpr unsigned kPollEvery = 4096;
    explicit Waiter(CompletionMode mode) noexcept : mode_(mode) {}
    /// `coarse`: coarse_now() just read by the caller (one read fewer), or
    /// the default: the Waiter reads it when it needs it.
    Ready wait(int cq_fd, int event_fd, Wakeup& wake, int timeout_ms, FunctionRef<std::size_t()> drain,
               bool in_flight = false, std::chrono::steady_clock::time_point coarse = {});
    [[nodiscard]] CompletionMode mode() const noexcept { return mode_; }
    /// Times it slept in poll() with a timeout other than 0 (tests, stats).
    [[nodiscard]] std::uint64_t sleeps() const noexcept { return sleeps_; }

private:
    using Clock = std::chrono::steady_clock;
    /// The spin's outcome: `over`, the wait's Ready; otherwise an adaptive
    /// spin ran out and the wait sleeps (sleep_after_spin).
    struct Spun {
        Ready r;
        bool over;
    };
    /// Start the pacer for a spin. RETURN VALUE: the precise clock's time
    /// read, or none (an unread start: no system call for it).
    Clock::time_point start_spin(Clock::duration timeout, bool in_flight, Clock::time_point coarse);
    /// Spin until something is ready or the pacer's bound passes; `now`: the
    /// last precise clock read.
    Spun spin(int cq_fd, int event_fd, Wakeup& wake, Clock::duration timeout, FunctionRef<std::size_t()> drain,
              Clock::time_point& now);
    /// Sleep in poll() for up to `left` (forever when not `bounded`).
    Ready sleep_after_spin(int cq_fd, int event_fd, Wakeup& wake, bool bounded, Clock::duration left);

    CompletionMode mode_;
    std::uint64_t sleeps_ = 0;
    SpinPacer pacer_;  // paces the clock reads (core/spin_clock.hpp)
};

/// Wait up to `timeout` for the next connection event.
/// ERRORS: errc::io_error on timeout or failure.
Result<ConnEvent> wait_event(const Api& api, Conn* conn, int event_fd, std::chrono::milliseconds timeout);

/// "connection lost" etc. for logs and error details.
const char* event_name(ConnEvent e) noexcept;

/// Milliseconds for the Api's int timeouts, clamped.
int to_ms(std::chrono::milliseconds t) noexcept;

} // namespace rpm::rdma
