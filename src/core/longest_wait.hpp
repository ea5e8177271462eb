// The longest wait rpm honours. A deadline is steady_clock::now() plus a
// caller's duration, and steady_clock counts nanoseconds in 64 bits (about
// 292 years from its epoch): a larger duration (a C caller's INT64_MAX
// milliseconds, meaning "forever") overflowed into a deadline already past,
// and the call timed out at once. Every caller-given timeout and interval
// is capped here when it enters the library; ten years leaves room for the
// sums of several of them (the replicator waits up to 4 x (failure_timeout
// + heartbeat_interval)).
#pragma once

#include <algorithm>
#include <chrono>

namespace rpm::detail {

inline constexpr std::chrono::milliseconds kLongestWait = std::chrono::hours(24 * 365 * 10);

/// RETURN VALUE: `d`, or kLongestWait when it is longer. ERRORS: none.
template <class Rep, class Period>
constexpr std::chrono::duration<Rep, Period> capped_wait(std::chrono::duration<Rep, Period> d) noexcept {
    const auto most = std::chrono::duration_cast<std::chrono::duration<Rep, Period>>(kLongestWait);
    return std::min(d, most);
}

} // namespace rpm::detail
