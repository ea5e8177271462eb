// Provider discovery: p2pmem directories and NVMe CMB/PMR registers, and
// the register reader underneath.
#include "p2p_fixture.hpp"

#include "p2p/nvme_registers.hpp"

#include <gtest/gtest.h>

#include <array>

namespace rpm::p2p {
namespace {

using namespace testing;
using namespace detail;

constexpr std::uint64_t MiB = 1ULL << 20;

std::vector<Provider> discover(const fs::path& root, std::vector<std::string>& skipped) {
    return discover_providers(root, skipped);
}

TEST(P2pProviders, OneSwitchCmbs) {
    std::vector<std::string> skipped;
    const auto ps = discover(fixture("one_switch"), skipped);
    EXPECT_TRUE(skipped.empty()) << skipped.front();
    ASSERT_EQ(ps.size(), 2u);
    EXPECT_EQ(ps[0].bdf, "0000:04:00.0");
    EXPECT_EQ(ps[0].kind, ProviderKind::nvme_cmb);
    EXPECT_EQ(ps[0].size, 16 * MiB);
    EXPECT_EQ(ps[0].available, 16 * MiB);
    EXPECT_EQ(ps[0].bar, 2);
    EXPECT_EQ(ps[0].bar_offset, 0u);
    EXPECT_TRUE(ps[0].write_data);
    EXPECT_TRUE(ps[0].read_data);
    EXPECT_TRUE(ps[0].published);
    EXPECT_EQ(ps[0].detail, "CMB in BAR2 at 0x0, 16 MiB, SZU 1 MiB, WDS RDS LISTS SQS");
    EXPECT_EQ(ps[1].bdf, "0000:05:00.0");
    EXPECT_EQ(ps[1].size, 32 * MiB);
}

TEST(P2pProviders, TwoSwitchesCmbAndPmr) {
    std::vector<std::string> skipped;
    const auto ps = discover(fixture("two_switches"), skipped);
    EXPECT_TRUE(skipped.empty());
    ASSERT_EQ(ps.size(), 4u);
    EXPECT_EQ(ps[1].bdf, "0000:09:00.0");
    EXPECT_EQ(ps[1].kind, ProviderKind::nvme_cmb);
    EXPECT_EQ(ps[1].size, 64 * MiB);
    EXPECT_EQ(ps[2].bdf, "0000:09:00.0");
    EXPECT_EQ(ps[2].kind, ProviderKind::nvme_pmr);
    EXPECT_EQ(ps[2].bar, 4);
    EXPECT_EQ(ps[2].size, 32 * MiB);
    EXPECT_TRUE(ps[2].published);
    EXPECT_TRUE(contains(ps[2].detail, "PMR in BAR4")) << ps[2].detail;
    EXPECT_EQ(ps[3].size, 128 * MiB);
}

TEST(P2pProviders, P2pmemDirectories) {
    std::vector<std::string> skipped;
    const auto ps = discover(fixture("p2pmem"), skipped);
    ASSERT_EQ(ps.size(), 2u);  // 05:00.0's CMB is not offered twice
    EXPECT_EQ(ps[0].bdf, "0000:04:00.0");
    EXPECT_EQ(ps[0].kind, ProviderKind::p2pmem);
    EXPECT_EQ(ps[0].size, 256 * MiB);
    EXPECT_EQ(ps[0].available, 192 * MiB);
    EXPECT_TRUE(ps[0].published);
    EXPECT_EQ(ps[0].bar, -1);
    EXPECT_EQ(ps[1].bdf, "0000:05:00.0");
    EXPECT_EQ(ps[1].kind, ProviderKind::p2pmem);
    EXPECT_FALSE(ps[1].published);
    ASSERT_EQ(skipped.size(), 1u);
    EXPECT_TRUE(contains(skipped[0], "0000:06:00.0: NVMe CMB present but disabled")) << skipped[0];
}

TEST(P2pProviders, QemuLabCmb) {
    std::vector<std::string> skipped;
    const auto ps = discover(fixture("qemu_lab"), skipped);
    EXPECT_TRUE(skipped.empty());
    ASSERT_EQ(ps.size(), 1u);
    EXPECT_EQ(ps[0].bdf, "0000:00:03.0");
    EXPECT_EQ(ps[0].kind, ProviderKind::nvme_cmb);
    EXPECT_EQ(ps[0].bar, 2);
    EXPECT_EQ(ps[0].size, 16 * MiB);
}

TEST(P2pProviders, ShortResource0IsSkippedNotFatal) {
    TreeCopy t("one_switch");
    fs::resize_file(t.device_file("0000:04:00.0", "resource0"), 0x20);
    std::vector<std::string> skipped;
    const auto ps = discover(t.root(), skipped);
    ASSERT_EQ(ps.size(), 1u);
    EXPECT_EQ(ps[0].bdf, "0000:05:00.0");
    ASSERT_EQ(skipped.size(), 1u);
    EXPECT_TRUE(contains(skipped[0], "0000:04:00.0: NVMe registers unreadable")) << skipped[0];
    EXPECT_TRUE(contains(skipped[0], "32 bytes, too short for the register at 0x38"));
}

TEST(P2pProviders, MissingResource0AndBadP2pmemAreSkipped) {
    TreeCopy t("p2pmem");
    fs::remove(t.device_file("0000:06:00.0", "resource0"));
    std::ofstream(t.device_file("0000:04:00.0", "p2pmem/size")) << "lots\n";
    std::vector<std::string> skipped;
    const auto ps = discover(t.root(), skipped);
    ASSERT_EQ(ps.size(), 1u);
    ASSERT_EQ(skipped.size(), 2u);
    EXPECT_TRUE(contains(skipped[0], "0000:04:00.0: p2pmem unreadable")) << skipped[0];
    EXPECT_TRUE(contains(skipped[1], "0000:06:00.0: NVMe registers unreadable")) << skipped[1];
}

TEST(P2pProviders, NoPciTreeIsReported) {
    std::vector<std::string> skipped;
    EXPECT_TRUE(discover(fixture("no_such_tree"), skipped).empty());
    ASSERT_EQ(skipped.size(), 1u);
}

NvmeView view(std::uint32_t cmbloc, std::uint32_t cmbsz, std::uint64_t bar2) {
    NvmeView v;
    v.bdf = "0000:01:00.0";
    v.cmbloc = cmbloc;
    v.cmbsz = cmbsz;
    char line[80];
    std::snprintf(line, sizeof line, "0x%016llx 0x%016llx 0x0\n", 0x1000000000ULL,
                  static_cast<unsigned long long>(0x1000000000ULL + bar2 - 1));
    v.resource_table =
        "0x00000000fb000000 0x00000000fb003fff 0x140204\n0x0 0x0 0x0\n" + std::string(line);
    return v;
}

TEST(P2pProviders, CmbDecoding) {
    std::vector<std::string> skipped;
    // OFST 2 in 64 KiB units (SZU 1), SZ 4: 256 KiB at 128 KiB, WDS only.
    auto ps = decode_nvme(view(0x2002, (4u << 12) | (1u << 8) | 0x10, MiB), skipped);
    ASSERT_EQ(ps.size(), 1u);
    EXPECT_EQ(ps[0].bar_offset, 128 * 1024u);
    EXPECT_EQ(ps[0].size, 256 * 1024u);
    EXPECT_TRUE(ps[0].write_data);
    EXPECT_FALSE(ps[0].read_data);
    EXPECT_FALSE(ps[0].published);
    EXPECT_TRUE(contains(ps[0].detail, "not published"));
    // 32 MiB CMB in a 16 MiB BAR: cut to fit, as the kernel does.
    ps = decode_nvme(view(0x2, (32u << 12) | (2u << 8) | 0x18, 16 * MiB), skipped);
    ASSERT_EQ(ps.size(), 1u);
    EXPECT_EQ(ps[0].size, 16 * MiB);
    EXPECT_TRUE(contains(ps[0].detail, "cut from 32 MiB")) << ps[0].detail;
    EXPECT_TRUE(skipped.empty());
}

TEST(P2pProviders, CmbRejections) {
    std::vector<std::string> skipped;
    EXPECT_TRUE(
        decode_nvme(view(0x2 | (32u << 12), (1u << 12) | (2u << 8) | 0x18, 16 * MiB), skipped)
            .empty());
    EXPECT_TRUE(decode_nvme(view(0x1, (1u << 12) | 0x18, 16 * MiB), skipped).empty());  // BIR 1
    EXPECT_TRUE(
        decode_nvme(view(0x2, (1u << 12) | (7u << 8) | 0x18, 16 * MiB), skipped).empty());  // SZU 7
    EXPECT_TRUE(
        decode_nvme(view(0x4, (1u << 12) | 0x18, 16 * MiB), skipped).empty());  // BAR4 unused
    ASSERT_EQ(skipped.size(), 4u);
    EXPECT_TRUE(contains(skipped[0], "beyond BAR2")) << skipped[0];
    EXPECT_TRUE(contains(skipped[1], "reserved values"));
    EXPECT_TRUE(contains(skipped[2], "reserved values"));
    EXPECT_TRUE(contains(skipped[3], "BAR4, which `resource` shows unused")) << skipped[3];
    NvmeView none = view(0, 0, MiB);
    EXPECT_TRUE(decode_nvme(none, skipped).empty());  // no CMB, not supported: nothing to say
    EXPECT_EQ(skipped.size(), 4u);
}

TEST(P2pProviders, PmrDecoding) {
    NvmeView v = view(0, 0, 8 * MiB);
    v.cap = 1ULL << nvme_reg::cap_pmrs_bit;
    v.pmrcap = (2u << 5) | 0x18;  // BAR2, WDS, RDS
    v.pmrctl = 0;
    std::vector<std::string> skipped;
    auto ps = decode_nvme(v, skipped);
    ASSERT_EQ(ps.size(), 1u);
    EXPECT_EQ(ps[0].kind, ProviderKind::nvme_pmr);
    EXPECT_EQ(ps[0].size, 8 * MiB);
    EXPECT_FALSE(ps[0].published);  // PMRCTL.EN 0
    EXPECT_TRUE(contains(ps[0].detail, "disabled")) << ps[0].detail;
    v.pmrctl = 1;
    ps = decode_nvme(v, skipped);
    ASSERT_EQ(ps.size(), 1u);
    EXPECT_TRUE(ps[0].published);
}

TEST(P2pProviders, RegisterReaderPreadAndMmapAgree) {
    const fs::path f =
        fs::canonical(fixture("two_switches") / "sys/bus/pci/devices/0000:09:00.0") / "resource0";
    constexpr std::array<std::uint32_t, 5> offs{0x00, 0x04, 0x38, 0x3c, 0xe00};
    auto a = read_registers(f, offs);
    auto b = read_registers(f, offs, true);
    ASSERT_TRUE(a) << a.error().message();
    ASSERT_TRUE(b) << b.error().message();
    EXPECT_EQ(*a, *b);
    EXPECT_EQ((*a)[1], 0x03400020u);  // CAP high: CMBS, PMRS, MPSMAX, CSS
    EXPECT_EQ((*a)[3], 0x0004021du);  // CMBSZ: 64 x 1 MiB, WDS RDS LISTS SQS
}

TEST(P2pProviders, RegisterReaderErrors) {
    TreeCopy t("one_switch");
    const fs::path f = t.device_file("0000:04:00.0", "resource0");
    fs::resize_file(f, 0x40);
    constexpr std::array<std::uint32_t, 1> far{0xe00};
    auto r = read_registers(f, far);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::bad_size);
    r = read_registers(f, far, true);  // never maps past the end of a file
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::bad_size);
    r = read_registers(t.root() / "nope", far);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::path_not_found);
}

TEST(P2pProviders, BarSizesFromResource) {
    const std::string table =
        "0x00000000fb000000 0x00000000fb003fff 0x0000000000140204\n"
        "0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
        "0x0000038000000000 0x0000038000ffffff 0x000000000014220c\n";
    EXPECT_EQ(bar_size(table, 0), 0x4000u);
    EXPECT_FALSE(bar_size(table, 1));
    EXPECT_EQ(bar_size(table, 2), 16 * MiB);
    EXPECT_FALSE(bar_size(table, 5));
    EXPECT_FALSE(bar_size("garbage\n", 0));
}

TEST(P2pProviders, KindNames) {
    EXPECT_EQ(to_string(ProviderKind::p2pmem), "p2pmem");
    EXPECT_EQ(to_string(ProviderKind::nvme_cmb), "nvme_cmb");
    EXPECT_EQ(to_string(ProviderKind::nvme_pmr), "nvme_pmr");
}

} // namespace
} // namespace rpm::p2p
