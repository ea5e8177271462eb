// The P2P manager's view of the PCI tree: providers found in sysfs and the
// kernel's P2PDMA distance rules. Everything reads under a root directory
// (platform::sysfs), so fixture trees in tests/fixtures/p2p drive it.
#pragma once

#include <rpm/p2p.hpp>

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace rpm::p2p::detail {

namespace fs = std::filesystem;

/// Where PCI functions are, relative to the root.
inline const fs::path kPciDevices = "sys/bus/pci/devices";

/// What find() needs to know about the machine besides the tree.
struct HostFacts {
    bool amd_zen = false;  ///< proc/cpuinfo: AuthenticAMD, cpu family >= 0x17
    std::vector<std::pair<std::uint16_t, std::uint16_t>> extra_whitelist;
};

/// proc/cpuinfo under the root (amd_zen false when unreadable).
HostFacts read_host_facts(const fs::path& root,
                          std::vector<std::pair<std::uint16_t, std::uint16_t>> extra_whitelist);

/// Every provider under root: p2pmem/ directories, then NVMe controllers'
/// CMB and PMR read from BAR0 (resource0) registers. A device whose files
/// cannot be read is skipped and named in `skipped` with the reason.
std::vector<Provider> discover_providers(const fs::path& root, std::vector<std::string>& skipped);

/// A BDF or a device name with a PCI parent ("nvme0" under sys/class/*,
/// "mlx5_0" under sys/class/infiniband, "eth0" under sys/class/net).
/// ERRORS: errc::path_not_found (no such BDF under sys/bus/pci/devices, no
/// such name), errc::invalid_argument (no PCI parent, as Soft-RoCE rxe0;
/// a name with '/' or "..").
Result<Placement> place(const fs::path& root, const std::string& device);

/// The kernel's verdict on one provider for all clients (distance summed;
/// mainline Linux adds no penalty for a path through the host bridge).
/// Unreadable ACS (config space under 0x100 bytes) on a bridge of the path
/// counts as a redirect.
Verdict judge(const fs::path& root, const HostFacts& facts, const Placement& provider,
              std::span<const Placement> clients);

/// Judge every provider, choose the closest usable one (ties: most
/// available bytes), and explain.
Choice choose(const fs::path& root, const HostFacts& facts, std::span<const Provider> providers,
              std::span<const Placement> clients);

} // namespace rpm::p2p::detail
