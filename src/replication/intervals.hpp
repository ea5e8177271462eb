// A set of byte ranges, merged as they are added: what a member has been
// sent but not flushed, or what it missed while it was away.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

namespace rpm::replication {

struct Span {
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
    friend bool operator==(const Span&, const Span&) = default;
};

class IntervalSet {
public:
    /// Ranges closer than `gap` bytes are merged (one flush instead of two
    /// round trips); past `max_ranges` the smallest gaps are closed until
    /// half of max_ranges remain, so the set stays small whatever the write
    /// pattern and covers as few bytes that were not added as it can.
    explicit IntervalSet(std::uint64_t gap = 0, std::size_t max_ranges = 4096) noexcept
        : gap_(gap), max_(max_ranges) {}

    void add(std::uint64_t offset, std::uint64_t length);
    void add(const IntervalSet& other);
    [[nodiscard]] bool empty() const noexcept { return map_.empty(); }
    [[nodiscard]] std::size_t ranges() const noexcept { return map_.size(); }
    [[nodiscard]] std::uint64_t bytes() const noexcept;
    [[nodiscard]] std::vector<Span> spans() const;
    void clear() noexcept { map_.clear(); }

private:
    void collapse();
    std::uint64_t gap_;
    std::size_t max_;
    std::map<std::uint64_t, std::uint64_t> map_;  // offset -> end
};

} // namespace rpm::replication
