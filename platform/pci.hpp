// Where a device sits in the PCI hierarchy, read from its sysfs path.
//
// Linux names a PCI device's sysfs directory after the whole chain above
// it: sys/devices/pci0000:17/0000:17:00.0/0000:18:00.0 is device 18:00.0
// under root port 17:00.0 under host bridge pci0000:17. Behind a PCIe
// switch the chain is root port / switch upstream / switch downstream /
// device, so the root port is always the first BDF after the host bridge.
#pragma once

#include <rpm/platform.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rpm::platform::pci {

namespace fs = std::filesystem;

/// "0000:17:00.0" (a domain of 4 or more hex digits, as VMD uses 10000).
bool is_bdf(std::string_view s) noexcept;

/// "pci0000:17": a host bridge's sysfs directory.
bool is_host_bridge(std::string_view s) noexcept;

/// A device's place below its host bridge.
struct Location {
    fs::path host_bridge;            ///< root-relative: "sys/devices/pci0000:17"
    std::vector<std::string> bdfs;   ///< from the first BDF below the bridge down to the device
};

/// The PCI chain of a resolved, root-relative device path; nullopt when
/// the path has no host bridge followed by a BDF (a virtual device).
std::optional<Location> parse_location(const fs::path& device_path);

/// The root port's BDF: the first of the chain, when the chain is longer
/// than the device alone. nullopt for a device on the root complex.
std::optional<std::string> root_port_bdf(const Location& loc);

/// The sysfs directory of bdfs[index], root-relative.
fs::path dir_of(const Location& loc, std::size_t index);

/// "0x8086" (sysfs vendor/device files) to 0x8086; nullopt if malformed.
std::optional<std::uint16_t> parse_hex_u16(std::string_view s) noexcept;

/// "8086:2030", as lspci -n prints an ID pair.
std::string id_pair(std::uint16_t vendor, std::uint16_t device);

/// Read the root port's vendor and device files (0 and a line in
/// `unreadable` for each that cannot be read) and classify it.
RootPort read_root_port(const fs::path& root, const fs::path& port_dir, std::string bdf,
                        std::span<const std::uint16_t> extra_iio_ids,
                        std::vector<std::string>& unreadable);

} // namespace rpm::platform::pci
