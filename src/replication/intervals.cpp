#include "replication/intervals.hpp"

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

// Past max_ ranges, close the smallest gaps until half of max_ remain: the
// ranges then cover the fewest bytes that were never added (a flush of
// scattered writes does not reach over the old data between them), and
// halving keeps a long run of scattered adds to a collapse per max_/2 of
// them. (What a member missed is a LineSet: its copy must stay close to the
// bytes written.)
void IntervalSet::collapse() {
    const std::size_t target = std::max<std::size_t>(1, max_ / 2);
    if (map_.size() <= target) return;
    std::vector<std::uint64_t> gaps;
    gaps.reserve(map_.size() - 1);
    for (auto it = map_.begin(), next = std::next(it); next != map_.end(); ++it, ++next)
        gaps.push_back(next->first - it->second);
    const std::size_t closing = map_.size() - target;  // gaps to close
    auto sorted = gaps;
    std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(closing - 1), sorted.end());
    const std::uint64_t limit = sorted[closing - 1];
    std::size_t at_limit = closing - static_cast<std::size_t>(std::count_if(
                                          gaps.begin(), gaps.end(), [&](std::uint64_t g) { return g < limit; }));
    std::map<std::uint64_t, std::uint64_t> merged;
    auto it = map_.begin();
    std::uint64_t begin = it->first, end = it->second;
    for (++it; it != map_.end(); ++it) {
        const std::uint64_t gap = it->first - end;
        const bool close = gap < limit || (gap == limit && at_limit > 0 && at_limit-- > 0);
        if (!close) {
            merged.emplace(begin, end);
            begin = it->first;
        }
        end = it->second;
    }
    merged.emplace(begin, end);
    map_.swap(merged);
}

} // namespace rpm::replication
