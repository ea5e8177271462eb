// Where P2P buffers' memory comes from: a provider's BAR, p2pmem chunks,
// host memory. The files are opened under the manager's root.
#include "core/unique_fd.hpp"
#include "p2p/mapping.hpp"
#include "p2p/suballocator.hpp"

#include "platform/sysfs.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace rpm::p2p::detail {
namespace {

namespace fs = std::filesystem;
namespace sysfs = platform::sysfs;

constexpr std::size_t two_mib = std::size_t{2} << 20;

fs::path device_dir(const std::string& bdf) { return fs::path("sys/bus/pci/devices") / bdf; }

Error open_error(const fs::path& path, int err) {
    const errc code = err == ENOENT || err == ENOTDIR ? errc::path_not_found
                      : err == EACCES || err == EPERM ? errc::permission_denied
                                                      : errc::io_error;
    std::string detail = path.string() + ": " + std::strerror(err);
    if (code == errc::permission_denied) detail += " (mapping device memory needs root)";
    return Error(code, std::move(detail));
}

// The fd is closed on scope exit; the mappings made from it outlive it.
Result<std::uint64_t> open_sized(const fs::path& path, UniqueFd& out) {
    out.reset(::open(path.c_str(), O_RDWR | O_CLOEXEC));
    if (out.get() < 0) return open_error(path, errno);
    struct stat st {};
    if (::fstat(out.get(), &st) != 0) return open_error(path, errno);
    return static_cast<std::uint64_t>(st.st_size);
}

// The kernel refuses (EINVAL) to map a BAR that a driver has claimed when it
// is built with CONFIG_IO_STRICT_DEVMEM, as Debian's is; say what to do.
Error bar_map_error(const fs::path& file, const Error& e) {
    if (e != errc::invalid_argument) return e;
    return Error(errc::io_error,
                 e.detail() + " (the kernel refuses to map a BAR its driver has claimed when "
                              "built with CONFIG_IO_STRICT_DEVMEM: boot with iomem=relaxed, or "
                              "unbind the driver from " + file.parent_path().filename().string() +
                              ")");
}

} // namespace

Result<fs::path> bar_file(const fs::path& root, const Provider& p) {
    if (p.bar < 0 || p.bar > 5)
        return Error(errc::invalid_argument, "provider " + p.bdf + " names no BAR");
    const fs::path base = device_dir(p.bdf) / ("resource" + std::to_string(p.bar));
    fs::path wc = base;
    wc += "_wc";
    auto real = sysfs::resolve(root, sysfs::exists(root, wc) ? wc : base);
    if (!real) return real.error();
    return root / *real;
}

Result<Mapping> map_bar(const fs::path& root, const Provider& p) {
    auto file = bar_file(root, p);
    if (!file) return file.error();
    UniqueFd fd;
    auto bar_size = open_sized(*file, fd);
    if (!bar_size) return bar_size.error();
    if (p.bar_offset > *bar_size || p.size > *bar_size - p.bar_offset)
        return Error(errc::bad_size, "provider " + p.bdf + " (" + format_bytes(p.size) + " at " +
                                         std::to_string(p.bar_offset) + ") does not fit in " +
                                         file->string() + " (" + format_bytes(*bar_size) + ")");
    auto m = Mapping::shared(fd.get(), static_cast<std::size_t>(*bar_size), two_mib, file->string());
    if (!m) return bar_map_error(*file, m.error());
    return m;
}

Result<Mapping> map_p2pmem(const fs::path& root, const Provider& p, std::size_t length,
                           std::size_t align) {
    auto real = sysfs::resolve(root, device_dir(p.bdf) / "p2pmem" / "allocate");
    if (!real) return real.error();
    const fs::path file = root / *real;
    UniqueFd fd;
    auto file_size = open_sized(file, fd);
    if (!file_size) return file_size.error();
    // sysfs gives allocate a nominal size far above any request; a smaller
    // one is a fixture file, where mapping past its end would fault later.
    if (*file_size < length)
        return Error(errc::bad_size, file.string() + " is " + format_bytes(*file_size) +
                                         " long; " + format_bytes(length) + " asked");
    return Mapping::shared(fd.get(), length, align, file.string());
}

Result<HostMemory> map_host(std::size_t length, std::size_t align, bool try_huge) {
    HostMemory out;
    if (try_huge && length >= two_mib) {
        const std::size_t rounded = (length + two_mib - 1) & ~(two_mib - 1);
        auto huge = Mapping::anonymous(rounded, align, true);
        if (huge) {
            out.mapping = std::move(*huge);
            out.source = Source::host_hugepages;
            return out;
        }
        out.note = "no 2 MiB pages (" + huge.error().detail() + ")";
    }
    auto normal = Mapping::anonymous(length, align, false);
    if (!normal) return normal.error();
    out.mapping = std::move(*normal);
    return out;
}

} // namespace rpm::p2p::detail
