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

std::chrono::steady_clock::time_point coarse_now() noexcept {
    timespec ts{};
    if (::clock_gettime(CLOCK_MONOTONIC_COARSE, &ts) != 0) return std::chrono::steady_clock::now();
    const auto d = std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
    return std::chrono::steady_clock::time_point(std::chrono::duration_cast<std::chrono::steady_clock::duration>(d));
}

std::chrono::steady_clock::time_point coarse_deadline(std::chrono::milliseconds timeout) noexcept {
    return coarse_now() + timeout + coarse_tick();
}

void SpinPacer::start(Clock::time_point now, Clock::time_point end) noexcept {
    start_ = now;
    end_ = end;
    spins_ = 0;
    next_ = ns_per_round_ > 0 ? step(end - now) : kMinStep;
}

bool SpinPacer::passed(Clock::time_point now) noexcept {
    if (spins_ > 0) {
        const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(now - start_).count();
        ns_per_round_ = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::max<std::int64_t>(ns, 0)) / spins_);
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
