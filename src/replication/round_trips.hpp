// A member's recent round trips: how long its last requests (flushes,
// vectored persists, heartbeats) took to be answered, kept so that a replica
// which still answers, but slowly (TCP retransmitting over a lossy link),
// shows as degraded long before, or instead of, being failed.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>

namespace rpm::replication {

class RoundTrips {
public:
    /// The last this many answers count: a few seconds of heartbeats when
    /// idle, a fraction of a second under load.
    static constexpr std::size_t kWindow = 64;

    struct Summary {
        std::chrono::microseconds p50{0}, p90{0}, max{0};
        std::size_t samples = 0;
    };

    void add(std::chrono::steady_clock::duration d) noexcept;
    [[nodiscard]] Summary summary() const noexcept;
    void clear() noexcept { n_ = next_ = 0; }

private:
    std::array<std::uint32_t, kWindow> us_{};  ///< microseconds, saturated
    std::size_t n_ = 0, next_ = 0;
};

} // namespace rpm::replication
