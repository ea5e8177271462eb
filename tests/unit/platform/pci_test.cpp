#include "platform/pci.hpp"
#include "platform/xeon_iio.hpp"

#include <gtest/gtest.h>

#include <array>

namespace rpm::platform {
namespace {

namespace fs = std::filesystem;

TEST(PlatformPci, RecognisesBdfs) {
    EXPECT_TRUE(pci::is_bdf("0000:17:00.0"));
    EXPECT_TRUE(pci::is_bdf("10000:01:00.7"));  // VMD domain
    EXPECT_FALSE(pci::is_bdf("0000:17:00"));
    EXPECT_FALSE(pci::is_bdf("pci0000:17"));
    EXPECT_FALSE(pci::is_bdf("infiniband"));
    EXPECT_FALSE(pci::is_bdf("0000:1g:00.0"));
}

TEST(PlatformPci, RecognisesHostBridges) {
    EXPECT_TRUE(pci::is_host_bridge("pci0000:17"));
    EXPECT_TRUE(pci::is_host_bridge("pci10000:00"));
    EXPECT_FALSE(pci::is_host_bridge("pci_express"));
    EXPECT_FALSE(pci::is_host_bridge("0000:17:00.0"));
}

TEST(PlatformPci, RootPortIsTheFirstBdfOfTheChain) {
    auto loc = pci::parse_location("sys/devices/pci0000:17/0000:17:00.0/0000:18:00.0");
    ASSERT_TRUE(loc);
    EXPECT_EQ(loc->host_bridge, fs::path("sys/devices/pci0000:17"));
    EXPECT_EQ(loc->bdfs, (std::vector<std::string>{"0000:17:00.0", "0000:18:00.0"}));
    EXPECT_EQ(pci::root_port_bdf(*loc), "0000:17:00.0");
    EXPECT_EQ(pci::dir_of(*loc, 0), fs::path("sys/devices/pci0000:17/0000:17:00.0"));
}

TEST(PlatformPci, BehindASwitchTheRootPortIsStillFirst) {
    auto loc = pci::parse_location(
        "sys/devices/pci0000:17/0000:17:00.0/0000:18:00.0/0000:19:00.0/0000:1a:00.0");
    ASSERT_TRUE(loc);
    ASSERT_EQ(loc->bdfs.size(), 4u);
    EXPECT_EQ(loc->bdfs.back(), "0000:1a:00.0");
    EXPECT_EQ(pci::root_port_bdf(*loc), "0000:17:00.0");
}

TEST(PlatformPci, DeviceOnTheRootComplexHasNoRootPort) {
    auto loc = pci::parse_location("sys/devices/pci0000:00/0000:00:05.0");
    ASSERT_TRUE(loc);
    EXPECT_EQ(loc->bdfs, (std::vector<std::string>{"0000:00:05.0"}));
    EXPECT_FALSE(pci::root_port_bdf(*loc));
}

TEST(PlatformPci, VirtualDeviceHasNoLocation) {
    EXPECT_FALSE(pci::parse_location("sys/devices/virtual/net/veth0"));
    EXPECT_FALSE(pci::parse_location("sys/devices/pci0000:00"));
}

TEST(PlatformPci, ChainStopsAtTheFirstNonBdf) {
    auto loc = pci::parse_location("sys/devices/pci0000:17/0000:17:00.0/0000:18:00.0/infiniband/mlx5_0");
    ASSERT_TRUE(loc);
    EXPECT_EQ(loc->bdfs.size(), 2u);
}

TEST(PlatformPci, ParsesHexIds) {
    EXPECT_EQ(pci::parse_hex_u16("0x8086"), 0x8086);
    EXPECT_EQ(pci::parse_hex_u16("1022"), 0x1022);
    EXPECT_FALSE(pci::parse_hex_u16("0x18086"));
    EXPECT_FALSE(pci::parse_hex_u16("0x"));
    EXPECT_FALSE(pci::parse_hex_u16("intel"));
    EXPECT_EQ(pci::id_pair(0x1022, 0x1483), "1022:1483");
}

TEST(PlatformPci, XeonIioTableCoversEachGenerationsRange) {
    constexpr std::span<const std::uint16_t> none;
    for (int id : {0x2f02, 0x2f0b, 0x6f02, 0x6f0b, 0x2030, 0x2033})
        EXPECT_TRUE(is_xeon_iio(kIntelVendorId, static_cast<std::uint16_t>(id), none)) << std::hex << id;
    for (int id : {0x2f01, 0x2f0c, 0x6f01, 0x6f0c, 0x202f, 0x2034, 0x7fff})
        EXPECT_FALSE(is_xeon_iio(kIntelVendorId, static_cast<std::uint16_t>(id), none)) << std::hex << id;
}

TEST(PlatformPci, XeonIioNeedsIntelAndAcceptsExtraIds) {
    const std::array<std::uint16_t, 1> extra{0x7fff};
    EXPECT_FALSE(is_xeon_iio(0x1022, 0x2030, {}));
    EXPECT_TRUE(is_xeon_iio(kIntelVendorId, 0x7fff, extra));
    EXPECT_FALSE(is_xeon_iio(0x1022, 0x7fff, extra));
}

} // namespace
} // namespace rpm::platform
