// Reading a region's backing store directly (a file, or a devdax/fsdax
// device that read(2) cannot serve), to check that bytes really landed in
// the server's memory, not only that the server says so.
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <string>

namespace rpm::test {

/// n bytes at off of path, through a mapping (devdax needs 2 MiB-aligned
/// mappings, so map the aligned 2 MiB window around them). Empty on error.
inline std::string read_backing(const std::filesystem::path& path, std::size_t off, std::size_t n) {
    constexpr std::size_t kWindow = std::size_t{2} << 20;
    const std::size_t base = off / kWindow * kWindow;
    if (off + n > base + kWindow) return {};
    const int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0) return {};
    void* p = ::mmap(nullptr, kWindow, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(base));
    ::close(fd);
    if (p == MAP_FAILED) return {};
    std::string s(n, '\0');
    std::memcpy(s.data(), static_cast<const char*>(p) + (off - base), n);
    ::munmap(p, kWindow);
    return s;
}

/// The size the kernel gives a devdax (/sys/bus/dax) or pmem block device
/// (/sys/block, 512-byte sectors), or a regular file's (one on a DAX file
/// system, tests/lab/cxl_fsdax.sh); 0 when it is none of these.
inline std::uint64_t device_size(const std::filesystem::path& dev) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(dev, ec)) {
        const auto n = std::filesystem::file_size(dev, ec);
        return ec ? 0 : n;
    }
    const auto name = dev.filename().string();
    std::uint64_t v = 0;
    if (std::ifstream dax("/sys/bus/dax/devices/" + name + "/size"); dax >> v) return v;
    if (std::ifstream blk("/sys/block/" + name + "/size"); blk >> v) return v * 512;
    return 0;
}

} // namespace rpm::test
