#include "platform/rdma_caps.hpp"

#include <gtest/gtest.h>

namespace rpm::platform {
namespace {

TEST(RdmaCapsBits, NoFlagsNoCaps) {
    RdmaCaps c = caps_from_flags(0);
    EXPECT_FALSE(c.native_flush);
    EXPECT_FALSE(c.atomic_write);
}

TEST(RdmaCapsBits, Bit39IsPersistentFlush) {
    RdmaCaps c = caps_from_flags(1ULL << 39);
    EXPECT_TRUE(c.native_flush);
    EXPECT_FALSE(c.atomic_write);
}

TEST(RdmaCapsBits, Bit38GlobalFlushDoesNotCount) {
    // FLUSH_GLOBAL only makes data visible, not durable.
    RdmaCaps c = caps_from_flags(1ULL << 38);
    EXPECT_FALSE(c.native_flush);
    EXPECT_FALSE(c.atomic_write);
}

TEST(RdmaCapsBits, Bit40IsAtomicWrite) {
    RdmaCaps c = caps_from_flags(1ULL << 40);
    EXPECT_FALSE(c.native_flush);
    EXPECT_TRUE(c.atomic_write);
}

TEST(RdmaCapsBits, AllOtherBitsAreIgnored) {
    RdmaCaps c = caps_from_flags(~((1ULL << 39) | (1ULL << 40)));
    EXPECT_FALSE(c.native_flush);
    EXPECT_FALSE(c.atomic_write);
}

TEST(RdmaCapsBits, ConstantsMatchTheKernelUapi) {
    EXPECT_EQ(kDeviceFlushGlobal, 0x4000000000ULL);
    EXPECT_EQ(kDeviceFlushPersistent, 0x8000000000ULL);
    EXPECT_EQ(kDeviceAtomicWrite, 0x10000000000ULL);
}

TEST(RdmaCapsBits, DetailShowsTheFlagsInHex) {
    EXPECT_EQ(caps_detail((1ULL << 39) | 0x10),
              "ibv_query_device_ex: device_cap_flags_ex=0x8000000010");
}

TEST(RdmaCapsVerbs, UnknownDeviceNameIsRdmaUnavailable) {
    auto flags = query_device_cap_flags_ex("rpm-no-such-device");
    ASSERT_FALSE(flags);
    EXPECT_TRUE(flags.error() == errc::rdma_unavailable);
    EXPECT_NE(flags.error().detail().find("rpm-no-such-device"), std::string::npos)
        << flags.error().detail();
}

} // namespace
} // namespace rpm::platform
