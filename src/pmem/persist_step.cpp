// msync of a region's extent, for the persist step's executor
// (persist_step.hpp).
#include "pmem/persist_step.hpp"

#include <sys/mman.h>
#include <unistd.h>

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

} // namespace rpm::pmem::detail
