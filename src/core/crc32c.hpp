// CRC32C (Castagnoli: reflected, initial value and final xor all ones), the
// CRC of iSCSI, ext4, NVMe/TCP's header and data digests and the replicated
// log's records. One implementation for all of them because the log computes
// one per append and per record read (5.5 % of rpm-kvstore's primary CPU
// with a byte-at-a-time table): the SSE4.2 crc32 instruction, 8 bytes per
// step, where the CPU has it, Boost.CRC's table where it does not. Which one
// runs is chosen once, at the first call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace rpm::detail {

/// RETURN VALUE: the CRC32C of bytes; 0 for none. crc32c("123456789") is
/// 0xE3069283.
/// ERRORS: none.
std::uint32_t crc32c(std::span<const std::byte> bytes) noexcept;

/// For data that arrives or is laid out in pieces.
/// RETURN VALUE: crc32c(a followed by bytes), given crc == crc32c(a); crc
/// itself when bytes is empty.
/// ERRORS: none.
std::uint32_t crc32c_extend(std::uint32_t crc, std::span<const std::byte> bytes) noexcept;

// ---- the implementations behind them, for tests that check they agree -------

/// Boost.CRC's table, a byte at a time: any CPU.
/// RETURN VALUE: as crc32c_extend (crc 0 gives crc32c(bytes)).
/// ERRORS: none.
std::uint32_t crc32c_portable(std::uint32_t crc, std::span<const std::byte> bytes) noexcept;

#if defined(__x86_64__)
/// RETURN VALUE: whether this CPU has SSE4.2, which crc32c_sse42 needs.
/// ERRORS: none.
bool crc32c_sse42_supported() noexcept;

/// The SSE4.2 crc32 instruction; call it only where crc32c_sse42_supported()
/// (elsewhere it is an illegal instruction).
/// RETURN VALUE: as crc32c_extend (crc 0 gives crc32c(bytes)).
/// ERRORS: none.
std::uint32_t crc32c_sse42(std::uint32_t crc, std::span<const std::byte> bytes) noexcept;
#endif

} // namespace rpm::detail
