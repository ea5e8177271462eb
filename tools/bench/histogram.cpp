// Bucket i < 256 holds exactly the value i. Above, each power of two is cut
// into 128 equal buckets: value v with bit width w >= 9 has shift w - 8 and
// mantissa v >> shift in [128, 255]; its bucket is 256 + (shift - 1) * 128 +
// (mantissa - 128). A bucket is at most 1/128 of its values wide, and the
// midpoint is reported, so the error is at most 1/256.
#include "histogram.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace rpmbench {
namespace {

constexpr std::size_t kExact = 256;
constexpr std::size_t kSub = 128;
constexpr std::size_t kBuckets = kExact + 56 * kSub;  // shifts 1..56 cover 64-bit values

} // namespace

Histogram::Histogram() : counts_(kBuckets, 0) {}

std::size_t Histogram::bucket_of(std::uint64_t ns) noexcept {
    if (ns < kExact) return static_cast<std::size_t>(ns);
    const auto shift = static_cast<unsigned>(std::bit_width(ns)) - 8;
    const auto mantissa = static_cast<std::size_t>(ns >> shift);
    return kExact + (shift - 1) * kSub + (mantissa - kSub);
}

std::uint64_t Histogram::bucket_low(std::size_t index) noexcept {
    if (index < kExact) return index;
    const auto shift = static_cast<unsigned>((index - kExact) / kSub + 1);
    const auto mantissa = static_cast<std::uint64_t>((index - kExact) % kSub + kSub);
    return mantissa << shift;
}

std::uint64_t Histogram::bucket_width(std::size_t index) noexcept {
    if (index < kExact) return 1;
    return std::uint64_t{1} << ((index - kExact) / kSub + 1);
}

void Histogram::record(std::uint64_t ns) noexcept {
    ++counts_[bucket_of(ns)];
    ++count_;
    sum_ += ns;
    min_ = std::min(min_, ns);
    max_ = std::max(max_, ns);
}

void Histogram::merge(const Histogram& other) noexcept {
    for (std::size_t i = 0; i < kBuckets; ++i) counts_[i] += other.counts_[i];
    count_ += other.count_;
    sum_ += other.sum_;
    min_ = std::min(min_, other.min_);
    max_ = std::max(max_, other.max_);
}

std::uint64_t Histogram::quantile(double q) const noexcept {
    if (count_ == 0) return 0;
    // The rank of the sample that is the q-quantile, 1-based: ceil(q * n).
    const auto rank = std::max<std::uint64_t>(
        1, static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(count_))));
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < kBuckets; ++i) {
        seen += counts_[i];
        if (seen >= rank) return std::clamp(bucket_low(i) + bucket_width(i) / 2, min_, max_);
    }
    return max_;
}

Summary Histogram::summary() const noexcept {
    Summary s;
    s.count = count_;
    if (count_ == 0) return s;
    s.mean_ns = static_cast<double>(sum_) / static_cast<double>(count_);
    s.p50_ns = quantile(0.50);
    s.p99_ns = quantile(0.99);
    s.p999_ns = quantile(0.999);
    s.min_ns = min_;
    s.max_ns = max_;
    return s;
}

} // namespace rpmbench
