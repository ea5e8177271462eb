// A bounded latency recorder: log-linear buckets (HDR-histogram style), so a
// test of any length costs the same 60 KB and percentiles stay within 0.4 %
// of the true sample. Storing every sample and sorting would be exact but
// grows with --duration; 0.4 % is far below this machine's run-to-run noise.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace rpmbench {

/// Latency figures of one test, in nanoseconds.
struct Summary {
    std::uint64_t count = 0;
    double mean_ns = 0;
    std::uint64_t p50_ns = 0, p99_ns = 0, p999_ns = 0, min_ns = 0, max_ns = 0;
};

class Histogram {
public:
    Histogram();
    void record(std::uint64_t ns) noexcept;
    void record(std::chrono::steady_clock::duration d) noexcept {
        const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
        record(ns < 0 ? 0 : static_cast<std::uint64_t>(ns));
    }
    void merge(const Histogram& other) noexcept;
    [[nodiscard]] std::uint64_t count() const noexcept { return count_; }
    /// The value at quantile q (0 < q <= 1): the bucket's midpoint, clamped to [min, max].
    [[nodiscard]] std::uint64_t quantile(double q) const noexcept;
    [[nodiscard]] Summary summary() const noexcept;
    /// Samples per bucket, indexed as bucket_of(): what --plot draws its CDF from.
    [[nodiscard]] const std::vector<std::uint64_t>& counts() const noexcept { return counts_; }

    /// Bucket layout, exposed for the unit check in --self-check.
    static std::size_t bucket_of(std::uint64_t ns) noexcept;
    static std::uint64_t bucket_low(std::size_t index) noexcept;
    static std::uint64_t bucket_width(std::size_t index) noexcept;

private:
    std::vector<std::uint64_t> counts_;
    std::uint64_t count_ = 0;
    std::uint64_t sum_ = 0;
    std::uint64_t min_ = UINT64_MAX;
    std::uint64_t max_ = 0;
};

} // namespace rpmbench
