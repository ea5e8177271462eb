// msync of a region's extent, for the persist step's executor
// (persist_step.hpp).
#include "pmem/persist_step.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

namespace rpm::pmem::detail {

Result<void> msync_extent(const Region& region, std::uint64_t offset, std::uint64_t length) noexcept {
    // msync needs a page-aligned start: widen the range down to its page.
    const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    const auto start = reinterpret_cast<std::uintptr_t>(region.bytes().data() + offset);
    const auto aligned = start & ~(page - 1);
    if (::msync(reinterpret_cast<void*>(aligned), length + (start - aligned), MS_SYNC) == 0) return {};
    const int err = errno;
    return Error(errc::io_error, "msync of " + std::to_string(length) + " bytes at offset " + std::to_string(offset) +
                                     " of " + region.path().string() + ": " + std::strerror(err));
}

void page_runs(std::vector<Extent>& extents, std::uint64_t page) noexcept {
    for (auto& e : extents) {
        const std::uint64_t first = e.offset / page * page;
        e.length = (e.offset + e.length + page - 1) / page * page - first;
        e.offset = first;
    }
    std::sort(extents.begin(), extents.end(), [](const Extent& a, const Extent& b) { return a.offset < b.offset; });
    std::size_t runs = 0;
    for (std::size_t i = 0; i < extents.size();) {
        std::uint64_t start = extents[i].offset, end = start + extents[i].length;
        for (++i; i < extents.size() && extents[i].offset <= end; ++i)
            end = std::max(end, extents[i].offset + extents[i].length);
        if (end != start) extents[runs++] = {start, end - start};
    }
    extents.resize(runs);
}

Result<std::size_t> msync_extents(const Region& region, std::vector<Extent>& extents) noexcept {
    // Offsets from the mapping's start, which mmap aligned to a page.
    page_runs(extents, static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)));
    for (const auto& run : extents)
        if (auto ok = msync_extent(region, run.offset, run.length); !ok) return ok.error();
    return extents.size();
}

} // namespace rpm::pmem::detail
