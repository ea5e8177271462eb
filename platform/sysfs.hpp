// Root-relative sysfs reads.
//
// Every path given here is relative to a root ("/" on a machine, a fixture
// tree in tests). Paths are resolved component by component, following
// symlinks the way the kernel would but inside the root: an absolute link
// target is taken relative to the root, and a ".." above the root is an
// error. So a fixture tree can never make a test read the host's /sys.
#pragma once

#include <rpm/result.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace rpm::platform::sysfs {

namespace fs = std::filesystem;

/// Where the nvdimm bus lists its regions and nvdimms, relative to a root
/// (NFIT, e820 and CXL alike).
inline const fs::path kNdDevices = "sys/bus/nd/devices";

/// Resolve `rel` under `root` to a canonical root-relative path with no
/// symlinks ("sys/devices/pci0000:17/0000:17:00.0/0000:18:00.0").
/// path_not_found when a component is missing; sysfs_unreadable when a
/// link cannot be read, the chain loops, or it climbs above the root.
Result<fs::path> resolve(const fs::path& root, const fs::path& rel);

/// The text of a file, without leading and trailing whitespace.
Result<std::string> read_text(const fs::path& root, const fs::path& rel);

/// Up to `max` bytes of a file. A short read is not an error: sysfs PCI
/// `config` files return 64 bytes to unprivileged readers.
Result<std::vector<std::uint8_t>> read_bytes(const fs::path& root, const fs::path& rel,
                                             std::size_t max = 4096);

/// The entry names of a directory, sorted.
Result<std::vector<std::string>> list_dir(const fs::path& root, const fs::path& rel);

/// Whether `rel` exists under the root (following links inside the root).
bool exists(const fs::path& root, const fs::path& rel);

/// Whitespace trimmed from both ends.
std::string_view trim(std::string_view s) noexcept;

/// The error for `path` with an errno value: path_not_found for ENOENT and
/// ENOTDIR, sysfs_unreadable otherwise; the detail names path and reason.
Error path_error(const fs::path& path, int err);

} // namespace rpm::platform::sysfs
