// choose() on every fixture tree: the provider picked, its distance, and
// the words of the reasons. Each tree's README says what is expected.
#include "p2p_fixture.hpp"

#include "p2p/topology.hpp"

#include <gtest/gtest.h>

namespace rpm::p2p {
namespace {

using namespace testing;
using detail::HostFacts;

struct Outcome {
    std::vector<Provider> providers;
    std::vector<std::string> skipped;
    Choice choice;
};

Outcome run(const std::string& tree, const std::vector<std::string>& clients,
            std::optional<HostFacts> facts = std::nullopt) {
    const fs::path root = fixture(tree);
    Outcome r;
    r.providers = detail::discover_providers(root, r.skipped);
    const HostFacts f = facts ? *facts : detail::read_host_facts(root, {});
    const auto placed = place_all(root, clients);
    r.choice = detail::choose(root, f, r.providers, placed);
    return r;
}

const Verdict& verdict_of(const Choice& c, const std::string& bdf, std::size_t nth = 0) {
    static const Verdict none;
    for (const auto& v : c.verdicts)
        if (v.provider == bdf && nth-- == 0) return v;
    ADD_FAILURE() << "no verdict for " << bdf;
    return none;
}

TEST(P2pChoose, OneSwitchTieGoesToTheLargerCmb) {
    const Outcome r = run("one_switch", {"mlx5_0"});
    ASSERT_TRUE(r.choice.provider);
    EXPECT_EQ(r.choice.provider->bdf, "0000:05:00.0");
    EXPECT_EQ(r.choice.provider->kind, ProviderKind::nvme_cmb);
    ASSERT_EQ(r.choice.verdicts.size(), 2u);
    EXPECT_EQ(r.choice.verdicts[0].provider, "0000:05:00.0");
    EXPECT_EQ(r.choice.verdicts[0].distance, 4);
    EXPECT_FALSE(r.choice.verdicts[0].through_host_bridge);
    EXPECT_TRUE(contains(r.choice.verdicts[0].reason, "common switch 0000:01:00.0"));
    EXPECT_EQ(r.choice.verdicts[1].distance, 4);
    EXPECT_TRUE(contains(r.choice.explanation, "Chose 0000:05:00.0"));
    EXPECT_TRUE(contains(r.choice.explanation,
                         "Also usable: 0000:04:00.0 nvme_cmb (distance 4, 16 MiB free)"))
        << r.choice.explanation;
}

TEST(P2pChoose, OneSwitchProviderThatIsAClientWins) {
    const Outcome r = run("one_switch", {"mlx5_0", "nvme0"});
    ASSERT_TRUE(r.choice.provider);
    EXPECT_EQ(r.choice.provider->bdf, "0000:04:00.0");
    EXPECT_EQ(verdict_of(r.choice, "0000:04:00.0").distance, 4);  // 4 + 0
    EXPECT_EQ(verdict_of(r.choice, "0000:05:00.0").distance, 8);  // 4 + 4
    EXPECT_TRUE(contains(verdict_of(r.choice, "0000:04:00.0").reason,
                         "same function as client 0000:04:00.0"));
}

TEST(P2pChoose, OneSwitchSameFunctionIsDistanceZero) {
    const Outcome r = run("one_switch", {"nvme0n1"});
    ASSERT_TRUE(r.choice.provider);
    EXPECT_EQ(r.choice.provider->bdf, "0000:04:00.0");
    EXPECT_EQ(r.choice.verdicts[0].distance, 0);
    EXPECT_TRUE(contains(r.choice.explanation, "(distance 0): same function"))
        << r.choice.explanation;
}

TEST(P2pChoose, TwoSwitchesPicksTheNearerOverTheLarger) {
    const Outcome r = run("two_switches", {"mlx5_0"});
    ASSERT_TRUE(r.choice.provider);
    EXPECT_EQ(r.choice.provider->bdf, "0000:06:00.0");
    EXPECT_EQ(r.choice.verdicts[0].distance, 4);
    EXPECT_EQ(verdict_of(r.choice, "0000:09:00.0", 0).distance, 8);
    EXPECT_EQ(verdict_of(r.choice, "0000:09:00.0", 1).distance, 8);
    EXPECT_TRUE(
        contains(verdict_of(r.choice, "0000:09:00.0").reason, "common switch 0000:01:00.0"));
    const Verdict& far = verdict_of(r.choice, "0000:0a:00.0");
    EXPECT_FALSE(far.usable);
    EXPECT_EQ(far.distance, -1);
    EXPECT_TRUE(contains(far.reason, "no common upstream bridge")) << far.reason;
    EXPECT_TRUE(contains(far.reason, "different root ports"));
    EXPECT_TRUE(contains(far.reason, "8086:6f00) is not whitelisted"));
    EXPECT_EQ(r.choice.verdicts.back().provider, "0000:0a:00.0");
    EXPECT_TRUE(contains(r.choice.explanation, "Refused: 0000:0a:00.0"));
}

TEST(P2pChoose, TwoSwitchesClientProviderTieBrokenBySize) {
    const Outcome r = run("two_switches", {"mlx5_0", "nvme1"});
    ASSERT_TRUE(r.choice.provider);
    EXPECT_EQ(r.choice.provider->bdf, "0000:09:00.0");
    EXPECT_EQ(r.choice.provider->kind, ProviderKind::nvme_cmb);  // 64 MiB beats the 32 MiB PMR
    EXPECT_EQ(r.choice.verdicts[0].distance, 8);
    EXPECT_EQ(r.choice.verdicts[1].provider, "0000:09:00.0");
    EXPECT_EQ(verdict_of(r.choice, "0000:06:00.0").distance, 12);
}

TEST(P2pChoose, AcsRedirectRefusedOnIntel) {
    const Outcome r = run("acs_redirect", {"mlx5_0"});
    EXPECT_FALSE(r.choice.provider);
    ASSERT_EQ(r.choice.verdicts.size(), 1u);
    const Verdict& v = r.choice.verdicts[0];
    EXPECT_FALSE(v.usable);
    EXPECT_TRUE(v.through_host_bridge);
    EXPECT_TRUE(contains(v.reason, "ACS redirect at 0000:02:00.0 (ACS Control 0x0005: RR)"))
        << v.reason;
    EXPECT_TRUE(contains(v.reason, "host bridge pci0000:00 (8086:6f00) is not whitelisted"));
    EXPECT_TRUE(contains(r.choice.explanation, "No P2P provider suits clients 0000:03:00.0"));
}

TEST(P2pChoose, AcsRedirectAllowedOnAmdZen) {
    HostFacts f;
    f.amd_zen = true;
    const Outcome r = run("acs_redirect", {"mlx5_0"}, f);
    ASSERT_TRUE(r.choice.provider);
    const Verdict& v = r.choice.verdicts[0];
    EXPECT_TRUE(v.usable);
    EXPECT_TRUE(v.through_host_bridge);
    EXPECT_EQ(v.distance, 4);
    EXPECT_TRUE(contains(v.reason, "through the host bridge")) << v.reason;
    EXPECT_TRUE(contains(v.reason, "AMD Zen"));
}

TEST(P2pChoose, AcsRedirectAllowedByExtraWhitelist) {
    const Outcome r = run("acs_redirect", {"mlx5_0"},
                          detail::read_host_facts(fixture("acs_redirect"), {{0x8086, 0x6f00}}));
    ASSERT_TRUE(r.choice.provider);
    EXPECT_TRUE(contains(r.choice.verdicts[0].reason, "(8086:6f00) is whitelisted"));
}

TEST(P2pChoose, AcsRedirectDoesNotStopTheSameFunction) {
    const Outcome r = run("acs_redirect", {"nvme0"});
    ASSERT_TRUE(r.choice.provider);
    EXPECT_EQ(r.choice.verdicts[0].distance, 0);
}

TEST(P2pChoose, RootComplexOnlyWhitelistedHostBridges) {
    const Outcome r = run("root_complex_only", {"mlx5_0"});
    ASSERT_TRUE(r.choice.provider);
    EXPECT_EQ(r.choice.provider->bdf, "0000:02:00.0");
    ASSERT_EQ(r.choice.verdicts.size(), 3u);
    for (const auto& v : r.choice.verdicts) {
        EXPECT_TRUE(v.usable) << v.reason;
        EXPECT_TRUE(v.through_host_bridge);
        EXPECT_EQ(v.distance, 4);  // 2 + 2 hops, no penalty (mainline Linux)
    }
    EXPECT_TRUE(
        contains(r.choice.verdicts[0].reason, "host bridge pci0000:00 (8086:2020) is whitelisted"));
    EXPECT_TRUE(
        contains(verdict_of(r.choice, "0000:18:00.0").reason,
                 "host bridge pci0000:17 (8086:2030) and host bridge pci0000:00 (8086:2020) "
                 "are whitelisted"));
    EXPECT_TRUE(contains(verdict_of(r.choice, "0000:3b:00.0").reason, "pci0000:3a (8086:2032)"));
}

TEST(P2pChoose, NonWhitelistedHostBridgeRefused) {
    const Outcome r = run("non_whitelisted", {"ens1f0np0"});
    EXPECT_FALSE(r.choice.provider);
    ASSERT_EQ(r.choice.verdicts.size(), 1u);
    const std::string& why = r.choice.verdicts[0].reason;
    EXPECT_TRUE(
        contains(why, "client 0000:01:00.0: no common upstream bridge (different root ports"))
        << why;
    EXPECT_TRUE(contains(why, "host bridge pci0000:00 (8086:3ec4) is not whitelisted"));
}

TEST(P2pChoose, AmdZenAllowsAnUnlistedHostBridge) {
    const Outcome r = run("amd", {"mlx5_0"});
    ASSERT_TRUE(r.choice.provider);
    EXPECT_EQ(r.choice.provider->bdf, "0000:02:00.0");
    EXPECT_EQ(r.choice.verdicts[0].distance, 4);
    EXPECT_TRUE(r.choice.verdicts[0].through_host_bridge);
    EXPECT_TRUE(contains(r.choice.verdicts[0].reason, "AMD Zen"));
    // The same tree with an Intel CPU: 1022:1480 is not on the list.
    const Outcome intel = run("amd", {"mlx5_0"}, HostFacts{});
    EXPECT_FALSE(intel.choice.provider);
    EXPECT_TRUE(contains(intel.choice.verdicts[0].reason, "(1022:1480) is not whitelisted"));
}

TEST(P2pChoose, P2pmemPublishedProviderChosen) {
    const Outcome r = run("p2pmem", {"mlx5_0"});
    ASSERT_TRUE(r.choice.provider);
    EXPECT_EQ(r.choice.provider->bdf, "0000:04:00.0");
    EXPECT_EQ(r.choice.provider->kind, ProviderKind::p2pmem);
    EXPECT_EQ(r.choice.verdicts[0].distance, 4);
    const Verdict& hidden = verdict_of(r.choice, "0000:05:00.0");
    EXPECT_FALSE(hidden.usable);
    EXPECT_TRUE(contains(hidden.reason, "not published")) << hidden.reason;
}

TEST(P2pChoose, QemuLabCmbForItsOwnController) {
    const Outcome r = run("qemu_lab", {"nvme0"});
    ASSERT_TRUE(r.choice.provider);
    EXPECT_EQ(r.choice.provider->bdf, "0000:00:03.0");
    EXPECT_EQ(r.choice.verdicts[0].distance, 0);
}

TEST(P2pChoose, QemuLabRootBusPeersGoThroughAnUnlistedHostBridge) {
    const Outcome r = run("qemu_lab", {"0000:00:04.0"});
    EXPECT_FALSE(r.choice.provider);
    const std::string& why = r.choice.verdicts[0].reason;
    EXPECT_TRUE(contains(why, "a device on the root bus of pci0000:00")) << why;
    EXPECT_TRUE(contains(why, "(8086:1237) is not whitelisted and the CPU is not AMD Zen"));
}

TEST(P2pChoose, NoProvidersExplained) {
    const Choice c = detail::choose(fixture("one_switch"), HostFacts{}, {},
                                    place_all(fixture("one_switch"), {"mlx5_0"}));
    EXPECT_FALSE(c.provider);
    EXPECT_TRUE(c.verdicts.empty());
    EXPECT_TRUE(contains(c.explanation, "No P2P provider was found"));
}

TEST(P2pChoose, NoClientsIsNotUsable) {
    std::vector<std::string> skipped;
    const auto providers = detail::discover_providers(fixture("one_switch"), skipped);
    const Choice c = detail::choose(fixture("one_switch"), HostFacts{}, providers, {});
    EXPECT_FALSE(c.provider);
    ASSERT_EQ(c.verdicts.size(), 2u);
    EXPECT_EQ(c.verdicts[0].reason, "no clients to judge against");
}

} // namespace
} // namespace rpm::p2p
