// A provider's memory, carved up: best fit over a sorted free list of
// [offset, length) extents, coalesced on free.
//
// Offsets are relative to the provider's start, but alignment is honoured
// for `base + offset`, where `base` is where the provider starts in its
// address space (the CMB's offset into its BAR). BARs are naturally aligned
// on the bus, so an aligned base + offset is an aligned bus address too.
#pragma once

#include <rpm/result.hpp>

#include <cstdint>
#include <map>
#include <string>

namespace rpm::p2p::detail {

class SubAllocator {
public:
    static constexpr std::uint64_t max_align = std::uint64_t{2} << 20;  ///< 2 MiB

    /// All of [0, size) free; `base` is the provider's start (for alignment).
    SubAllocator(std::uint64_t base, std::uint64_t size);

    /// An offset o with (base + o) % align == 0 and [o, o + size) free,
    /// taken from the smallest free extent that fits (best fit).
    /// ERRORS: errc::invalid_argument (size 0, align not a power of two or
    /// above 2 MiB), errc::bad_size (more than the whole provider),
    /// errc::no_p2p_memory (no free extent fits; the detail gives free
    /// bytes and the largest extent).
    Result<std::uint64_t> allocate(std::uint64_t size, std::uint64_t align);

    /// Give back an allocation by the offset allocate() returned.
    /// ERRORS: errc::invalid_argument when `offset` is not a live
    /// allocation (a double free, or never allocated); nothing changes.
    Result<void> free(std::uint64_t offset);

    [[nodiscard]] std::uint64_t base() const noexcept { return base_; }
    [[nodiscard]] std::uint64_t capacity() const noexcept { return size_; }
    [[nodiscard]] std::uint64_t free_bytes() const noexcept { return free_bytes_; }
    [[nodiscard]] std::uint64_t largest_free() const noexcept;
    /// 1 - largest_free / free_bytes: 0 when the free space is one extent
    /// (or there is none), towards 1 as it splinters.
    [[nodiscard]] double fragmentation() const noexcept;
    [[nodiscard]] std::size_t live() const noexcept { return used_.size(); }
    /// The free extents, offset -> length, in order (for tests and probes).
    [[nodiscard]] const std::map<std::uint64_t, std::uint64_t>& free_extents() const noexcept {
        return free_;
    }

private:
    struct Fit {
        std::uint64_t extent;  ///< key in free_
        std::uint64_t start;   ///< aligned offset inside it
    };
    [[nodiscard]] bool best_fit(std::uint64_t size, std::uint64_t align, Fit& out) const noexcept;
    void take(const Fit& fit, std::uint64_t size);
    void give(std::uint64_t offset, std::uint64_t length);

    std::uint64_t base_;
    std::uint64_t size_;
    std::uint64_t free_bytes_;
    std::map<std::uint64_t, std::uint64_t> free_;  ///< offset -> length, never adjacent
    std::map<std::uint64_t, std::uint64_t> used_;  ///< offset -> length
};

/// "1 MiB", "4 KiB", "1536 bytes": exact, in the largest unit that divides.
std::string format_bytes(std::uint64_t n);

} // namespace rpm::p2p::detail
