#include "platform/ddio.hpp"
#include "temp_tree.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace rpm::platform {
namespace {

RootPort skylake_port() { return RootPort{"0000:17:00.0", 0x8086, 0x2030, true}; }

std::vector<std::uint8_t> config_with(std::uint8_t perfctrlsts_0, std::size_t size = 4096) {
    std::vector<std::uint8_t> c(size, 0);
    c[0] = 0x86;
    c[1] = 0x80;
    if (size > 0x180) c[0x180] = perfctrlsts_0;
    return c;
}

using testing::contains;

TEST(DdioDecode, Bit7SetIsOn) {
    DdioReading r = ddio_from_config(skylake_port(), config_with(0x80));
    EXPECT_EQ(r.state, Ddio::on);
    EXPECT_EQ(r.perfctrlsts_0, 0x80);
    EXPECT_EQ(r.use_allocating_flow_wr, true);
    EXPECT_EQ(r.no_snoop_op_wr_en, false);
    EXPECT_EQ(r.detail, "perfctrlsts_0 (0x180) = 0x80: use_allocating_flow_wr=1, NoSnoopOpWrEn=0");
}

TEST(DdioDecode, Bit3AloneIsOffWithNoSnoopReported) {
    DdioReading r = ddio_from_config(skylake_port(), config_with(0x08));
    EXPECT_EQ(r.state, Ddio::off);
    EXPECT_EQ(r.use_allocating_flow_wr, false);
    EXPECT_EQ(r.no_snoop_op_wr_en, true);
    EXPECT_EQ(r.detail, "perfctrlsts_0 (0x180) = 0x08: use_allocating_flow_wr=0, NoSnoopOpWrEn=1");
}

TEST(DdioDecode, BothBitsIsOn) {
    DdioReading r = ddio_from_config(skylake_port(), config_with(0x88));
    EXPECT_EQ(r.state, Ddio::on);
    EXPECT_EQ(r.no_snoop_op_wr_en, true);
    EXPECT_TRUE(contains(r.detail, "= 0x88"));
}

TEST(DdioDecode, ZeroIsOff) {
    DdioReading r = ddio_from_config(skylake_port(), config_with(0x00));
    EXPECT_EQ(r.state, Ddio::off);
    EXPECT_EQ(r.perfctrlsts_0, 0x00);
    EXPECT_EQ(r.no_snoop_op_wr_en, false);
}

TEST(DdioDecode, OtherBitsDoNotMatter) {
    EXPECT_EQ(ddio_from_config(skylake_port(), config_with(0x7f)).state, Ddio::off);
    EXPECT_EQ(ddio_from_config(skylake_port(), config_with(0xff)).state, Ddio::on);
}

TEST(DdioDecode, ShortConfigIsUnknownAndSaysWhy) {
    DdioReading r = ddio_from_config(skylake_port(), config_with(0x80, 64));
    EXPECT_EQ(r.state, Ddio::unknown);
    EXPECT_FALSE(r.perfctrlsts_0);
    EXPECT_FALSE(r.use_allocating_flow_wr);
    EXPECT_EQ(r.detail, "config space of 0000:17:00.0 is 64 bytes; offset 0x180 needs root "
                        "(run as root or set RPM_DDIO)");
}

TEST(DdioDecode, ExactlyOneByteTooShortIsUnknown) {
    EXPECT_EQ(ddio_from_config(skylake_port(), config_with(0x80, 0x180)).state, Ddio::unknown);
    EXPECT_EQ(ddio_from_config(skylake_port(), config_with(0x80, 0x181)).state, Ddio::on);
}

TEST(DdioDecode, NonIntelRootPortIsUnknownWhateverTheBytes) {
    const RootPort amd{"0000:40:01.1", 0x1022, 0x1483, false};
    DdioReading r = ddio_from_config(amd, config_with(0x80));
    EXPECT_EQ(r.state, Ddio::unknown);
    EXPECT_FALSE(r.perfctrlsts_0);
    EXPECT_EQ(r.detail, "root port 1022:1483 is not Intel: DDIO cannot be read (set RPM_DDIO)");
}

TEST(DdioDecode, UnknownIntelPortIsUnknownAndSaysHowToAddIt) {
    const RootPort newer{"0000:17:00.0", 0x8086, 0x7fff, false};
    DdioReading r = ddio_from_config(newer, config_with(0x80));
    EXPECT_EQ(r.state, Ddio::unknown);
    EXPECT_TRUE(contains(r.detail, "8086:7fff")) << r.detail;
    EXPECT_TRUE(contains(r.detail, "not a known Intel Xeon IIO root port")) << r.detail;
    EXPECT_TRUE(contains(r.detail, "add 0x7fff")) << r.detail;
    EXPECT_TRUE(contains(r.detail, "RPM_IIO_ROOT_PORT_IDS")) << r.detail;
}

TEST(DdioDecode, ExtraIdMarkedXeonIioIsDecoded) {
    // detect() sets xeon_iio from the table plus DetectOptions'
    // extra_iio_device_ids; a port so marked is read like any other.
    const RootPort newer{"0000:17:00.0", 0x8086, 0x7fff, true};
    EXPECT_EQ(ddio_from_config(newer, config_with(0x80)).state, Ddio::on);
}

TEST(DdioDecode, UnreadableVendorIsUnknown) {
    const RootPort blank{"0000:17:00.0", 0, 0, false};
    DdioReading r = ddio_from_config(blank, config_with(0x80));
    EXPECT_EQ(r.state, Ddio::unknown);
    EXPECT_TRUE(contains(r.detail, "vendor ID unreadable")) << r.detail;
}

TEST(DdioDecode, IdentityCheckPassesOnlyKnownXeonPorts) {
    EXPECT_FALSE(ddio_identity_check(skylake_port()));
    EXPECT_TRUE(ddio_identity_check(RootPort{"b", 0x1022, 0x1483, false}));
}

} // namespace
} // namespace rpm::platform
