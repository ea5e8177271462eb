// The pieces of the kernel's P2PDMA verdict (drivers/pci/p2pdma.c,
// calc_map_type_and_dist): ACS redirection read from config space, the
// walk to the common upstream bridge, and the host bridge whitelist.
#pragma once

#include "p2p/topology.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace rpm::p2p::detail {

/// PCI_EXT_CAP_ID_ACS and the ACS Control bits that send peer-to-peer
/// TLPs upstream: P2P Request Redirect, Completion Redirect, Egress Control.
inline constexpr std::uint16_t kExtCapAcs = 0x000d;
inline constexpr std::uint16_t kAcsControlOffset = 6;
inline constexpr std::uint16_t kAcsRedirectBits = 0x0004 | 0x0008 | 0x0020;

/// Offset of extended capability `id` in a config space image, walking
/// the list from 0x100; nullopt when absent or the image ends first.
std::optional<std::uint16_t> find_ext_capability(std::span<const std::uint8_t> config,
                                                 std::uint16_t id);

enum class AcsState { none, redirect, unknown };

/// What a function's ACS Control says about peer-to-peer redirection.
struct Acs {
    AcsState state = AcsState::none;
    std::uint16_t control = 0;  ///< when read
    std::string text;           ///< "0000:02:00.0 (ACS Control 0x0005: RR)", or why unknown
};

/// ACS of sys/bus/pci/devices/<bdf>/config. A config file of less than
/// 0x100 bytes (64 for an unprivileged reader) or an unreadable one is
/// unknown; 256 bytes is a conventional PCI function without extended
/// capabilities, hence no ACS.
Acs read_acs(const fs::path& root, const std::string& bdf);

/// The device the kernel identifies a host bridge by: function 00.0 on
/// its root bus, or else the first function there when it is a root port.
struct HostBridgeId {
    std::string host_bridge;  ///< "pci0000:00"
    std::string bdf;          ///< "" when there is none
    std::uint16_t vendor = 0;
    std::uint16_t device = 0;
    std::string problem;  ///< why it could not be identified
};
HostBridgeId read_host_bridge_id(const fs::path& root, const std::string& host_bridge);

/// The kernel's pci_p2pdma_whitelist: listed, and listed only for traffic
/// that stays under one host bridge (REQ_SAME_HOST_BRIDGE). `extra`
/// entries (checked first) count as listed without that restriction.
enum class Listed { no, yes, same_host_bridge_only };
Listed whitelist_lookup(std::uint16_t vendor, std::uint16_t device,
                        std::span<const std::pair<std::uint16_t, std::uint16_t>> extra);

/// Whether traffic between the two may go through the host bridge(s):
/// an AMD Zen CPU, or (kernel host_bridge_whitelist) both host bridges
/// whitelisted. `why` says which, or why not.
struct HostBridgeVerdict {
    bool allowed = false;
    std::string why;
};
HostBridgeVerdict host_bridge_verdict(const fs::path& root, const HostFacts& facts,
                                      const Placement& provider, const Placement& client);

/// The walk from the provider up to the first bridge the client also sits
/// below (calc_map_type_and_dist's loops).
struct Path {
    bool common_found = false;
    std::string common;                  ///< the common bridge; "" for the same function
    int distance = 0;                    ///< hops up from each side, summed
    std::vector<std::string> redirects;  ///< functions with a redirect bit set
    std::vector<std::string> unknown;    ///< bridges whose ACS could not be read
};
Path walk_path(const fs::path& root, const Placement& provider, const Placement& client);

/// "16 MiB", "256 KiB", "1000 bytes".
std::string human_size(std::uint64_t bytes);

} // namespace rpm::p2p::detail
