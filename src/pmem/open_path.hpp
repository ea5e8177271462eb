// What Region::open is asked to map, decided before libpmem2 sees it: the
// path's file type, whether it may be opened with the options given, and
// the length to map.
#pragma once

#include "pmem/handles.hpp"

#include <rpm/pmem.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>

namespace rpm::pmem::detail {

enum class FileType { missing, regular, char_device, block_device, directory, other };

struct PathInfo {
    FileType type = FileType::missing;
    std::uint64_t size = 0;  ///< bytes, for a regular file
    /// The device to look up in sysfs: st_dev for a file (the block device
    /// holding it), st_rdev for a device.
    unsigned major = 0;
    unsigned minor = 0;
};

/// What open() maps.
enum class PathKind { existing_file, new_file, devdax };

/// stat(2) of `path`; a missing path is FileType::missing, not an error.
Result<PathInfo> inspect(const std::filesystem::path& path);
/// fstat(2) of an open descriptor.
Result<PathInfo> inspect(int fd, const std::filesystem::path& path);

/// Whether `path` (as `info` describes it) may be opened with `opts`, and
/// as what. Devices are told apart through opts.sysfs_root.
Result<PathKind> classify(const std::filesystem::path& path, const PathInfo& info,
                        const OpenOptions& opts);

/// The opened target, and whether this call created the file.
struct Opened {
    UniqueFd fd;
    bool created = false;
};
Result<Opened> open_target(const std::filesystem::path& path, PathKind target);

/// Check (and with opts.create, extend) the open file `fd` so `opts.size`
/// bytes can be mapped. Returns the length to give libpmem2, 0 for the
/// whole file or device.
Result<std::size_t> prepare_length(int fd, const std::filesystem::path& path, PathKind target,
                                   const OpenOptions& opts);

/// Whether the open file lives in tmpfs (emulated PM, gone at reboot).
bool on_tmpfs(int fd) noexcept;

}  // namespace rpm::pmem::detail
