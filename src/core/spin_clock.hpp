// Time in spin loops, read rarely: the coarse clock for deadlines, and a
// pacer that bounds a spin by time while reading the precise clock about
// once per wait.
//
// Why: where steady_clock::now() is a system call (a VM whose clocksource
// is the emulated HPET, as the lab's: no vDSO then), a spin that read the
// clock every 16 rounds and a synchronous call that computed its deadline
// twice paid four to five clock reads per operation; rpm-floor, the same
// work requests with nothing of rpm above them, pays none
// (docs/benchmarks.md, "Fewer clock reads").
#pragma once

#include <chrono>
#include <cstdint>

namespace rpm {

/// CLOCK_MONOTONIC_COARSE as a steady_clock time point (libstdc++'s
/// steady_clock is CLOCK_MONOTONIC: the two compare). The vDSO serves it
/// from the last tick without reading the clocksource, so it costs no
/// system call whatever the clocksource. It lags the precise clock by up to
/// one tick (4 ms at HZ=250), never leads it.
std::chrono::steady_clock::time_point coarse_now() noexcept;

/// coarse_now() + timeout + one tick: coarse_now() reaches it no earlier
/// than `timeout` from now (and up to two ticks later).
std::chrono::steady_clock::time_point coarse_deadline(std::chrono::milliseconds timeout) noexcept;

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
    /// One more round without work. RETURN VALUE: true when the caller
    /// must read the clock now and pass it to passed().
    [[nodiscard]] bool tick() noexcept { return ++spins_ >= next_; }
    /// Learn the pace from `now`. RETURN VALUE: true once `end` has come.
    [[nodiscard]] bool passed(Clock::time_point now) noexcept;
    /// Nanoseconds per round learned so far (0: not yet; at least 1 once
    /// learned). Tests, stats.
    [[nodiscard]] std::uint64_t ns_per_round() const noexcept { return ns_per_round_; }

private:
    [[nodiscard]] std::uint64_t step(Clock::duration left) const noexcept;

    Clock::time_point start_{}, end_{};
    std::uint64_t spins_ = 0;
    std::uint64_t next_ = kMinStep;
    std::uint64_t ns_per_round_ = 0;
};

} // namespace rpm
