#include "replication/detail/intervals.hpp"

#include <algorithm>
#include <iterator>

namespace rpm::replication {

void IntervalSet::add(std::uint64_t offset, std::uint64_t length) {
    if (length == 0) return;
    std::uint64_t begin = offset;
    std::uint64_t end = offset + length;
    // The first range that could touch [begin, end): the one before it, if
    // it reaches within gap of begin.
    auto it = map_.upper_bound(begin);
    if (it != map_.begin()) {
        auto prev = std::prev(it);
        if (prev->second + gap_ >= begin) it = prev;
    }
    while (it != map_.end() && it->first <= end + gap_) {
        begin = std::min(begin, it->first);
        end = std::max(end, it->second);
        it = map_.erase(it);
    }
    map_.emplace(begin, end);
    if (map_.size() > max_) collapse();
}

void IntervalSet::add(const IntervalSet& other) {
    for (const auto& [b, e] : other.map_) add(b, e - b);
}

std::uint64_t IntervalSet::bytes() const noexcept {
    std::uint64_t n = 0;
    for (const auto& [b, e] : map_) n += e - b;
    return n;
}

std::vector<Span> IntervalSet::spans() const {
    std::vector<Span> out;
    out.reserve(map_.size());
    for (const auto& [b, e] : map_) out.push_back({b, e - b});
    return out;
}

void IntervalSet::collapse() {
    const std::uint64_t begin = map_.begin()->first;
    const std::uint64_t end = std::prev(map_.end())->second;
    map_.clear();
    map_.emplace(begin, end);
}

} // namespace rpm::replication
