// Deciding what Region::open maps before libpmem2 sees it. Devices are
// classified from stat(2) alone, before anything is opened, so a mistyped
// /dev/sda is never opened for writing.
#include "pmem/open_path.hpp"

#include "pmem/domain.hpp"

#include <cerrno>
#include <cstring>
#include <limits>
#include <string>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <unistd.h>

namespace rpm::pmem::detail {
namespace {

namespace fs = std::filesystem;

constexpr long kTmpfsMagic = 0x01021994;  // TMPFS_MAGIC, <linux/magic.h>

FileType type_of(mode_t mode) noexcept {
    if (S_ISREG(mode)) return FileType::regular;
    if (S_ISCHR(mode)) return FileType::char_device;
    if (S_ISBLK(mode)) return FileType::block_device;
    if (S_ISDIR(mode)) return FileType::directory;
    return FileType::other;
}

PathInfo info_of(const struct stat& st) noexcept {
    PathInfo info;
    info.type = type_of(st.st_mode);
    info.size = static_cast<std::uint64_t>(st.st_size);
    const bool device = info.type == FileType::char_device || info.type == FileType::block_device;
    const dev_t dev = device ? st.st_rdev : st.st_dev;
    info.major = ::major(dev);
    info.minor = ::minor(dev);
    return info;
}

// An errno from open/stat/fallocate as an rpm Error naming the path.
Error os_error(int err, std::string_view what, const fs::path& path) {
    std::string detail = std::string(what) + " " + path.string() + ": " + std::strerror(err);
    switch (err) {
    case ENOENT:
    case ENOTDIR: return {errc::path_not_found, std::move(detail)};
    case EACCES:
    case EPERM:
    case EROFS: return {errc::permission_denied, std::move(detail)};
    case EFBIG:
    case ENOSPC: return {errc::bad_size, std::move(detail)};
    default: return {errc::io_error, std::move(detail)};
    }
}

Result<PathKind> classify_device(const fs::path& path, const PathInfo& info,
                               const OpenOptions& opts) {
    if (opts.create)
        return Error(errc::invalid_argument,
                     path.string() + " is a device; create applies to files only");
    if (info.type == FileType::block_device)
        return Error(errc::not_pmem,
                     path.string() +
                         " is a block device; map persistent memory through a devdax device "
                         "(/dev/daxN.M) or a file on a DAX-mounted file system (mount -o dax)");
    if (!is_devdax(opts.sysfs_root, info.major, info.minor))
        return Error(errc::not_pmem,
                     path.string() + " is a character device that is not a devdax device");
    return PathKind::devdax;
}

Result<std::size_t> check_file_length(const fs::path& path, std::uint64_t file_size,
                                      std::size_t want) {
    const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    const std::uint64_t length = want != 0 ? want : file_size;
    if (length == 0)
        return Error(errc::bad_size,
                     path.string() + ": file is empty; open it with create and a size");
    // libpmem2 maps files in whole pages; say so before it does, with numbers.
    if (length % page != 0)
        return Error(errc::bad_size, path.string() + ": length " + std::to_string(length) +
                                         " is not a multiple of the mapping alignment (" +
                                         std::to_string(page) + " bytes)");
    return want;
}

Result<void> extend(int fd, const fs::path& path, std::size_t size) {
    if (size > static_cast<std::uint64_t>(std::numeric_limits<off_t>::max()))
        return Error(errc::bad_size,
                     path.string() + ": size " + std::to_string(size) + " is too large");
    // Allocate rather than truncate: a sparse file could fail a later store
    // into the mapping with SIGBUS when the file system is full.
    const int err = ::posix_fallocate(fd, 0, static_cast<off_t>(size));
    if (err != 0) return os_error(err, "cannot extend", path);
    return {};
}

}  // namespace

Result<PathInfo> inspect(const fs::path& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) return info_of(st);
    if (errno == ENOENT) return PathInfo{};
    return os_error(errno, "cannot stat", path);
}

Result<PathInfo> inspect(int fd, const fs::path& path) {
    struct stat st {};
    if (::fstat(fd, &st) == 0) return info_of(st);
    return os_error(errno, "cannot stat", path);
}

Result<PathKind> classify(const fs::path& path, const PathInfo& info, const OpenOptions& opts) {
    if (opts.create && opts.size == 0)
        return Error(errc::invalid_argument, path.string() + ": create needs a non-zero size");
    switch (info.type) {
    case FileType::missing:
        if (!opts.create) return Error(errc::path_not_found, path.string());
        return PathKind::new_file;
    case FileType::regular: return PathKind::existing_file;
    case FileType::char_device:
    case FileType::block_device: return classify_device(path, info, opts);
    case FileType::directory:
    case FileType::other: break;
    }
    return Error(errc::invalid_argument, path.string() + " is neither a regular file nor a device");
}

Result<Opened> open_target(const fs::path& path, PathKind target) {
    // 0600: a pool holds the application's data; others get no access by default.
    constexpr mode_t mode = S_IRUSR | S_IWUSR;
    if (target == PathKind::new_file) {
        const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC | O_CREAT | O_EXCL, mode);
        if (fd >= 0) return Opened{UniqueFd(fd), true};
        // Someone else created it since stat(): open theirs instead.
        if (errno != EEXIST) return os_error(errno, "cannot create", path);
    }
    const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) return os_error(errno, "cannot open", path);
    return Opened{UniqueFd(fd), false};
}

Result<std::size_t> prepare_length(int fd, const fs::path& path, PathKind target,
                                   const OpenOptions& opts) {
    if (target == PathKind::devdax) return std::size_t{0};
    auto info = inspect(fd, path);
    if (!info) return info.error();
    if (info->type != FileType::regular)
        return Error(errc::invalid_argument, path.string() + " is no longer a regular file");
    if (opts.size > info->size && !opts.create)
        return Error(errc::bad_size, path.string() + " is " + std::to_string(info->size) +
                                         " bytes; " + std::to_string(opts.size) +
                                         " were asked for (set create to extend it)");
    auto length = check_file_length(path, info->size, opts.size);
    if (!length) return length;
    if (opts.size > info->size) {
        if (auto r = extend(fd, path, opts.size); !r) return r.error();
    }
    return length;
}

bool on_tmpfs(int fd) noexcept {
    struct statfs fs_info {};
    return ::fstatfs(fd, &fs_info) == 0 && fs_info.f_type == kTmpfsMagic;
}

}  // namespace rpm::pmem::detail
