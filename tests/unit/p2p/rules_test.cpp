// The pieces of the kernel's rules: the extended capability walk, ACS,
// which bridges count, the whitelist, host bridge identity, host facts.
#include "p2p_fixture.hpp"

#include "p2p/rules.hpp"

#include <gtest/gtest.h>

namespace rpm::p2p {
namespace {

using namespace testing;
using namespace detail;

void put32(std::vector<std::uint8_t>& b, std::size_t at, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) b[at + i] = static_cast<std::uint8_t>(v >> (8 * i));
}

// ACS header at 0x100 (version 1, last) with ACS Control `ctrl`.
std::vector<unsigned char> acs_bytes(std::uint16_t ctrl) {
    return {0x0d,
            0x00,
            0x01,
            0x00,
            0x7f,
            0x00,
            static_cast<unsigned char>(ctrl),
            static_cast<unsigned char>(ctrl >> 8)};
}

TEST(P2pRules, ExtCapabilityListIsWalked) {
    std::vector<std::uint8_t> cfg(4096, 0);
    put32(cfg, 0x100, 0x0001 | (1u << 16) | (0x150u << 20));  // AER -> 0x150
    put32(cfg, 0x150, 0x000b | (1u << 16) | (0x200u << 20));  // vendor-specific -> 0x200
    put32(cfg, 0x200, 0x000d | (1u << 16));                   // ACS, last
    EXPECT_EQ(find_ext_capability(cfg, kExtCapAcs), 0x200);
    EXPECT_EQ(find_ext_capability(cfg, 0x0001), 0x100);
    EXPECT_FALSE(find_ext_capability(cfg, 0x0010));
}

TEST(P2pRules, ExtCapabilityWalkEndsOnLoopsAndShortImages) {
    std::vector<std::uint8_t> cfg(4096, 0);
    put32(cfg, 0x100, 0x0001 | (0x100u << 20));  // points at itself
    EXPECT_FALSE(find_ext_capability(cfg, kExtCapAcs));
    EXPECT_FALSE(find_ext_capability(std::vector<std::uint8_t>(256, 0), kExtCapAcs));
    EXPECT_FALSE(find_ext_capability(std::vector<std::uint8_t>(64, 0xff), kExtCapAcs));
}

TEST(P2pRules, AcsReadFromFixtures) {
    const Acs rr = read_acs(fixture("acs_redirect"), "0000:02:00.0");  // behind AER
    EXPECT_EQ(rr.state, AcsState::redirect);
    EXPECT_EQ(rr.control, 0x0005);
    EXPECT_EQ(rr.text, "0000:02:00.0 (ACS Control 0x0005: RR)");
    const Acs uf = read_acs(fixture("acs_redirect"), "0000:02:01.0");  // SV|UF: no redirect
    EXPECT_EQ(uf.state, AcsState::none);
    EXPECT_EQ(uf.control, 0x0011);
    EXPECT_EQ(read_acs(fixture("one_switch"), "0000:01:00.0").state, AcsState::none);  // no cap
    EXPECT_EQ(read_acs(fixture("qemu_lab"), "0000:00:03.0").state, AcsState::none);    // 256 bytes
}

TEST(P2pRules, EveryRedirectBitCounts) {
    TreeCopy t("one_switch");
    const fs::path cfg = t.device_file("0000:02:00.0", "config");
    for (int bit : {0x0004, 0x0008, 0x0020}) {
        t.poke(cfg, 0x100, acs_bytes(static_cast<std::uint16_t>(bit)));
        EXPECT_EQ(read_acs(t.root(), "0000:02:00.0").state, AcsState::redirect) << bit;
    }
    t.poke(cfg, 0x100, acs_bytes(0x0053));  // SV TB UF DT: none of them redirects
    EXPECT_EQ(read_acs(t.root(), "0000:02:00.0").state, AcsState::none);
}

TEST(P2pRules, ShortConfigIsUnknownAndCountsOnBridges) {
    TreeCopy t("one_switch");
    fs::resize_file(t.device_file("0000:02:01.0", "config"), 64);
    const Acs acs = read_acs(t.root(), "0000:02:01.0");
    EXPECT_EQ(acs.state, AcsState::unknown);
    EXPECT_TRUE(contains(acs.text, "64 bytes")) << acs.text;
    std::vector<std::string> skipped;
    const auto providers = discover_providers(t.root(), skipped);
    const Choice c = choose(t.root(), HostFacts{}, providers, place_all(t.root(), {"mlx5_0"}));
    ASSERT_TRUE(c.provider);
    EXPECT_EQ(c.provider->bdf, "0000:05:00.0");  // the other port is readable
    const Verdict& v = c.verdicts.back();
    EXPECT_EQ(v.provider, "0000:04:00.0");
    EXPECT_FALSE(v.usable);
    EXPECT_TRUE(contains(v.reason, "ACS counted as a redirect at 0000:02:01.0")) << v.reason;
}

TEST(P2pRules, ShortConfigOfTheEndpointItselfIsIgnored) {
    TreeCopy t("one_switch");
    fs::resize_file(t.device_file("0000:04:00.0", "config"), 64);
    const Verdict v = judge(t.root(), HostFacts{}, *place(t.root(), "nvme0"),
                            place_all(t.root(), {"mlx5_0", "nvme0"}));
    EXPECT_TRUE(v.usable) << v.reason;
    EXPECT_EQ(v.distance, 4);
}

TEST(P2pRules, RedirectOnTheCommonBridgeCounts) {
    // The kernel checks the provider's side up to and including the common
    // bridge: here the switch's upstream port 01:00.0.
    TreeCopy t("one_switch");
    t.poke(t.device_file("0000:01:00.0", "config"), 0x100, acs_bytes(0x0004));
    const Verdict v =
        judge(t.root(), HostFacts{}, *place(t.root(), "nvme0"), place_all(t.root(), {"mlx5_0"}));
    EXPECT_FALSE(v.usable);
    EXPECT_TRUE(contains(v.reason, "ACS redirect at 0000:01:00.0")) << v.reason;
}

TEST(P2pRules, RedirectAboveTheCommonBridgeDoesNot) {
    TreeCopy t("one_switch");
    t.poke(t.device_file("0000:00:01.0", "config"), 0x100, acs_bytes(0x001d));
    const Verdict v =
        judge(t.root(), HostFacts{}, *place(t.root(), "nvme0"), place_all(t.root(), {"mlx5_0"}));
    EXPECT_TRUE(v.usable) << v.reason;
    EXPECT_EQ(v.distance, 4);
}

TEST(P2pRules, RedirectOnTheProviderSideCounts) {
    TreeCopy t("one_switch");
    t.poke(t.device_file("0000:02:01.0", "config"), 0x100, acs_bytes(0x0020));
    const Verdict v =
        judge(t.root(), HostFacts{}, *place(t.root(), "nvme0"), place_all(t.root(), {"mlx5_0"}));
    EXPECT_FALSE(v.usable);
    EXPECT_TRUE(contains(v.reason, "0000:02:01.0 (ACS Control 0x0020: EC)")) << v.reason;
}

TEST(P2pRules, WalkDistances) {
    const fs::path one = fixture("one_switch");
    Path p = walk_path(one, *place(one, "nvme0"), *place(one, "mlx5_0"));
    EXPECT_TRUE(p.common_found);
    EXPECT_EQ(p.common, "0000:01:00.0");
    EXPECT_EQ(p.distance, 4);
    p = walk_path(one, *place(one, "nvme0"), *place(one, "nvme0"));
    EXPECT_TRUE(p.common_found);
    EXPECT_EQ(p.common, "");
    EXPECT_EQ(p.distance, 0);
    const fs::path two = fixture("two_switches");
    p = walk_path(two, *place(two, "nvme1"), *place(two, "mlx5_0"));
    EXPECT_EQ(p.common, "0000:01:00.0");
    EXPECT_EQ(p.distance, 8);
    p = walk_path(two, *place(two, "nvme2"), *place(two, "mlx5_0"));
    EXPECT_FALSE(p.common_found);
    EXPECT_EQ(p.distance, 2 + 6);  // every hop on both sides
    const fs::path lab = fixture("qemu_lab");
    p = walk_path(lab, *place(lab, "nvme0"), *place(lab, "0000:00:04.0"));
    EXPECT_FALSE(p.common_found);
    EXPECT_EQ(p.distance, 2);
}

TEST(P2pRules, FunctionsOfOneDevice) {
    TreeCopy t("one_switch");
    const fs::path dir = fs::canonical(t.root() / "sys/bus/pci/devices/0000:04:00.0");
    fs::copy(dir, dir.parent_path() / "0000:04:00.1",
             fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    fs::create_directory_symlink(
        fs::relative(dir.parent_path() / "0000:04:00.1", t.root() / "sys/bus/pci/devices"),
        t.root() / "sys/bus/pci/devices/0000:04:00.1");
    const Verdict v = judge(t.root(), HostFacts{}, *place(t.root(), "0000:04:00.0"),
                            place_all(t.root(), {"0000:04:00.1"}));
    EXPECT_TRUE(v.usable);
    EXPECT_EQ(v.distance, 2);
    EXPECT_TRUE(contains(v.reason, "same device as client 0000:04:00.1")) << v.reason;
}

TEST(P2pRules, WhitelistLookupFollowsTheKernelTable) {
    EXPECT_EQ(whitelist_lookup(0x8086, 0x2020, {}), Listed::yes);
    EXPECT_EQ(whitelist_lookup(0x8086, 0x2033, {}), Listed::yes);
    EXPECT_EQ(whitelist_lookup(0x8086, 0x09a2, {}), Listed::yes);
    EXPECT_EQ(whitelist_lookup(0x8086, 0x2f00, {}), Listed::same_host_bridge_only);
    EXPECT_EQ(whitelist_lookup(0x8086, 0x3c01, {}), Listed::same_host_bridge_only);
    EXPECT_EQ(whitelist_lookup(0x1ae0, 0x1234, {}), Listed::yes);  // Google: any device
    EXPECT_EQ(whitelist_lookup(0x8086, 0x6f00, {}), Listed::no);
    EXPECT_EQ(whitelist_lookup(0x8086, 0x1237, {}), Listed::no);
    EXPECT_EQ(whitelist_lookup(0x1022, 0x1480, {}), Listed::no);
    const std::vector<std::pair<std::uint16_t, std::uint16_t>> extra{{0x8086, 0x6f00},
                                                                     {0x8086, 0x2f00}};
    EXPECT_EQ(whitelist_lookup(0x8086, 0x6f00, extra), Listed::yes);
    EXPECT_EQ(whitelist_lookup(0x8086, 0x2f00, extra), Listed::yes);
}

// Two host bridges, each identified by its 00.0 function.
fs::path two_host_bridges(const TreeCopy& t, const char* device) {
    for (const char* hb : {"pci0000:00/0000:00:00.0", "pci0000:17/0000:17:00.0"}) {
        const fs::path d = t.root() / "sys/devices" / hb;
        fs::create_directories(d);
        std::ofstream(d / "vendor") << "0x8086\n";
        std::ofstream(d / "device") << device << "\n";
        std::ofstream(d / "class") << "0x060000\n";
    }
    return t.root();
}

TEST(P2pRules, SameHostBridgeOnlyEntries) {
    TreeCopy t("one_switch");
    const fs::path root = two_host_bridges(t, "0x2f00");
    const Placement a{"0000:00:02.0", {}, "pci0000:00"};
    const Placement b{"0000:00:03.0", {}, "pci0000:00"};
    const Placement c{"0000:17:02.0", {}, "pci0000:17"};
    EXPECT_TRUE(host_bridge_verdict(root, HostFacts{}, a, b).allowed);
    const HostBridgeVerdict across = host_bridge_verdict(root, HostFacts{}, a, c);
    EXPECT_FALSE(across.allowed);
    EXPECT_TRUE(contains(across.why, "whitelisted only for devices under one host bridge"))
        << across.why;
    HostFacts zen;
    zen.amd_zen = true;
    EXPECT_TRUE(host_bridge_verdict(root, zen, a, c).allowed);
}

TEST(P2pRules, HostBridgeIdentity) {
    HostBridgeId id = read_host_bridge_id(fixture("qemu_lab"), "pci0000:00");
    EXPECT_EQ(id.bdf, "0000:00:00.0");
    EXPECT_EQ(id.vendor, 0x8086);
    EXPECT_EQ(id.device, 0x1237);
    id = read_host_bridge_id(fixture("root_complex_only"), "pci0000:3a");  // no 00.0: the root port
    EXPECT_EQ(id.bdf, "0000:3a:02.0");
    EXPECT_EQ(id.device, 0x2032);
    EXPECT_TRUE(id.problem.empty());
    id = read_host_bridge_id(fixture("one_switch"), "pci0000:ff");
    EXPECT_FALSE(id.problem.empty());
}

TEST(P2pRules, HostBridgeWithoutIdentityIsNotWhitelisted) {
    // First function on the root bus is neither 00.0 nor a bridge.
    TreeCopy t("one_switch");
    const fs::path d = t.root() / "sys/devices/pci0000:40/0000:40:05.0";
    fs::create_directories(d);
    std::ofstream(d / "vendor") << "0x8086\n";
    std::ofstream(d / "device") << "0x2020\n";
    std::ofstream(d / "class") << "0x088000\n";
    const HostBridgeId id = read_host_bridge_id(t.root(), "pci0000:40");
    EXPECT_TRUE(id.bdf.empty());
    const Placement a{"0000:40:05.0", {}, "pci0000:40"};
    const HostBridgeVerdict v = host_bridge_verdict(t.root(), HostFacts{}, a, a);
    EXPECT_FALSE(v.allowed);
    EXPECT_TRUE(contains(v.why, "no function 00.0 or root port")) << v.why;
}

TEST(P2pRules, HostFactsFromCpuinfo) {
    EXPECT_TRUE(read_host_facts(fixture("amd"), {}).amd_zen);
    EXPECT_FALSE(read_host_facts(fixture("qemu_lab"), {}).amd_zen);    // AMD family 15: not Zen
    EXPECT_FALSE(read_host_facts(fixture("one_switch"), {}).amd_zen);  // Intel
    const HostFacts none = read_host_facts(fixture("does_not_exist"), {{0x8086, 0x1237}});
    EXPECT_FALSE(none.amd_zen);
    ASSERT_EQ(none.extra_whitelist.size(), 1u);
    EXPECT_EQ(none.extra_whitelist[0].second, 0x1237);
}

TEST(P2pRules, HumanSizes) {
    EXPECT_EQ(human_size(16ULL << 20), "16 MiB");
    EXPECT_EQ(human_size(4096), "4 KiB");
    EXPECT_EQ(human_size(1000), "1000 bytes");
    EXPECT_EQ(human_size(3ULL << 30), "3 GiB");
    EXPECT_EQ(human_size(0), "0 bytes");
}

} // namespace
} // namespace rpm::p2p
