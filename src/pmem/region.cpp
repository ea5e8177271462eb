// Region: open pipeline and the mapped region's lifetime.
//
// open() decides what the path is (detail/target), maps it with libpmem2
// (detail/mapping) and then names what it got: kind, granularity, domain.
#include <rpm/platform.hpp>
#include <rpm/pmem.hpp>

#include "pmem/domain.hpp"
#include "pmem/handles.hpp"
#include "pmem/mapping.hpp"
#include "pmem/pmem2_error.hpp"
#include "pmem/open_path.hpp"

#include <cstdint>
#include <string>
#include <system_error>
#include <utility>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace rpm::pmem {

namespace fs = std::filesystem;

std::string_view to_string(Kind k) noexcept {
    switch (k) {
    case Kind::devdax: return "devdax";
    case Kind::fsdax: return "fsdax";
    case Kind::regular_file: return "regular_file";
    case Kind::tmpfs_file: return "tmpfs_file";
    }
    return "invalid";
}

/// Fills a Region step by step; a failed step leaves the Region to release
/// what was acquired so far.
struct RegionBuilder {
    const fs::path& path;
    const OpenOptions& opts;
    Region region{};
    bool created = false;

    Result<Region> build() {
        if (auto r = run(); !r) {
            discard_created();
            return r.error();
        }
        return std::move(region);
    }

private:
    Result<void> run() {
        auto info = detail::inspect(path);
        if (!info) return info.error();
        auto target = detail::classify(path, *info, opts);
        if (!target) return target.error();
        auto opened = detail::open_target(path, *target);
        if (!opened) return opened.error();
        created = opened->created;
        region.fd_ = opened->fd.release();
        region.path_ = path;
        auto length = detail::prepare_length(region.fd_, path, *target, opts);
        if (!length) return length.error();
        auto mapping = detail::map_fd(region.fd_, path, *length, opts.required_granularity);
        if (!mapping) return mapping.error();
        region.map_ = mapping->map.release();
        region.granularity_ = mapping->granularity;
        take_functions();
        return describe(*target);
    }

    void take_functions() {
        region.persist_ = pmem2_get_persist_fn(region.map_);
        region.flush_ = pmem2_get_flush_fn(region.map_);
        region.drain_ = pmem2_get_drain_fn(region.map_);
    }

    // Kind, nd region and domain of the mapped region.
    Result<void> describe(detail::PathKind target) {
        auto info = detail::inspect(region.fd_, path);
        if (!info) return info.error();
        const bool devdax = target == detail::PathKind::devdax;
        region.kind_ = kind_of(devdax);
        // Looked up even for page granularity: "region0, but not_pmem" tells
        // the user the file sits on PM mounted without -o dax.
        auto nd = platform::nd_region_of(opts.sysfs_root, info->major, info->minor, devdax);
        region.nd_region_ = nd.value_or(std::string());
        const auto nd_domain = nd ? detail::read_nd_domain(opts.sysfs_root, *nd) : std::nullopt;
        region.domain_ = detail::region_domain(region.granularity_, nd_domain);
        if (devdax && nd) resolve_deep_flush(*nd);
        return {};
    }

    // Opened once: the drain must stay a single write on the flush path.
    // Unopenable (permissions): left to pmem2_deep_flush, which reports it.
    void resolve_deep_flush(const std::string& nd) {
        const auto control = detail::nd_deep_flush_file(opts.sysfs_root, nd);
        if (!control) {
            region.deep_flush_resolved_ = true;
            return;
        }
        const int fd = ::open(control->c_str(), O_WRONLY | O_CLOEXEC);
        if (fd < 0) return;
        region.deep_flush_fd_ = fd;
        region.deep_flush_resolved_ = true;
    }

    Kind kind_of(bool devdax) const noexcept {
        if (devdax) return Kind::devdax;
        if (detail::on_tmpfs(region.fd_)) return Kind::tmpfs_file;
        // libpmem2 gives finer than page granularity only to DAX mappings.
        return region.granularity_ == Granularity::page ? Kind::regular_file : Kind::fsdax;
    }

    // A file this call created is removed again when the open fails, so a
    // failed create leaves nothing behind.
    void discard_created() {
        if (!created) return;
        region = Region{};
        std::error_code ec;
        fs::remove(path, ec);
    }
};

Result<Region> Region::open(const fs::path& path, const OpenOptions& opts) {
    return RegionBuilder{path, opts}.build();
}

namespace {

// What a moved-from Region persists through: there is no mapping, so there
// is nothing to do, and the hot path keeps its plain, unchecked call.
void persist_nothing(const void*, std::size_t) noexcept {}
void drain_nothing() noexcept {}

} // namespace

Region::Region(Region&& other) noexcept
    : map_(std::exchange(other.map_, nullptr)), fd_(std::exchange(other.fd_, -1)),
      path_(std::move(other.path_)), kind_(other.kind_), granularity_(other.granularity_),
      domain_(other.domain_), nd_region_(std::move(other.nd_region_)),
      persist_(std::exchange(other.persist_, &persist_nothing)),
      flush_(std::exchange(other.flush_, &persist_nothing)), drain_(std::exchange(other.drain_, &drain_nothing)),
      deep_flush_fd_(std::exchange(other.deep_flush_fd_, -1)),
      deep_flush_resolved_(std::exchange(other.deep_flush_resolved_, false)) {}

Region& Region::operator=(Region&& other) noexcept {
    if (this == &other) return *this;
    Region old(std::move(*this));  // released at the end of this scope
    map_ = std::exchange(other.map_, nullptr);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
    kind_ = other.kind_;
    granularity_ = other.granularity_;
    domain_ = other.domain_;
    nd_region_ = std::move(other.nd_region_);
    persist_ = std::exchange(other.persist_, &persist_nothing);
    flush_ = std::exchange(other.flush_, &persist_nothing);
    drain_ = std::exchange(other.drain_, &drain_nothing);
    deep_flush_fd_ = std::exchange(other.deep_flush_fd_, -1);
    deep_flush_resolved_ = std::exchange(other.deep_flush_resolved_, false);
    return *this;
}

Region::~Region() {
    if (map_ != nullptr) pmem2_map_delete(&map_);
    if (fd_ >= 0) ::close(fd_);
    if (deep_flush_fd_ >= 0) ::close(deep_flush_fd_);
}

std::span<std::byte> Region::bytes() const noexcept {
    return {static_cast<std::byte*>(data()), size()};
}

void* Region::data() const noexcept {
    return map_ != nullptr ? pmem2_map_get_address(map_) : nullptr;
}

std::size_t Region::size() const noexcept { return map_ != nullptr ? pmem2_map_get_size(map_) : 0; }

Result<void> Region::deep_flush(const void* ptr, std::size_t size) const {
    const auto base = reinterpret_cast<std::uintptr_t>(data());
    const auto start = reinterpret_cast<std::uintptr_t>(ptr);
    const std::size_t total = this->size();
    // Written to avoid overflow: start - base is checked before it is used.
    if (map_ == nullptr || start < base || start - base > total || size > total - (start - base))
        return Error(errc::invalid_argument,
                     "deep_flush range is outside region " + path_.string());
    if (deep_flush_resolved_) return drain_write_pending_queues();
    if (int rc = pmem2_deep_flush(map_, const_cast<void*>(ptr), size); rc != 0) {
        Error err = detail::pmem2_error(rc, "pmem2_deep_flush on " + path_.string());
        return Error(errc::deep_flush_failed, err.detail());
    }
    return {};
}

// The kernel drains every WPQ of the region's DIMMs (nvdimm_flush) when
// "1" is written to the control; the range does not narrow it.
Result<void> Region::drain_write_pending_queues() const {
    if (deep_flush_fd_ < 0) return {};  // no control: nothing software can drain
    if (::pwrite(deep_flush_fd_, "1", 1, 0) == 1) return {};
    const int err = errno;
    return Error(errc::deep_flush_failed, "writing the deep_flush control of nd region " + nd_region_ + " for " +
                                              path_.string() + ": " + std::generic_category().message(err));
}

}  // namespace rpm::pmem
