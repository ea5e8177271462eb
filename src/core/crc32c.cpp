#include "core/crc32c.hpp"

#include <boost/crc.hpp>

#include <atomic>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace rpm::detail {
namespace {

using Castagnoli = boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true>;

std::uint32_t bit_reverse(std::uint32_t v) noexcept {
    v = ((v >> 1) & 0x55555555u) | ((v & 0x55555555u) << 1);
    v = ((v >> 2) & 0x33333333u) | ((v & 0x33333333u) << 2);
    v = ((v >> 4) & 0x0F0F0F0Fu) | ((v & 0x0F0F0F0Fu) << 4);
    v = ((v >> 8) & 0x00FF00FFu) | ((v & 0x00FF00FFu) << 8);
    return (v >> 16) | (v << 16);
}

using Implementation = std::uint32_t (*)(std::uint32_t, std::span<const std::byte>) noexcept;

std::uint32_t choose(std::uint32_t crc, std::span<const std::byte> bytes) noexcept;

// Starts at choose() so that the CPU is asked once, at the first call, and
// that a call from another file's static initializer is not left without
// an implementation. Relaxed: every thread that races the first call
// stores the same pointer; the atomic only keeps that from being a data race.
constinit std::atomic<Implementation> chosen{choose};

std::uint32_t choose(std::uint32_t crc, std::span<const std::byte> bytes) noexcept {
    Implementation impl = crc32c_portable;
#if defined(__x86_64__)
    if (crc32c_sse42_supported()) impl = crc32c_sse42;
#endif
    chosen.store(impl, std::memory_order_relaxed);
    return impl(crc, bytes);
}

} // namespace

std::uint32_t crc32c(std::span<const std::byte> bytes) noexcept {
    return chosen.load(std::memory_order_relaxed)(0, bytes);
}

std::uint32_t crc32c_extend(std::uint32_t crc, std::span<const std::byte> bytes) noexcept {
    return chosen.load(std::memory_order_relaxed)(crc, bytes);
}

std::uint32_t crc32c_portable(std::uint32_t crc, std::span<const std::byte> bytes) noexcept {
    // A finished CRC is the running remainder, reflected, with the final
    // xor applied. Boost's constructor takes an initial remainder in
    // unreflected form (it reflects it for a reflected CRC), so undo both
    // to resume where the first part stopped.
    Castagnoli c(bit_reverse(~crc));
    c.process_bytes(bytes.data(), bytes.size());
    return c.checksum();
}

#if defined(__x86_64__)

bool crc32c_sse42_supported() noexcept {
    // Needed when the first call comes from a static initializer that runs
    // before libgcc's own, which fills in the CPU model.
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse4.2");
}

__attribute__((target("sse4.2"))) std::uint32_t crc32c_sse42(std::uint32_t crc,
                                                             std::span<const std::byte> bytes) noexcept {
    // The instruction carries the running remainder, not the finished CRC.
    std::uint32_t rem = ~crc;
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
    std::size_t n = bytes.size();
    // Aligned 8-byte loads never straddle a cache line.
    for (; n > 0 && reinterpret_cast<std::uintptr_t>(p) % 8 != 0; --n) rem = _mm_crc32_u8(rem, *p++);
    std::uint64_t wide = rem;
    for (; n >= 8; n -= 8, p += 8) {
        std::uint64_t word;
        std::memcpy(&word, p, 8);  // x86 is little-endian: byte order as the CRC reads it
        wide = _mm_crc32_u64(wide, word);
    }
    rem = static_cast<std::uint32_t>(wide);
    for (; n > 0; --n) rem = _mm_crc32_u8(rem, *p++);
    return ~rem;
}

#endif

} // namespace rpm::detail
