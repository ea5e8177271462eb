// Reading controller registers from a BAR file. A plain file (a fixture,
// or an IO BAR) answers pread; sysfs resourceN of a memory BAR has no
// read(), only mmap, so a refused pread falls back to a read-only shared
// mapping of the first page(s). Nothing is ever written.
#include "core/unique_fd.hpp"
#include "p2p/nvme_registers.hpp"

#include "platform/sysfs.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <fcntl.h>
#include <sstream>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace rpm::p2p::detail {
namespace {

Error os_error(const fs::path& file, int err) {
    if (err == EACCES || err == EPERM)
        return Error(errc::permission_denied,
                     file.string() + ": reading controller registers needs root");
    if (err == ENOENT || err == ENOTDIR) return platform::sysfs::path_error(file, err);
    return Error(errc::io_error, file.string() + ": " + std::generic_category().message(err));
}

Error too_short(const fs::path& file, std::uint64_t size, std::uint32_t offset) {
    char text[96];
    std::snprintf(text, sizeof text, ": %llu bytes, too short for the register at 0x%x",
                  static_cast<unsigned long long>(size), static_cast<unsigned>(offset));
    return Error(errc::bad_size, file.string() + text);
}

std::uint32_t le32(const unsigned char* b) {
    return static_cast<std::uint32_t>(b[0]) | static_cast<std::uint32_t>(b[1]) << 8 |
           static_cast<std::uint32_t>(b[2]) << 16 | static_cast<std::uint32_t>(b[3]) << 24;
}

// Ok(value), or errno (0: the file ended before the register).
Result<std::uint32_t> pread_u32(int fd, std::uint32_t offset, int& err) {
    unsigned char b[4];
    ssize_t n;
    do n = ::pread(fd, b, sizeof b, offset);
    while (n < 0 && errno == EINTR);
    err = n < 0 ? errno : 0;
    if (n != static_cast<ssize_t>(sizeof b)) return Error(errc::io_error);
    return le32(b);
}

Result<std::vector<std::uint32_t>> by_mmap(int fd, const fs::path& file,
                                           std::span<const std::uint32_t> offsets) {
    const std::uint32_t last = *std::max_element(offsets.begin(), offsets.end());
    const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    const std::size_t length = (last + 4 + page - 1) / page * page;
    // A mapping past the end of a regular file faults on access; a sysfs
    // resource file's size is its BAR's.
    struct stat st {};
    if (::fstat(fd, &st) == 0 && st.st_size > 0 &&
        static_cast<std::uint64_t>(st.st_size) < last + 4)
        return too_short(file, static_cast<std::uint64_t>(st.st_size), last);
    void* base = ::mmap(nullptr, length, PROT_READ, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) return os_error(file, errno);
    std::vector<std::uint32_t> values;
    for (std::uint32_t off : offsets) {
        // One aligned 32-bit load per register, as MMIO wants.
        const auto* reg =
            reinterpret_cast<const volatile std::uint32_t*>(static_cast<char*>(base) + off);
        const std::uint32_t value = *reg;  // little-endian hosts: the bus order
        values.push_back(value);
    }
    ::munmap(base, length);
    return values;
}

Result<std::vector<std::uint32_t>> by_pread(int fd, const fs::path& file,
                                            std::span<const std::uint32_t> offsets, bool& refused) {
    std::vector<std::uint32_t> values;
    for (std::uint32_t off : offsets) {
        int err = 0;
        auto v = pread_u32(fd, off, err);
        if (v) {
            values.push_back(*v);
            continue;
        }
        refused = err == EINVAL || err == EIO || err == ENXIO || err == EOPNOTSUPP;
        if (err != 0) return os_error(file, err);
        struct stat st {};
        return too_short(file, ::fstat(fd, &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0,
                         off);
    }
    return values;
}

} // namespace

Result<std::vector<std::uint32_t>> read_registers(const fs::path& file,
                                                  std::span<const std::uint32_t> offsets,
                                                  bool force_mmap) {
    if (offsets.empty()) return std::vector<std::uint32_t>{};
    UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) return os_error(file, errno);
    if (force_mmap) return by_mmap(fd.get(), file, offsets);
    bool refused = false;
    auto values = by_pread(fd.get(), file, offsets, refused);
    if (!values && refused) return by_mmap(fd.get(), file, offsets);
    return values;
}

std::optional<std::uint64_t> bar_size(std::string_view resource_table, int bar) {
    std::istringstream in{std::string(resource_table)};
    std::string line;
    for (int i = 0; i <= bar; ++i)
        if (!std::getline(in, line)) return std::nullopt;
    std::istringstream fields(line);
    std::uint64_t start = 0, end = 0;
    if (!(fields >> std::hex >> start >> end) || end <= start) return std::nullopt;
    return end - start + 1;
}

} // namespace rpm::p2p::detail
