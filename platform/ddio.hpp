// DDIO from an Intel Xeon IIO root port's perfctrlsts_0 register.
//
// perfctrlsts_0 is the byte at 0x180 of the root port's config space:
// bit 7 use_allocating_flow_wr (inbound writes allocate in the LLC: DDIO
// on), bit 3 NoSnoopOpWrEn (reported only). 0x180 is past the 64 bytes
// Linux lets unprivileged users read from sysfs `config`, so a non-root
// run reports DDIO unknown and says why.
#pragma once

#include <rpm/platform.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace rpm::platform {

inline constexpr std::size_t kPerfCtrlStsOffset = 0x180;
inline constexpr std::uint8_t kUseAllocatingFlowWr = 0x80;  // bit 7
inline constexpr std::uint8_t kNoSnoopOpWrEn = 0x08;        // bit 3

/// The reading for a perfctrlsts_0 value.
DdioReading decode_perfctrlsts(std::uint8_t value);

/// Unknown, with the reason, when this port's config space cannot tell
/// (unreadable IDs, not Intel, not a known Xeon IIO port); nullopt when
/// reading the config space is worthwhile.
std::optional<DdioReading> ddio_identity_check(const RootPort& port);

/// DDIO from the config-space bytes read from `port`: the identity check,
/// then the length check, then the decoded byte at 0x180.
DdioReading ddio_from_config(const RootPort& port, std::span<const std::uint8_t> config);

/// Unknown: the device has no root port to read (`reason` says why).
DdioReading ddio_unknown(std::string reason);

/// Read `port_dir`/config and decode it. A failed or short read also adds
/// a line to `unreadable`; a port that is not Intel does not (a fact, not
/// a failure).
DdioReading read_ddio(const std::filesystem::path& root, const std::filesystem::path& port_dir,
                      const RootPort& port, std::vector<std::string>& unreadable);

} // namespace rpm::platform
