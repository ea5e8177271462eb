// Mapping: an mmap'ed range at an aligned address, unmapped on destruction.
#include "p2p/mapping.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>

namespace rpm::p2p::detail {
namespace {

// 2 MiB pages even where the default hugepage size is another (1 GiB).
constexpr int huge_2mb = 21 << MAP_HUGE_SHIFT;

std::size_t page_size() noexcept {
    static const auto size = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    return size;
}

Error mmap_error(const std::string& what, int err) {
    const errc code = err == EACCES || err == EPERM ? errc::permission_denied
                      : err == EINVAL            ? errc::invalid_argument
                                                 : errc::io_error;
    return Error(code, "mmap of " + what + ": " + std::strerror(err));
}

// mmap gives page alignment only: reserve `length + align` of address
// space, then place the mapping on the aligned address inside it and give
// the rest back.
Result<std::byte*> reserve_aligned(std::size_t length, std::size_t align, const std::string& what) {
    if (length > SIZE_MAX - align) return mmap_error(what, ENOMEM);
    void* raw = ::mmap(nullptr, length + align, PROT_NONE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw == MAP_FAILED) return mmap_error(what + " (address reservation)", errno);
    const auto base = reinterpret_cast<std::uintptr_t>(raw);
    const std::uintptr_t aligned = (base + align - 1) & ~(std::uintptr_t{align} - 1);
    if (aligned > base) ::munmap(raw, aligned - base);
    const std::uintptr_t end = base + length + align, used_end = aligned + length;
    if (end > used_end) ::munmap(reinterpret_cast<void*>(used_end), end - used_end);
    return reinterpret_cast<std::byte*>(aligned);
}

// One mmap with `fixed` as the place (MAP_FIXED over a reservation) or
// anywhere; on failure the reservation is released too.
Result<Mapping> map_at(std::byte* fixed, std::size_t length, int flags, int fd,
                       const std::string& what) {
    void* p = ::mmap(fixed, length, PROT_READ | PROT_WRITE, flags | (fixed ? MAP_FIXED : 0), fd, 0);
    if (p == MAP_FAILED) {
        const int err = errno;
        if (fixed) ::munmap(fixed, length);
        return mmap_error(what, err);
    }
    return Mapping(static_cast<std::byte*>(p), length);
}

Result<Mapping> map_aligned(std::size_t length, std::size_t align, int flags, int fd,
                            const std::string& what) {
    std::byte* fixed = nullptr;
    if (align > page_size()) {
        auto r = reserve_aligned(length, align, what);
        if (!r) return r.error();
        fixed = *r;
    }
    return map_at(fixed, length, flags, fd, what);
}

} // namespace

Mapping::Mapping(Mapping&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)), length_(std::exchange(o.length_, 0)) {}

Mapping& Mapping::operator=(Mapping&& o) noexcept {
    if (this != &o) {
        reset();
        data_ = std::exchange(o.data_, nullptr);
        length_ = std::exchange(o.length_, 0);
    }
    return *this;
}

Mapping::~Mapping() { reset(); }

void Mapping::reset() noexcept {
    if (data_) ::munmap(data_, length_);
    data_ = nullptr;
    length_ = 0;
}

Result<Mapping> Mapping::shared(int fd, std::size_t length, std::size_t align,
                                const std::string& what) {
    return map_aligned(length, align, MAP_SHARED, fd, what);
}

Result<Mapping> Mapping::anonymous(std::size_t length, std::size_t align, bool huge) {
    // Hugepage mappings are 2 MiB aligned by the kernel already.
    const int flags = MAP_PRIVATE | MAP_ANONYMOUS | (huge ? MAP_HUGETLB | huge_2mb : 0);
    auto m = map_aligned(length, huge ? 0 : align, flags, -1,
                         huge ? std::string("host memory (2 MiB pages)") : "host memory");
    if (!m) return Error(errc::io_error, m.error().detail());
    return m;
}

} // namespace rpm::p2p::detail
