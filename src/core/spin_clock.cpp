#include "core/spin_clock.hpp"

#include <algorithm>
#include <ctime>

namespace rpm {
namespace {

std::chrono::nanoseconds coarse_tick() noexcept {
    static const std::chrono::nanoseconds tick = [] {
        timespec res{};
        if (::clock_getres(CLOCK_MONOTONIC_COARSE, &res) != 0) return std::chrono::nanoseconds(std::chrono::milliseconds(10));
        return std::chrono::seconds(res.tv_sec) + std::chrono::nanoseconds(res.tv_nsec);
    }();
    return tick;
}

} // namespace

std::chrono::steady_clock::time_point time_after(std::chrono::steady_clock::time_point start,
                                                 std::chrono::steady_clock::duration length) noexcept {
    const auto room = std::chrono::steady_clock::time_point::max() - start;
    return length >= room ? std::chrono::steady_clock::time_point::max() : start + length;
}

std::chrono::steady_clock::time_point coarse_now() noexcept {
    timespec ts{};
    if (::clock_gettime(CLOCK_MONOTONIC_COARSE, &ts) != 0) return std::chrono::steady_clock::now();
    const auto d = std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
    return std::chrono::steady_clock::time_point(std::chrono::duration_cast<std::chrono::steady_clock::duration>(d));
}

std::chrono::steady_clock::time_point coarse_deadline(std::chrono::milliseconds timeout) noexcept {
    return coarse_deadline(coarse_now(), timeout);
}

std::chrono::steady_clock::time_point coarse_deadline(std::chrono::steady_clock::time_point coarse,
                                                      std::chrono::milliseconds timeout) noexcept {
    return coarse + timeout + coarse_tick();
}

void SpinPacer::start(Clock::time_point now, Clock::time_point end) noexcept {
    start_ = learn_from_ = now;
    end_ = end;
    unread_ = false;
    spins_ = learn_spins_ = 0;
    next_ = ns_per_round_ > 0 ? step(end - now) : kMinStep;
}

void SpinPacer::start_unread(Clock::time_point coarse, Clock::duration length) noexcept {
    start_ = coarse;
    end_ = Clock::time_point::max();  // not known before the first read
    length_ = length;
    unread_ = true;
    spins_ = learn_spins_ = 0;
    next_ = step(length);
}

void SpinPacer::estimate_start(Clock::time_point now) noexcept {
    // No more than the half of the length this read was planned for: a
    // first read later than planned comes from a step raised to kMinStep,
    // i.e. a pace learned from slow rounds (a preempted spin), which would
    // put the start far back and end a spin that has barely begun.
    const auto planned = std::chrono::duration_cast<std::chrono::nanoseconds>(length_ / 2).count();
    const auto back = std::chrono::nanoseconds(static_cast<std::int64_t>(std::min<std::uint64_t>(
        spins_ * ns_per_round_, static_cast<std::uint64_t>(std::max<std::int64_t>(planned, 0)))));
    // The coarse clock never leads, so the true start is no earlier than
    // the coarse start. (How far it lags has no bound we can use: a tickless
    // idle CPU stops its ticks, and the lab VM's come late: lags past 5 ms
    // at a 4 ms tick were seen on the host and in the VM.)
    start_ = std::max(start_, now - std::chrono::duration_cast<Clock::duration>(back));
    end_ = time_after(start_, length_);
    unread_ = false;
    learn_from_ = now;
    learn_spins_ = spins_;
}

bool SpinPacer::passed(Clock::time_point now) noexcept {
    if (unread_) {
        estimate_start(now);
    } else if (spins_ > learn_spins_) {
        const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(now - learn_from_).count();
        ns_per_round_ = std::max<std::uint64_t>(
            1, static_cast<std::uint64_t>(std::max<std::int64_t>(ns, 0)) / (spins_ - learn_spins_));
    }
    if (now >= end_) return true;
    next_ = spins_ + step(end_ - now);
    return false;
}

std::uint64_t SpinPacer::step(Clock::duration left) const noexcept {
    if (ns_per_round_ == 0) return kMinStep;
    // Integers only: under an emulator (the lab's TCG VM) floating point is
    // done in software, and this runs at the start of every wait.
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
    const std::uint64_t rounds = static_cast<std::uint64_t>(std::max<std::int64_t>(ns, 0)) / 2 / ns_per_round_;
    return std::clamp(rounds, kMinStep, kMaxStep);
}

} // namespace rpm
