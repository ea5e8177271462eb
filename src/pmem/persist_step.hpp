// The server's persist step (flush::ServerPersist, docs/flush-methods.md)
// carried out on a mapped region: the one executor behind both the rpm
// server's Persist (src/server/served_region.cpp) and the NVMe-oF PM backend's
// durable writes (src/nvmf/engine/backend_pmem.cpp).
#pragma once

#include <rpm/flush.hpp>
#include <rpm/pmem.hpp>
#include <rpm/result.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rpm::pmem::detail {

/// msync(MS_SYNC) of the pages holding [offset, offset+length) of `region`
/// (pmem2's page-granularity persist drops msync's errors; a write a peer is
/// told is durable must not).
/// ERRORS: errc::io_error (msync failed: the detail names the bytes, the file
/// and errno's text).
Result<void> msync_extent(const Region& region, std::uint64_t offset, std::uint64_t length) noexcept;

/// One extent of a region, for msync_extents.
struct Extent {
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
};

/// Widen `extents` to whole pages of `page` bytes, sort them and merge
/// overlapping and adjacent ones, in place: what remains is one run of
/// pages per msync (msync_extents; a replicator's local copy at commit).
/// RETURN VALUE: none (`extents` holds the runs). ERRORS: none.
void page_runs(std::vector<Extent>& extents, std::uint64_t page) noexcept;

/// msync(MS_SYNC) of every page `extents` touch, each page once and
/// adjacent pages in one call (the extents are sorted in place): a batch's
/// extents (a record, its index slot, its commit word) share pages, and
/// each msync is a system call.
/// RETURN VALUE: the number of msync calls made.
/// ERRORS: as msync_extent, for the run of pages that failed.
Result<std::size_t> msync_extents(const Region& region, std::vector<Extent>& extents) noexcept;

/// Make each of `extents` (anything with .offset and .length inside the
/// region) durable by `step`: sfence drains; the cache-flush steps flush
/// every extent before one drain (one SFENCE for a batch), then the deep
/// flush of each extent where the step asks for it; msync the pages of all
/// of them (msync_extents).
/// RETURN VALUE: success once every extent is durable.
/// ERRORS: errc::deep_flush_failed (Region::deep_flush), errc::io_error
/// (msync_extent), errc::invalid_argument (a step this build does not know).
template <class Extents>
Result<void> run_persist_step(const Region& region, flush::ServerPersist step, const Extents& extents) noexcept {
    using SP = flush::ServerPersist;
    const std::byte* base = region.bytes().data();
    switch (step) {
    case SP::none: return {};
    case SP::sfence: region.drain(); return {};
    case SP::cache_flush_sfence:
    case SP::cache_flush_sfence_deep_flush:
        for (const auto& e : extents) region.flush(base + e.offset, e.length);
        region.drain();
        if (step == SP::cache_flush_sfence) return {};
        for (const auto& e : extents)
            if (auto ok = region.deep_flush(base + e.offset, e.length); !ok) return ok;
        return {};
    case SP::msync: {
        std::vector<Extent> pages;
        try {
            for (const auto& e : extents) pages.push_back({e.offset, e.length});
        } catch (...) {  // no memory for the list: one msync per extent
            for (const auto& e : extents)
                if (auto ok = msync_extent(region, e.offset, e.length); !ok) return ok;
            return {};
        }
        if (auto n = msync_extents(region, pages); !n) return n.error();
        return {};
    }
    }
    return Error(errc::invalid_argument, "unknown persist step");
}

} // namespace rpm::pmem::detail
