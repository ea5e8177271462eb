// Persistent-memory regions as the nd bus shows them
// (<root>/sys/bus/nd/devices/regionN).
#pragma once

#include <rpm/platform.hpp>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace rpm::platform {

/// Every region, in numeric order (region2 before region10). No nd bus is
/// the normal state of a machine without PM: zero regions, nothing in
/// `unreadable`; a bus directory that exists but cannot be listed is noted.
std::vector<NdRegion> read_nd_regions(const std::filesystem::path& root,
                                      std::vector<std::string>& unreadable);

/// One region, by name ("region0"); missing files leave their fields at
/// the defaults and add a line to `unreadable`.
NdRegion read_nd_region(const std::filesystem::path& root, const std::string& name,
                        std::vector<std::string>& unreadable);

/// The block (pmemN) and device-dax (daxN.M) devices inside a region
/// directory, sorted; tolerant of anything missing.
std::vector<std::string> region_devices(const std::filesystem::path& root,
                                        const std::filesystem::path& region_dir);

/// Orders names by prefix, then by the number that ends them.
bool numeric_name_less(std::string_view a, std::string_view b) noexcept;

} // namespace rpm::platform
