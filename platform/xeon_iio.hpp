// The Intel Xeon IIO root ports whose perfctrlsts_0 register rpm knows.
#pragma once

#include <cstdint>
#include <span>

namespace rpm::platform {

inline constexpr std::uint16_t kIntelVendorId = 0x8086;

/// True for an Intel root port in rpm's table or in `extra` (IDs from
/// DetectOptions::extra_iio_device_ids, for CPUs newer than the table).
bool is_xeon_iio(std::uint16_t vendor, std::uint16_t device,
                 std::span<const std::uint16_t> extra) noexcept;

} // namespace rpm::platform
