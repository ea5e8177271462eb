// A region's persistence domain, from its granularity and its nd region.
#pragma once

#include <rpm/persistence.hpp>

#include <filesystem>
#include <optional>
#include <string>

namespace rpm::pmem::detail {

/// The domain a region of granularity `g` can promise, given what its nd
/// region says (`nd_domain`; nullopt when it is in none or the file could
/// not be read). Page granularity is never PM; otherwise the nd region's
/// domain weakened to what the granularity allows (an unknown region stays
/// unknown, as memmap= PM does).
PersistenceDomain region_domain(Granularity g, std::optional<PersistenceDomain> nd_domain) noexcept;

/// <sysfs_root>/sys/bus/nd/devices/<region>/persistence_domain parsed;
/// nullopt when missing, unreadable or not a domain Linux prints.
std::optional<PersistenceDomain> read_nd_domain(const std::filesystem::path& sysfs_root,
                                                const std::string& region);

/// The region's WPQ-drain control, <sysfs_root>/sys/bus/nd/devices/<region>/deep_flush,
/// resolved inside the root; nullopt when the region has none (no flush
/// hints: e.g. legacy e820 PM) or it cannot be resolved.
std::optional<std::filesystem::path> nd_deep_flush_file(const std::filesystem::path& sysfs_root,
                                                        const std::string& region);

/// Whether character device MAJ:MIN is a devdax device: its sysfs
/// `subsystem` link resolves to the dax class (or bus).
bool is_devdax(const std::filesystem::path& sysfs_root, unsigned major, unsigned minor);

}  // namespace rpm::pmem::detail
