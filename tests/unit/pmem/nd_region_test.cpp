// nd_region_of through a fake sysfs tree laid out like a real one.
#include "scratch.hpp"

#include <rpm/platform.hpp>

#include <gtest/gtest.h>

namespace {

using rpm::platform::nd_region_of;
using rpm_test::make_link;
namespace fs = std::filesystem;

class NdRegion : public ::testing::Test {
protected:
    // The temp directory is named like a region, so a match above the root
    // would show up as "region9".
    rpm_test::ScratchDir scratch{fs::temp_directory_path()};
    fs::path root = scratch.path() / "region9" / "root";
    fs::path ndbus = root / "sys/devices/LNXSYSTM:00/LNXSYBUS:00/ACPI0012:00/ndbus0";

    void SetUp() override {
        const fs::path pmem0 = ndbus / "region0/namespace0.0/block/pmem0";
        fs::create_directories(pmem0 / "pmem0p1");
        make_link(pmem0, root / "sys/dev/block/259:0");
        make_link(pmem0 / "pmem0p1", root / "sys/dev/block/259:1");
        const fs::path dax = ndbus / "region1/dax1.0/dax/dax1.0";
        fs::create_directories(dax);
        make_link(dax, root / "sys/dev/char/252:0");
        const fs::path loop = root / "sys/devices/virtual/block/loop0";
        fs::create_directories(loop);
        make_link(loop, root / "sys/dev/block/7:0");
    }
};

TEST_F(NdRegion, BlockDeviceIsFoundInItsRegion) {
    EXPECT_EQ(nd_region_of(root, 259, 0, false), "region0");
}

TEST_F(NdRegion, PartitionIsFoundInItsDisksRegion) {
    EXPECT_EQ(nd_region_of(root, 259, 1, false), "region0");
}

TEST_F(NdRegion, DevdaxCharDeviceIsFoundInItsRegion) {
    EXPECT_EQ(nd_region_of(root, 252, 0, true), "region1");
}

TEST_F(NdRegion, BlockAndCharNumbersAreSeparate) {
    EXPECT_EQ(nd_region_of(root, 252, 0, false), std::nullopt);
    EXPECT_EQ(nd_region_of(root, 259, 0, true), std::nullopt);
}

TEST_F(NdRegion, DeviceOutsideAnyRegionIsNullopt) {
    EXPECT_EQ(nd_region_of(root, 7, 0, false), std::nullopt);
}

TEST_F(NdRegion, MissingDeviceIsNullopt) {
    EXPECT_EQ(nd_region_of(root, 8, 0, false), std::nullopt);
    EXPECT_EQ(nd_region_of(scratch.path() / "no-such-root", 259, 0, false), std::nullopt);
}

TEST_F(NdRegion, LinkEscapingTheRootIsNullopt) {
    const fs::path outside = scratch.path() / "outside/region7/block/sda";
    fs::create_directories(outside);
    make_link(outside, root / "sys/dev/block/8:0");
    EXPECT_EQ(nd_region_of(root, 8, 0, false), std::nullopt);
}

TEST_F(NdRegion, NearestRegionToTheLeafWins) {
    // Not a real layout, but it pins down "from the leaf up".
    const fs::path nested = ndbus / "region2/sub/ndbus1/region3/namespace3.0/block/pmem3";
    fs::create_directories(nested);
    make_link(nested, root / "sys/dev/block/259:3");
    EXPECT_EQ(nd_region_of(root, 259, 3, false), "region3");
}

TEST_F(NdRegion, OnlyRegionFollowedByDigitsMatches) {
    const fs::path odd = root / "sys/devices/region/regionX/region1a/block/pmem5";
    fs::create_directories(odd);
    make_link(odd, root / "sys/dev/block/259:5");
    EXPECT_EQ(nd_region_of(root, 259, 5, false), std::nullopt);
}

// Linux 6.3+: a volatile CXL region's dax device sits below the CXL
// regionN (parent: a root decoder), which is not an nd region.
TEST_F(NdRegion, RegionOutsideAnNdBusIsNotAnNdRegion) {
    const fs::path dax =
        root / "sys/devices/platform/ACPI0017:00/root0/decoder0.0/region0/dax_region0/dax0.0";
    fs::create_directories(dax);
    make_link(dax, root / "sys/dev/char/252:1");
    EXPECT_EQ(nd_region_of(root, 252, 1, true), std::nullopt);
}

TEST_F(NdRegion, OnlyTheRegionOnTheBusCounts) {
    // Not a real layout: an nd region with a regionN directory below it
    // that is not on a bus; the bus's region is the answer.
    const fs::path nested = ndbus / "region6/sub/region8/block/pmem6";
    fs::create_directories(nested);
    make_link(nested, root / "sys/dev/block/259:6");
    EXPECT_EQ(nd_region_of(root, 259, 6, false), "region6");
}

TEST_F(NdRegion, AbsoluteLinkIsTakenFromTheRoot) {
    // As under chroot: "/sys/devices/..." means root/sys/devices/..., never
    // the host's /sys.
    fs::create_directories(root / "sys/dev/block");
    fs::create_symlink(
        "/sys/devices/LNXSYSTM:00/LNXSYBUS:00/ACPI0012:00/ndbus0/region0/namespace0.0/block/pmem0",
        root / "sys/dev/block/259:7");
    EXPECT_EQ(nd_region_of(root, 259, 7, false), "region0");
}

}  // namespace
