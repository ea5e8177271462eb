#include "replication/line_set.hpp"

#include <algorithm>
#include <bit>

namespace rpm::replication {

namespace {

// Bits [from, to) of a word set.
std::uint64_t bits(unsigned from, unsigned to) noexcept {
    const std::uint64_t upper = to >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << to) - 1;
    return upper & ~((std::uint64_t{1} << from) - 1);
}

} // namespace

void LineSet::add(std::uint64_t offset, std::uint64_t length) {
    if (length == 0) return;
    mark(offset >> shift_, (offset + length - 1) >> shift_);
    while (footprint() > budget_ && shift_ < 63) coarsen();
}

void LineSet::add(const IntervalSet& ranges) {
    for (const auto& s : ranges.spans()) add(s.offset, s.length);
}

void LineSet::mark(std::uint64_t first_line, std::uint64_t last_line) {
    for (std::uint64_t line = first_line; line <= last_line;) {
        const std::uint64_t chunk = line / kChunkLines;
        const std::uint64_t chunk_end = std::min(last_line + 1, (chunk + 1) * kChunkLines);
        Chunk& c = chunks_.try_emplace(chunk).first->second;  // value-initialised: all clear
        // Whole words at a time: a long log append marks thousands of lines.
        for (std::uint64_t l = line; l < chunk_end;) {
            const std::uint64_t in_chunk = l % kChunkLines;
            const auto from = static_cast<unsigned>(in_chunk % 64);
            const auto to = static_cast<unsigned>(std::min<std::uint64_t>(64, from + (chunk_end - l)));
            c[in_chunk / 64] |= bits(from, to);
            l += to - from;
        }
        line = chunk_end;
    }
}

std::uint64_t LineSet::bytes() const noexcept {
    std::uint64_t lines = 0;
    for (const auto& [n, c] : chunks_)
        for (std::uint64_t w : c) lines += static_cast<std::uint64_t>(std::popcount(w));
    return lines << shift_;
}

std::vector<Span> LineSet::spans() const {
    std::vector<Span> out;
    const std::uint64_t line = line_bytes();
    for (const auto& [n, c] : chunks_) {
        for (std::size_t w = 0; w < c.size(); ++w) {
            std::uint64_t word = c[w];
            while (word != 0) {
                const auto from = static_cast<unsigned>(std::countr_zero(word));
                const auto run = static_cast<unsigned>(std::countr_one(word >> from));
                const std::uint64_t first = n * kChunkLines + w * 64 + from;
                const std::uint64_t offset = first * line;
                // A run that continues the previous one (across words or chunks) extends it.
                if (!out.empty() && out.back().offset + out.back().length == offset) out.back().length += run * line;
                else out.push_back({offset, run * line});
                word &= ~bits(from, from + run);
            }
        }
    }
    return out;
}

// Twice the line size: every pair of lines becomes one, marked when either
// was. Rare (only past the budget), so bit by bit.
void LineSet::coarsen() {
    std::map<std::uint64_t, Chunk> old;
    old.swap(chunks_);
    ++shift_;
    for (const auto& [n, c] : old) {
        for (std::size_t w = 0; w < c.size(); ++w) {
            for (std::uint64_t word = c[w]; word != 0; word &= word - 1) {
                const std::uint64_t line = (n * kChunkLines + w * 64 + static_cast<unsigned>(std::countr_zero(word))) >> 1;
                mark(line, line);
            }
        }
    }
}

} // namespace rpm::replication
