// SubAllocator: best fit over sorted free extents, coalescing on free.
#include "p2p/suballocator.hpp"

#include <iterator>

namespace rpm::p2p::detail {
namespace {

constexpr bool is_pow2(std::uint64_t v) noexcept { return v != 0 && (v & (v - 1)) == 0; }

constexpr std::uint64_t align_up(std::uint64_t v, std::uint64_t align) noexcept {
    return (v + align - 1) & ~(align - 1);
}

} // namespace

std::string format_bytes(std::uint64_t n) {
    static constexpr const char* units[] = {"GiB", "MiB", "KiB"};
    for (int i = 0; i < 3; ++i) {
        const std::uint64_t unit = std::uint64_t{1} << (30 - 10 * i);
        if (n != 0 && n % unit == 0) return std::to_string(n / unit) + " " + units[i];
    }
    return std::to_string(n) + (n == 1 ? " byte" : " bytes");
}

SubAllocator::SubAllocator(std::uint64_t base, std::uint64_t size)
    : base_(base), size_(size), free_bytes_(size) {
    if (size != 0) free_.emplace(0, size);
}

std::uint64_t SubAllocator::largest_free() const noexcept {
    std::uint64_t best = 0;
    for (const auto& [off, len] : free_)
        if (len > best) best = len;
    return best;
}

double SubAllocator::fragmentation() const noexcept {
    if (free_bytes_ == 0) return 0.0;
    return 1.0 - static_cast<double>(largest_free()) / static_cast<double>(free_bytes_);
}

// Smallest extent that holds `size` bytes after aligning its start; the
// first of equals, so allocation is deterministic (lowest offset wins).
bool SubAllocator::best_fit(std::uint64_t size, std::uint64_t align, Fit& out) const noexcept {
    std::uint64_t best_len = 0;
    for (const auto& [off, len] : free_) {
        const std::uint64_t start = align_up(base_ + off, align) - base_;
        const std::uint64_t pad = start - off;
        if (pad > len || len - pad < size) continue;
        if (best_len == 0 || len < best_len) {
            best_len = len;
            out = {off, start};
        }
    }
    return best_len != 0;
}

// Splits the extent around [start, start + size): the alignment gap before
// and the tail after stay free.
void SubAllocator::take(const Fit& fit, std::uint64_t size) {
    const auto it = free_.find(fit.extent);
    const std::uint64_t off = it->first, end = it->first + it->second;
    free_.erase(it);
    if (fit.start > off) free_.emplace(off, fit.start - off);
    if (fit.start + size < end) free_.emplace(fit.start + size, end - (fit.start + size));
    used_.emplace(fit.start, size);
    free_bytes_ -= size;
}

Result<std::uint64_t> SubAllocator::allocate(std::uint64_t size, std::uint64_t align) {
    if (size == 0) return Error(errc::invalid_argument, "allocation of 0 bytes");
    if (!is_pow2(align) || align > max_align)
        return Error(errc::invalid_argument, "alignment " + std::to_string(align) +
                                                 " is not a power of two up to 2 MiB");
    if (size > size_)
        return Error(errc::bad_size, format_bytes(size) + " asked, the provider has only " +
                                         format_bytes(size_) + " in all");
    Fit fit{};
    if (!best_fit(size, align, fit))
        return Error(errc::no_p2p_memory,
                     format_bytes(free_bytes_) + " free (largest extent " +
                         format_bytes(largest_free()) + "), " + format_bytes(size) + " asked" +
                         (align > 1 ? " aligned to " + format_bytes(align) : ""));
    take(fit, size);
    return fit.start;
}

// Inserts [offset, offset + length) and merges it with the extents that
// touch it on either side, so free_ never holds two adjacent extents.
void SubAllocator::give(std::uint64_t offset, std::uint64_t length) {
    auto next = free_.lower_bound(offset);
    if (next != free_.begin()) {
        const auto prev = std::prev(next);
        if (prev->first + prev->second == offset) {
            offset = prev->first;
            length += prev->second;
            free_.erase(prev);
        }
    }
    if (next != free_.end() && offset + length == next->first) {
        length += next->second;
        free_.erase(next);
    }
    free_.emplace(offset, length);
}

Result<void> SubAllocator::free(std::uint64_t offset) {
    const auto it = used_.find(offset);
    if (it == used_.end())
        return Error(errc::invalid_argument, "offset " + std::to_string(offset) +
                                                 " is not a live allocation (double free?)");
    const std::uint64_t length = it->second;
    used_.erase(it);
    give(offset, length);
    free_bytes_ += length;
    return {};
}

} // namespace rpm::p2p::detail
