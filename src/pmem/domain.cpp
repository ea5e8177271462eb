// A region's persistence domain and the sysfs facts it is built from. sysfs
// is read through platform/sysfs, which keeps every lookup inside the root.
#include "pmem/domain.hpp"

#include "platform/sysfs.hpp"

#include <string>

namespace rpm::pmem::detail {

namespace fs = std::filesystem;

PersistenceDomain region_domain(Granularity g,
                                std::optional<PersistenceDomain> nd_domain) noexcept {
    // The page cache is never persistent, whatever the device below it is.
    if (g == Granularity::page) return PersistenceDomain::not_pmem;
    return weaker(nd_domain.value_or(PersistenceDomain::unknown), domain_cap(g));
}

std::optional<PersistenceDomain> read_nd_domain(const fs::path& sysfs_root,
                                                const std::string& region) {
    auto text = platform::sysfs::read_text(sysfs_root, fs::path("sys/bus/nd/devices") / region /
                                                           "persistence_domain");
    if (!text) return std::nullopt;
    return parse_persistence_domain(*text);
}

std::optional<fs::path> nd_deep_flush_file(const fs::path& sysfs_root, const std::string& region) {
    // resolve() fails for a missing file and keeps the lookup inside the root.
    auto rel = platform::sysfs::resolve(sysfs_root, fs::path("sys/bus/nd/devices") / region / "deep_flush");
    if (!rel) return std::nullopt;
    return sysfs_root / *rel;
}

bool is_devdax(const fs::path& sysfs_root, unsigned major, unsigned minor) {
    const fs::path link = fs::path("sys/dev/char") /
                          (std::to_string(major) + ":" + std::to_string(minor)) / "subsystem";
    const auto subsystem = platform::sysfs::resolve(sysfs_root, link);
    // sys/class/dax on most kernels, sys/bus/dax without the compat classes.
    return subsystem && subsystem->filename() == "dax";
}

}  // namespace rpm::pmem::detail
