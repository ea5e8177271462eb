// BlockFile: open, create and measure a block backend's file or device.
#include "nvmf/engine/block_file.hpp"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>
#include <utility>

namespace rpm::nvmf::detail {
namespace {

namespace fs = std::filesystem;

Error os_error(int err, const fs::path& path, const std::string& what) {
    const std::string detail = what + " " + path.string() + ": " + std::strerror(err);
    if (err == ENOENT) return {errc::path_not_found, detail};
    if (err == EACCES || err == EPERM || err == EROFS) return {errc::permission_denied, detail};
    return {errc::io_error, detail};
}

// A new file of `size` bytes; opened again afterwards like any other, so
// the O_DIRECT attempt sees a file that already exists.
Result<void> create_file(const fs::path& path, std::uint64_t size, OpenFn open_fn) {
    if (size == 0) return Error(errc::invalid_argument, "create " + path.string() + ": size 0");
    const int fd = open_fn(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return errno == EEXIST ? Result<void>{} : os_error(errno, path, "create");
    const bool sized = ::ftruncate(fd, static_cast<off_t>(size)) == 0;
    const int err = errno;
    ::close(fd);
    if (sized) return {};
    ::unlink(path.c_str());
    return os_error(err, path, "size");
}

// O_DIRECT's offset alignment for a regular file (statx, Linux 6.1+); 512,
// the common logical block size, where the kernel does not say.
std::uint32_t file_dio_alignment(int fd) {
    struct statx stx{};
    if (::statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) == 0 && (stx.stx_mask & STATX_DIOALIGN) &&
        stx.stx_dio_offset_align != 0)
        return stx.stx_dio_offset_align;
    return 512;
}

} // namespace

Result<BlockFile> BlockFile::open(const NamespaceSpec& spec, OpenFn open_fn) {
    if (open_fn == nullptr) open_fn = [](const char* p, int f, mode_t m) { return ::open(p, f, m); };
    BlockFile f;
    std::error_code ec;
    f.path_ = fs::absolute(spec.path, ec);
    if (ec) f.path_ = spec.path;
    if (spec.create && !fs::exists(f.path_, ec))
        if (auto made = create_file(f.path_, spec.size, open_fn); !made) return made.error();
    if (auto opened = f.open_fd(open_fn); !opened) return opened.error();
    if (auto measured = f.measure(); !measured) return measured.error();
    return f;
}

Result<void> BlockFile::open_fd(OpenFn open_fn) {
    struct stat st{};
    if (::stat(path_.c_str(), &st) != 0) return os_error(errno, path_, "stat");
    if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))
        return Error(errc::invalid_argument, path_.string() + " is neither a regular file nor a block device");
    device_ = S_ISBLK(st.st_mode);
    fd_ = open_fn(path_.c_str(), O_RDWR | O_CLOEXEC | O_DIRECT, 0);
    direct_ = fd_ >= 0;
    if (fd_ < 0 && errno == EINVAL) {
        buffered_reason_ = "the file system refused O_DIRECT (EINVAL)";
        fd_ = open_fn(path_.c_str(), O_RDWR | O_CLOEXEC, 0);
    }
    if (fd_ < 0) return os_error(errno, path_, "open");
    return {};
}

Result<void> BlockFile::measure() {
    if (device_) {
        int lbs = 0;
        if (::ioctl(fd_, BLKGETSIZE64, &bytes_) != 0) return os_error(errno, path_, "BLKGETSIZE64 of");
        if (::ioctl(fd_, BLKSSZGET, &lbs) != 0) return os_error(errno, path_, "BLKSSZGET of");
        logical_block_ = static_cast<std::uint32_t>(lbs);
    } else {
        struct stat st{};
        if (::fstat(fd_, &st) != 0) return os_error(errno, path_, "fstat");
        bytes_ = static_cast<std::uint64_t>(st.st_size);
        if (direct_) logical_block_ = file_dio_alignment(fd_);
    }
    if (bytes_ == 0) return Error(errc::bad_size, path_.string() + " is empty");
    return {};
}

BlockFile::BlockFile(BlockFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), direct_(other.direct_), device_(other.device_), bytes_(other.bytes_),
      logical_block_(other.logical_block_), path_(std::move(other.path_)),
      buffered_reason_(std::move(other.buffered_reason_)) {}

BlockFile& BlockFile::operator=(BlockFile&& other) noexcept {
    if (this != &other) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = std::exchange(other.fd_, -1);
        direct_ = other.direct_;
        device_ = other.device_;
        bytes_ = other.bytes_;
        logical_block_ = other.logical_block_;
        path_ = std::move(other.path_);
        buffered_reason_ = std::move(other.buffered_reason_);
    }
    return *this;
}

BlockFile::~BlockFile() {
    if (fd_ >= 0) ::close(fd_);
}

} // namespace rpm::nvmf::detail
