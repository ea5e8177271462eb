// Persistent-memory regions on libpmem2.
//
// A Region maps a devdax device, a file on a DAX file system, a regular file
// or a tmpfs file (emulated PM) and tells what it is: its kind, its store
// granularity and its persistence domain. persist/flush/drain are pmem2's own
// function pointers, fetched once at open, so the hot path is one indirect
// call (as in libpmem2). A caller that needs a granularity says so in
// OpenOptions and gets errc::granularity_not_supported when the region cannot
// give it.
#pragma once

#include <rpm/export.hpp>
#include <rpm/persistence.hpp>
#include <rpm/result.hpp>

#include <cstddef>
#include <filesystem>
#include <optional>
#include <span>
#include <string_view>

RPM_API_BEGIN

struct pmem2_map;

namespace rpm::pmem {

enum class Kind {
    devdax,        ///< a /dev/daxN.M character device
    fsdax,         ///< a file on a DAX-mounted file system
    regular_file,  ///< a file in the page cache (not PM)
    tmpfs_file,    ///< a file in tmpfs or /dev/shm: emulated PM, not durable
};
/// RETURN VALUE: the kind's name ("devdax", "fsdax", "regular_file",
/// "tmpfs_file"; "invalid" for a value outside the enum). ERRORS: none.
std::string_view to_string(Kind k) noexcept;

struct OpenOptions {
    /// Create the file if it is missing (never for devices). Needs size.
    bool create = false;
    /// Bytes to map. For an existing file: 0 (or unset) maps the whole file;
    /// a size larger than the file fails with errc::bad_size unless create is
    /// set, in which case the file is extended. Devices map whole.
    std::size_t size = 0;
    /// The coarsest store granularity the caller accepts; opening fails with
    /// errc::granularity_not_supported when the region's is coarser.
    std::optional<Granularity> required_granularity;
    /// Root of the sysfs tree used to find the region's nd region and its
    /// persistence domain (tests point it at a fixture).
    std::filesystem::path sysfs_root = "/";
};

using persist_fn = void (*)(const void* ptr, std::size_t size);
using flush_fn = void (*)(const void* ptr, std::size_t size);
using drain_fn = void (*)();

/// An open, mapped region. Move-only; unmaps on destruction. A moved-from
/// Region maps nothing: bytes() is empty, data() null, size() 0,
/// deep_flush fails with errc::invalid_argument, and persist, flush and
/// drain (null function pointers) must not be called on it.
class Region {
public:
    /// Open (or create, per opts) the region at `path`.
    ///
    /// RETURN VALUE: the mapped region, or an Error.
    /// ERRORS:
    /// - errc::path_not_found: `path` does not exist and create is not set,
    ///   or a component of it is not a directory
    /// - errc::invalid_argument: create set with size 0, or create on a
    ///   device; a path that is neither a regular file nor a device (a
    ///   directory, a FIFO), or stopped being a regular file while opened
    /// - errc::bad_size: size larger than an existing file without create, or
    ///   not a multiple of the mapping alignment the file requires; an empty
    ///   file opened with size 0; no room to extend the file (EFBIG, ENOSPC);
    ///   libpmem2's length and range checks
    /// - errc::not_pmem: a device that is not a devdax device (e.g. /dev/sda),
    ///   or a file type libpmem2 refuses
    /// - errc::granularity_not_supported: required_granularity is finer than
    ///   the region offers
    /// - errc::permission_denied: the OS refused to open or map the path
    ///   (EACCES, EPERM, EROFS)
    /// - errc::io_error: any other errno of stat, open or posix_fallocate
    ///   (detail: the call, the path and strerror)
    /// - errc::pmem_failed: any other libpmem2 failure (detail says which)
    /// A file this call created is removed again when it fails.
    static Result<Region> open(const std::filesystem::path& path, const OpenOptions& opts = {});

    /// Take over `other`'s mapping; `other` is left moved-from.
    /// RETURN VALUE: none (a constructor). ERRORS: none.
    Region(Region&& other) noexcept;
    /// Unmap this region, then take over `other`'s mapping.
    /// RETURN VALUE: *this. ERRORS: none.
    Region& operator=(Region&& other) noexcept;
    /// Deleted: a Region is move-only. RETURN VALUE: none. ERRORS: none (it
    /// cannot be called).
    Region(const Region&) = delete;
    /// Deleted: a Region is move-only. RETURN VALUE: none. ERRORS: none (it
    /// cannot be called).
    Region& operator=(const Region&) = delete;
    /// Unmap the region and close its descriptors; persists nothing.
    /// RETURN VALUE: none. ERRORS: none.
    ~Region();

    /// RETURN VALUE: the mapped bytes, {data(), size()}; empty when
    /// moved-from. ERRORS: none.
    [[nodiscard]] std::span<std::byte> bytes() const noexcept;
    /// RETURN VALUE: the mapping's address; nullptr when moved-from.
    /// ERRORS: none.
    [[nodiscard]] void* data() const noexcept;
    /// RETURN VALUE: the mapped length in bytes (a device's or file's whole
    /// size, or OpenOptions::size); 0 when moved-from. ERRORS: none.
    [[nodiscard]] std::size_t size() const noexcept;
    /// RETURN VALUE: what the region is, as open found it. ERRORS: none.
    [[nodiscard]] Kind kind() const noexcept { return kind_; }
    /// RETURN VALUE: the store granularity libpmem2 gave the mapping.
    /// ERRORS: none.
    [[nodiscard]] Granularity granularity() const noexcept { return granularity_; }
    /// The domain: from the nd region when the region is in one (weakened to
    /// what the granularity allows), not_pmem for page granularity, unknown
    /// otherwise.
    /// RETURN VALUE: that domain. ERRORS: none.
    [[nodiscard]] PersistenceDomain domain() const noexcept { return domain_; }
    /// The nd region holding it ("region0"), empty when none.
    /// RETURN VALUE: that name. ERRORS: none.
    [[nodiscard]] const std::string& nd_region() const noexcept { return nd_region_; }
    /// RETURN VALUE: the path given to open(). ERRORS: none.
    [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

    /// Make [ptr, ptr+size) durable: pmem2's persist (flush + drain, or msync
    /// for page granularity). The range must lie inside the region. On a
    /// moved-from Region (no mapping) persist, flush and drain do nothing.
    /// RETURN VALUE: none. ERRORS: none reported: libpmem2's persist has no
    /// status (a failed msync of a page-granularity region goes unseen).
    void persist(const void* ptr, std::size_t size) const noexcept { persist_(ptr, size); }
    /// pmem2's flush of [ptr, ptr+size): the first half of persist; durable
    /// only after a drain(). The range must lie inside the region.
    /// RETURN VALUE: none. ERRORS: none reported (as persist).
    void flush(const void* ptr, std::size_t size) const noexcept { flush_(ptr, size); }
    /// pmem2's drain: waits for the flushes issued before it.
    /// RETURN VALUE: none. ERRORS: none reported.
    void drain() const noexcept { drain_(); }
    /// The hot-path function pointers themselves, for callers that keep them.
    /// RETURN VALUE: pmem2's persist function for this mapping; one that
    /// does nothing when moved-from (never null). ERRORS: none.
    [[nodiscard]] persist_fn persist_function() const noexcept { return persist_; }
    /// RETURN VALUE: pmem2's flush function for this mapping; one that does
    /// nothing when moved-from (never null). ERRORS: none.
    [[nodiscard]] flush_fn flush_function() const noexcept { return flush_; }
    /// RETURN VALUE: pmem2's drain function for this mapping; one that does
    /// nothing when moved-from (never null). ERRORS: none.
    [[nodiscard]] drain_fn drain_function() const noexcept { return drain_; }

    /// Flush the memory controller's write-pending queues for the range.
    /// devdax: a write to its nd region's deep_flush control, kept open from
    /// open() (pmem2_deep_flush would look the region up through libndctl
    /// on every call); a region without that control (no flush hints, e.g.
    /// legacy e820 PM) has nothing software can drain, and the call
    /// succeeds, as pmem2_deep_flush does. Files: pmem2_deep_flush (msync).
    /// (A devdax region whose control could not be opened at open(), or
    /// whose nd region was not found, also goes through pmem2_deep_flush.)
    /// RETURN VALUE: {} once the write-pending queues (or the msync) are done.
    /// ERRORS: errc::invalid_argument for a range outside the region, or a
    /// moved-from Region; errc::deep_flush_failed when the drain fails: the
    /// write to the deep_flush control, or pmem2_deep_flush, failed (detail
    /// says why; whatever libpmem2 error it was).
    Result<void> deep_flush(const void* ptr, std::size_t size) const;

private:
    Region() = default;
    Result<void> drain_write_pending_queues() const;
    friend struct RegionBuilder;

    pmem2_map* map_ = nullptr;
    int fd_ = -1;
    std::filesystem::path path_;
    Kind kind_ = Kind::regular_file;
    Granularity granularity_ = Granularity::page;
    PersistenceDomain domain_ = PersistenceDomain::not_pmem;
    std::string nd_region_;
    persist_fn persist_ = nullptr;
    flush_fn flush_ = nullptr;
    drain_fn drain_ = nullptr;
    /// devdax only: the deep_flush control's fd, or -1; resolved says
    /// whether it was looked up (else pmem2_deep_flush does the work).
    int deep_flush_fd_ = -1;
    bool deep_flush_resolved_ = false;
};

} // namespace rpm::pmem

RPM_API_END
