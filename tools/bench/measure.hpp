// What every test (an rpm operation or a baseline) produces, and when it
// stops. Shared by the rpm driver and the baselines so their figures are
// computed the same way.
#pragma once

#include "histogram.hpp"

#include <time.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

namespace rpmbench {

using Clock = std::chrono::steady_clock;

/// A test stops at `seconds` after its start, or after `ops` operations
/// (over all threads) when ops > 0, or on SIGINT, whichever comes first.
struct StopRule {
    double seconds = 1.0;
    std::uint64_t ops = 0;
};

struct Measurement {
    Histogram latency;            ///< per operation, issue to completion
    std::uint64_t ops = 0;        ///< completed without error
    std::uint64_t bytes = 0;      ///< payload bytes moved by those operations
    std::uint64_t errors = 0;
    std::string first_error;
    double seconds = 0;           ///< first issue to last completion, over all threads
    double cpu_seconds = 0;       ///< CPU time of the whole process meanwhile; 0 = not measured

    /// Payload bandwidth in MB/s (10^6 bytes per second).
    [[nodiscard]] double mb_per_s() const noexcept {
        return seconds > 0 ? static_cast<double>(bytes) / seconds / 1e6 : 0;
    }
    [[nodiscard]] double ops_per_s() const noexcept {
        return seconds > 0 ? static_cast<double>(ops) / seconds : 0;
    }
};

/// CPU time of every thread of the process (ours, rpm's I/O threads, the
/// in-process server's, the baseline's echo server), in seconds. Tests and
/// baselines run one at a time, so the difference over a test is what that
/// test cost: client and in-process server together.
inline double process_cpu() noexcept {
    timespec t{};
    ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

/// Set by SIGINT: every running test winds down, no new test starts.
std::atomic<bool>& interrupted() noexcept;

/// Shared ticket counter for StopRule::ops: each thread claims an operation
/// before issuing it, so the total over all threads is exact.
class OpBudget {
public:
    explicit OpBudget(std::uint64_t limit) : limit_(limit) {}
    bool claim() noexcept { return limit_ == 0 || taken_.fetch_add(1, std::memory_order_relaxed) < limit_; }

private:
    std::uint64_t limit_;
    std::atomic<std::uint64_t> taken_{0};
};

/// A per-thread completed-operations counter the progress line reads;
/// padded so two threads' counters never share a cache line.
struct alignas(64) OpCounter {
    std::atomic<std::uint64_t> done{0};
};

} // namespace rpmbench
