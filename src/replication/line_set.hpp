// What a member missed while it was away, as a bitmap of fixed-size lines
// (64 bytes to start with): the resync then copies about the bytes that were
// written, however scattered. A set of ranges capped at a few thousand
// entries (IntervalSet) closes the gaps between scattered small writes, and
// a replica that missed 100,000 index stores spread over a 256 MiB index was
// sent the whole index.
#pragma once

#include "replication/intervals.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

namespace rpm::replication {

class LineSet {
public:
    /// Lines start at 2^line_shift bytes; when the bitmap would take more
    /// than `budget_bytes`, lines double in size (the copy grows, the memory
    /// stays bounded whatever the region's size and the write pattern).
    explicit LineSet(std::size_t budget_bytes = std::size_t{8} << 20, unsigned line_shift = 6) noexcept
        : budget_(budget_bytes), shift_(line_shift) {}

    void add(std::uint64_t offset, std::uint64_t length);
    void add(const IntervalSet& ranges);
    [[nodiscard]] bool empty() const noexcept { return chunks_.empty(); }
    [[nodiscard]] std::uint64_t line_bytes() const noexcept { return std::uint64_t{1} << shift_; }
    /// Bytes covered by the marked lines (what a resync copies, before
    /// clipping to the region).
    [[nodiscard]] std::uint64_t bytes() const noexcept;
    /// Runs of marked lines, in offset order.
    [[nodiscard]] std::vector<Span> spans() const;
    /// Memory the bitmap takes (its chunks; the map's nodes are extra).
    [[nodiscard]] std::size_t footprint() const noexcept { return chunks_.size() * sizeof(Chunk); }
    void clear() noexcept { chunks_.clear(); }

private:
    static constexpr std::uint64_t kChunkLines = 4096;  // 512 bytes of bits per chunk
    using Chunk = std::array<std::uint64_t, kChunkLines / 64>;

    void mark(std::uint64_t first_line, std::uint64_t last_line);
    void coarsen();

    std::size_t budget_;
    unsigned shift_;
    std::map<std::uint64_t, Chunk> chunks_;  // chunk number -> its lines' bits
};

} // namespace rpm::replication
