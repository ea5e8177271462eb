// Time in spin loops, read rarely: the coarse clock for deadlines, and a
// pacer that bounds a spin by time while reading the precise clock at most
// about once per wait, and not at all in a short one it may start unread.
//
// Why: where steady_clock::now() is a system call (a VM whose clocksource
// is the emulated HPET, as the lab's: no vDSO then), a spin that read the
// clock every 16 rounds and a synchronous call that computed its deadline
// twice paid four to five clock reads per operation; rpm-floor, the same
// work requests with nothing of rpm above them, pays none
// (docs/benchmarks-history.md, "Fewer clock reads").
#pragma once

#include <chrono>
#include <cstdint>

namespace rpm {

/// CLOCK_MONOTONIC_COARSE as a steady_clock time point (libstdc++'s
/// steady_clock is CLOCK_MONOTONIC: the two compare). The vDSO serves it
/// from the last tick without reading the clocksource, so it costs no
/// system call whatever the clocksource. It never leads the precise clock;
/// it lags it by about a tick (4 ms at HZ=250), more where ticks stop
/// (a tickless idle CPU) or come late: 5.6 ms on a host, 4.4 ms in the lab
/// VM were seen at a 4 ms tick (tools/lab/ab/coarse_lag.c).
std::chrono::steady_clock::time_point coarse_now() noexcept;

/// start + length, saturating at time_point::max() (a length of
/// duration::max() is "never").
std::chrono::steady_clock::time_point time_after(std::chrono::steady_clock::time_point start,
                                                 std::chrono::steady_clock::duration length) noexcept;

/// coarse_now() + timeout + one tick: coarse_now() reaches it no earlier
/// than `timeout` from now (and up to two ticks later) when the coarse
/// clock lags by no more than a tick now; by more, it can come early by
/// the excess (a millisecond or two: the call timeouts it serves are
/// milliseconds to seconds, and a caller that wakes early waits again).
std::chrono::steady_clock::time_point coarse_deadline(std::chrono::milliseconds timeout) noexcept;
/// The same from `coarse`, a coarse_now() the caller has just read.
std::chrono::steady_clock::time_point coarse_deadline(std::chrono::steady_clock::time_point coarse,
                                                      std::chrono::milliseconds timeout) noexcept;

/// Bounds a spin loop by time, reading the clock only when, at the pace of
/// the rounds it has measured, half of the time left would have passed
/// (and at least every kMinStep rounds until it knows the pace). A wait
/// whose work arrives before then reads the clock once, at start(). The
/// pace carries over from one spin to the next: keep one pacer per
/// spinning thread. Rounds that turn slower than learned can overrun the
/// end by that ratio on the last half; the step is capped (kMaxStep) so a
/// pace learned on a fast machine state cannot stretch it without limit.
/// Not thread-safe.
class SpinPacer {
public:
    using Clock = std::chrono::steady_clock;
    static constexpr std::uint64_t kMinStep = 16;
    static constexpr std::uint64_t kMaxStep = std::uint64_t{1} << 14;

    /// A new spin, begun at `now`, that must stop at `end`.
    void start(Clock::time_point now, Clock::time_point end) noexcept;
    /// A new spin that must stop `length` after it began (duration::max():
    /// never), begun without reading the precise clock: `coarse` is
    /// coarse_now() at its start. Only once the pace is known
    /// (knows_pace()). Most waits end before their first read, so they read
    /// no clock at all: where a clock read is a system call (the lab VM),
    /// that was one per wait. At the first read, the start is taken as that
    /// many rounds back at the learned pace, but no further back than half
    /// the length (where the read was planned) nor before `coarse` (the
    /// coarse clock never leads): a spin never ends at its first read.
    /// Rounds slower than learned overrun the end by that ratio, as after
    /// start(), on the first half too.
    void start_unread(Clock::time_point coarse, Clock::duration length) noexcept;
    [[nodiscard]] bool knows_pace() const noexcept { return ns_per_round_ > 0; }
    /// One more round without work. RETURN VALUE: true when the caller
    /// must read the clock now and pass it to passed().
    [[nodiscard]] bool tick() noexcept { return ++spins_ >= next_; }
    /// Learn the pace from `now`. RETURN VALUE: true once `end` has come.
    [[nodiscard]] bool passed(Clock::time_point now) noexcept;
    /// When the spin began: exact after start(); after start_unread(), the
    /// estimate made at the first passed() (before it: the coarse start).
    [[nodiscard]] Clock::time_point began() const noexcept { return start_; }
    /// Nanoseconds per round learned so far (0: not yet; at least 1 once
    /// learned). Tests, stats.
    [[nodiscard]] std::uint64_t ns_per_round() const noexcept { return ns_per_round_; }

private:
    [[nodiscard]] std::uint64_t step(Clock::duration left) const noexcept;

    void estimate_start(Clock::time_point now) noexcept;

    Clock::time_point start_{}, end_{};
    // start_unread(): the length to add to the start once it is estimated.
    Clock::duration length_{};
    bool unread_ = false;
    // The pace is learned from here (the start, or the first read of an
    // unread start: an estimate cannot teach it).
    Clock::time_point learn_from_{};
    std::uint64_t learn_spins_ = 0;
    std::uint64_t spins_ = 0;
    std::uint64_t next_ = kMinStep;
    std::uint64_t ns_per_round_ = 0;
};

} // namespace rpm
