#include "replication/round_trips.hpp"

#include <algorithm>
#include <limits>

namespace rpm::replication {

void RoundTrips::add(std::chrono::steady_clock::duration d) noexcept {
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(d).count();
    constexpr auto top = std::numeric_limits<std::uint32_t>::max();
    us_[next_] = us <= 0 ? 0 : static_cast<std::uint32_t>(std::min<std::int64_t>(us, top));
    next_ = (next_ + 1) % kWindow;
    n_ = std::min(n_ + 1, kWindow);
}

RoundTrips::Summary RoundTrips::summary() const noexcept {
    Summary s;
    s.samples = n_;
    if (n_ == 0) return s;
    std::array<std::uint32_t, kWindow> v{};
    std::copy_n(us_.begin(), n_, v.begin());
    std::sort(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n_));
    // Nearest rank: the smallest sample with at least p% of them at or below it.
    const auto rank = [&](std::size_t pct) { return std::chrono::microseconds(v[(n_ * pct + 99) / 100 - 1]); };
    s.p50 = rank(50);
    s.p90 = rank(90);
    s.max = std::chrono::microseconds(v[n_ - 1]);
    return s;
}

} // namespace rpm::replication
