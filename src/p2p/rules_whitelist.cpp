// Through the host bridge: the kernel's CPU test (cpu_supports_p2pdma)
// and host bridge whitelist (pci_p2pdma_whitelist, host_bridge_whitelist).
#include "p2p/rules.hpp"

#include "platform/pci.hpp"
#include "platform/sysfs.hpp"

#include <algorithm>

namespace rpm::p2p::detail {
namespace {

namespace pci = platform::pci;
namespace sysfs = platform::sysfs;

constexpr std::uint16_t kIntel = 0x8086;
constexpr std::uint16_t kGoogle = 0x1ae0;
constexpr int kAnyDevice = -1;

struct Entry {
    std::uint16_t vendor;
    int device;  // kAnyDevice: every device of the vendor
    bool same_host_bridge_only;
};

// drivers/pci/p2pdma.c, pci_p2pdma_whitelist[], as in mainline Linux 6.x.
constexpr Entry kWhitelist[] = {
    {kIntel, 0x3c00, true},                                 // Xeon E5 / Core i7
    {kIntel, 0x3c01, true},       {kIntel, 0x2f00, true},   // Xeon E7 v3 / E5 v3 / Core i7
    {kIntel, 0x2f01, true},       {kIntel, 0x2030, false},  // Sky Lake-E root ports A-D
    {kIntel, 0x2031, false},      {kIntel, 0x2032, false},
    {kIntel, 0x2033, false},      {kIntel, 0x2020, false},  // Sky Lake-E host bridge
    {kIntel, 0x09a2, false},                                // Ice Lake Xeon (3rd Gen Scalable)
    {kGoogle, kAnyDevice, false},                           // Google SoCs
};

std::string host_prefix(const std::string& host_bridge) {
    // "pci0000:3a" -> "0000:3a:", the start of every BDF on its root bus.
    return host_bridge.substr(3) + ":";
}

bool is_bridge_class(const fs::path& root, const fs::path& dir) {
    auto cls = sysfs::read_text(root, dir / "class");
    return cls && cls->starts_with("0x0604");
}

// pci_host_bridge_dev: the first function on the root bus, if it is 00.0
// or a root port (a bridge on the root bus of a PCIe hierarchy).
std::optional<std::string> identifying_function(const fs::path& root,
                                                const std::string& host_bridge) {
    const fs::path dir = fs::path("sys/devices") / host_bridge;
    auto names = sysfs::list_dir(root, dir);
    if (!names) return std::nullopt;
    const std::string prefix = host_prefix(host_bridge);
    for (const auto& n : *names) {
        if (!pci::is_bdf(n) || !n.starts_with(prefix)) continue;
        if (n.ends_with(":00.0") || is_bridge_class(root, dir / n)) return n;
        return std::nullopt;
    }
    return std::nullopt;
}

std::string describe(const HostBridgeId& id) {
    if (!id.problem.empty()) return "host bridge " + id.host_bridge + " (" + id.problem + ")";
    return "host bridge " + id.host_bridge + " (" + pci::id_pair(id.vendor, id.device) + ")";
}

Listed check(const HostBridgeId& id,
             std::span<const std::pair<std::uint16_t, std::uint16_t>> extra) {
    if (!id.problem.empty()) return Listed::no;
    return whitelist_lookup(id.vendor, id.device, extra);
}

HostBridgeVerdict both_listed(const HostBridgeId& a, const HostBridgeId& b, const HostFacts& f) {
    const Listed la = check(a, f.extra_whitelist);
    const Listed lb = check(b, f.extra_whitelist);
    if (la == Listed::yes && lb == Listed::yes)
        return {true, describe(a) + " and " + describe(b) + " are whitelisted"};
    const HostBridgeId& bad = la != Listed::yes ? a : b;
    const Listed lbad = la != Listed::yes ? la : lb;
    if (lbad == Listed::same_host_bridge_only)
        return {false, describe(bad) + " is whitelisted only for devices under one host bridge"};
    return {false, describe(bad) + " is not whitelisted and the CPU is not AMD Zen"};
}

} // namespace

Listed whitelist_lookup(std::uint16_t vendor, std::uint16_t device,
                        std::span<const std::pair<std::uint16_t, std::uint16_t>> extra) {
    const auto wanted = std::make_pair(vendor, device);
    if (std::find(extra.begin(), extra.end(), wanted) != extra.end()) return Listed::yes;
    // The kernel stops at the first entry of the vendor and device.
    for (const Entry& e : kWhitelist) {
        if (e.vendor != vendor || (e.device != kAnyDevice && e.device != device)) continue;
        return e.same_host_bridge_only ? Listed::same_host_bridge_only : Listed::yes;
    }
    return Listed::no;
}

HostBridgeId read_host_bridge_id(const fs::path& root, const std::string& host_bridge) {
    HostBridgeId id;
    id.host_bridge = host_bridge;
    const auto fn = identifying_function(root, host_bridge);
    if (!fn) {
        id.problem = "no function 00.0 or root port first on its root bus to identify it";
        return id;
    }
    id.bdf = *fn;
    const fs::path dir = fs::path("sys/devices") / host_bridge / *fn;
    auto vendor = sysfs::read_text(root, dir / "vendor");
    auto device = sysfs::read_text(root, dir / "device");
    const auto v = vendor ? pci::parse_hex_u16(*vendor) : std::nullopt;
    const auto d = device ? pci::parse_hex_u16(*device) : std::nullopt;
    if (!v || !d) {
        id.problem = *fn + " vendor/device unreadable";
        return id;
    }
    id.vendor = *v;
    id.device = *d;
    return id;
}

HostBridgeVerdict host_bridge_verdict(const fs::path& root, const HostFacts& facts,
                                      const Placement& provider, const Placement& client) {
    if (facts.amd_zen)
        return {true, "the CPU is AMD Zen (family 0x17 or later), whose host bridges route P2P"};
    const HostBridgeId a = read_host_bridge_id(root, provider.host_bridge);
    if (provider.host_bridge != client.host_bridge)
        return both_listed(a, read_host_bridge_id(root, client.host_bridge), facts);
    const Listed l = check(a, facts.extra_whitelist);
    if (l != Listed::no) return {true, describe(a) + " is whitelisted"};
    return {false, describe(a) + " is not whitelisted and the CPU is not AMD Zen"};
}

} // namespace rpm::p2p::detail
