// Memory mappings behind P2P buffers: a provider's BAR (resourceN, once per
// provider), a p2pmem chunk (p2pmem/allocate, once per buffer: the kernel
// allocates per mmap), and host memory for fallbacks.
#pragma once

#include <rpm/p2p.hpp>
#include <rpm/result.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

namespace rpm::p2p::detail {

/// One mmap'ed range, unmapped on destruction. `data` is aligned as asked.
class Mapping {
public:
    Mapping() = default;
    Mapping(std::byte* data, std::size_t length) noexcept : data_(data), length_(length) {}
    Mapping(Mapping&& o) noexcept;
    Mapping& operator=(Mapping&& o) noexcept;
    Mapping(const Mapping&) = delete;
    Mapping& operator=(const Mapping&) = delete;
    ~Mapping();

    [[nodiscard]] std::byte* data() const noexcept { return data_; }
    [[nodiscard]] std::size_t length() const noexcept { return length_; }
    [[nodiscard]] explicit operator bool() const noexcept { return data_ != nullptr; }

    /// mmap(length, PROT_READ|PROT_WRITE, MAP_SHARED, fd, 0) at an address
    /// aligned to `align` (a power of two; page size or less: any).
    /// ERRORS: errc::invalid_argument, errc::permission_denied,
    /// errc::io_error, with `what` and mmap's reason in the detail.
    static Result<Mapping> shared(int fd, std::size_t length, std::size_t align,
                                  const std::string& what);
    /// Private anonymous memory, 2 MiB pages when `huge` (length must then
    /// be a multiple of 2 MiB), aligned to `align`.
    /// ERRORS: errc::io_error (mmap failed: no hugepages reserved, no memory).
    static Result<Mapping> anonymous(std::size_t length, std::size_t align, bool huge);

private:
    void reset() noexcept;
    std::byte* data_ = nullptr;
    std::size_t length_ = 0;
};

/// The file that maps a provider's BAR under the root: resource<bar>_wc
/// when the kernel offers write combining there, else resource<bar>.
/// ERRORS: errc::path_not_found (no such device or BAR file),
/// errc::invalid_argument (the provider names no BAR).
Result<std::filesystem::path> bar_file(const std::filesystem::path& root, const Provider& p);

/// All of the provider's BAR, MAP_SHARED from offset 0, 2 MiB aligned.
/// ERRORS: those of bar_file; errc::bad_size when the provider does not
/// fit in the BAR; errc::permission_denied (not root), errc::io_error
/// (with a hint when the kernel refuses a BAR a driver has claimed).
Result<Mapping> map_bar(const std::filesystem::path& root, const Provider& p);

/// One chunk of p2pmem: mmap of sys/bus/pci/devices/<bdf>/p2pmem/allocate
/// (Linux >= 6.2, CONFIG_PCI_P2PDMA): each mmap is a new allocation.
/// ERRORS: errc::path_not_found, errc::permission_denied, errc::io_error
/// (the kernel had no room: ENOMEM).
Result<Mapping> map_p2pmem(const std::filesystem::path& root, const Provider& p,
                           std::size_t length, std::size_t align);

/// Host memory for a fallback, and which kind it turned out to be.
struct HostMemory {
    Mapping mapping;
    Source source = Source::host;
    std::string note;  ///< why hugepages were not used, when they were tried
};

/// 2 MiB pages when `try_huge` and length >= 2 MiB (rounded up to 2 MiB),
/// normal pages otherwise or when that fails.
/// ERRORS: errc::io_error when even normal pages cannot be mapped.
Result<HostMemory> map_host(std::size_t length, std::size_t align, bool try_huge);

} // namespace rpm::p2p::detail
