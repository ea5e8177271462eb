// place(): devices by BDF and by name, and the errors.
#include "p2p_fixture.hpp"

#include <gtest/gtest.h>

namespace rpm::p2p {
namespace {

using namespace testing;
using detail::place;

const std::vector<std::string> kNvme0Upstream{"0000:02:01.0", "0000:01:00.0", "0000:00:01.0"};

TEST(P2pPlace, ByBdf) {
    auto p = place(fixture("one_switch"), "0000:04:00.0");
    ASSERT_TRUE(p) << p.error().message();
    EXPECT_EQ(p->bdf, "0000:04:00.0");
    EXPECT_EQ(p->upstream, kNvme0Upstream);
    EXPECT_EQ(p->host_bridge, "pci0000:00");
}

TEST(P2pPlace, ByName) {
    const fs::path root = fixture("one_switch");
    for (const char* name : {"nvme0", "nvme0n1"}) {
        auto p = place(root, name);
        ASSERT_TRUE(p) << name << ": " << p.error().message();
        EXPECT_EQ(p->bdf, "0000:04:00.0") << name;
        EXPECT_EQ(p->upstream, kNvme0Upstream) << name;
    }
    for (const char* name : {"mlx5_0", "ens1f0np0"}) {
        auto p = place(root, name);
        ASSERT_TRUE(p) << name << ": " << p.error().message();
        EXPECT_EQ(p->bdf, "0000:03:00.0") << name;
    }
}

TEST(P2pPlace, OnTheRootBus) {
    auto p = place(fixture("qemu_lab"), "nvme0");
    ASSERT_TRUE(p) << p.error().message();
    EXPECT_EQ(p->bdf, "0000:00:03.0");
    EXPECT_TRUE(p->upstream.empty());
    EXPECT_EQ(p->host_bridge, "pci0000:00");
}

TEST(P2pPlace, UnknownDevices) {
    auto p = place(fixture("one_switch"), "0000:09:00.0");
    ASSERT_FALSE(p);
    EXPECT_EQ(p.error(), errc::path_not_found);
    EXPECT_TRUE(contains(p.error().detail(), "no PCI device 0000:09:00.0"));
    p = place(fixture("one_switch"), "nvme7");
    ASSERT_FALSE(p);
    EXPECT_EQ(p.error(), errc::path_not_found);
    EXPECT_TRUE(contains(p.error().detail(), "no device nvme7"));
}

TEST(P2pPlace, SoftRoceHasNoPciDevice) {
    auto p = place(fixture("qemu_lab"), "rxe0");
    ASSERT_FALSE(p);
    EXPECT_EQ(p.error(), errc::invalid_argument);
    EXPECT_TRUE(contains(p.error().detail(), "Soft-RoCE")) << p.error().detail();
    p = place(fixture("qemu_lab"), "veth0");
    ASSERT_FALSE(p);
    EXPECT_EQ(p.error(), errc::invalid_argument);
    EXPECT_TRUE(contains(p.error().detail(), "no PCI parent"));
}

TEST(P2pPlace, NamesCannotClimb) {
    for (const char* bad : {"", "..", "../../etc", "nvme0/device"}) {
        auto p = place(fixture("one_switch"), bad);
        ASSERT_FALSE(p) << bad;
        EXPECT_EQ(p.error(), errc::invalid_argument) << bad;
    }
}

} // namespace
} // namespace rpm::p2p
