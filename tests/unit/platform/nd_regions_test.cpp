#include "platform/nd_regions.hpp"

#include "temp_tree.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace rpm::platform {
namespace {

using testing::TempTree;

bool mentions(const std::vector<std::string>& lines, const std::string& what) {
    return std::any_of(lines.begin(), lines.end(),
                       [&](const std::string& l) { return l.find(what) != std::string::npos; });
}

TEST(PlatformNdRegions, NumericOrder) {
    EXPECT_TRUE(numeric_name_less("region2", "region10"));
    EXPECT_FALSE(numeric_name_less("region10", "region2"));
    EXPECT_TRUE(numeric_name_less("mlx5_1", "mlx5_10"));
    EXPECT_TRUE(numeric_name_less("ndbus0", "region0"));
}

TEST(PlatformNdRegions, DevicesOfEveryNamespaceKind) {
    TempTree t;
    t.file("r/namespace0.0/block/pmem0/dev", "259:0");
    t.file("r/pfn0.1/block/pmem1/dev", "259:1");
    t.file("r/btt0.1/block/pmem2s/dev", "259:2");
    t.file("r/dax0.1/dax0.1/dev", "252:1");
    t.file("r/dax0.1/dax_region/id", "0");
    t.file("r/dax0.2/dax/dax0.2/dev", "252:2");
    t.file("r/dax0.0/devtype", "nd_dax");  // an unused seed: no device
    t.file("r/persistence_domain", "\n");
    EXPECT_EQ(region_devices(t.root(), "r"),
              (std::vector<std::string>{"dax0.1", "dax0.2", "pmem0", "pmem1", "pmem2s"}));
}

TEST(PlatformNdRegions, MissingDomainFileIsUnknownAndNoted) {
    TempTree t;
    t.file("sys/bus/nd/devices/region3/size", "4096\n");
    std::vector<std::string> unreadable;
    NdRegion r = read_nd_region(t.root(), "region3", unreadable);
    EXPECT_EQ(r.domain, PersistenceDomain::unknown);
    EXPECT_FALSE(r.domain_readable);
    EXPECT_EQ(r.size, 4096u);
    ASSERT_EQ(unreadable.size(), 1u);
    EXPECT_TRUE(mentions(unreadable, "region3 persistence_domain"));
}

TEST(PlatformNdRegions, UnrecognisedDomainIsUnknownButReadable) {
    TempTree t;
    t.file("sys/bus/nd/devices/region0/persistence_domain", "platform_buffer\n");
    t.file("sys/bus/nd/devices/region0/size", "x\n");
    std::vector<std::string> unreadable;
    NdRegion r = read_nd_region(t.root(), "region0", unreadable);
    EXPECT_EQ(r.domain, PersistenceDomain::unknown);
    EXPECT_TRUE(r.domain_readable);
    EXPECT_EQ(r.raw_domain, "platform_buffer");
    EXPECT_EQ(r.size, 0u);
    EXPECT_TRUE(mentions(unreadable, "unrecognized value \"platform_buffer\""));
    EXPECT_TRUE(mentions(unreadable, "region0 size: not a number"));
}

TEST(PlatformNdRegions, NoNdBusIsZeroRegionsAndNothingUnreadable) {
    TempTree t;
    t.dir("sys/class");
    std::vector<std::string> unreadable;
    EXPECT_TRUE(read_nd_regions(t.root(), unreadable).empty());
    EXPECT_TRUE(unreadable.empty());
}

TEST(PlatformNdRegions, OnlyRegionEntriesInNumericOrder) {
    TempTree t;
    for (const char* n : {"region10", "region2"})
        t.file(std::string("sys/bus/nd/devices/") + n + "/persistence_domain", "cpu_cache\n");
    t.file("sys/bus/nd/devices/ndbus0/provider", "ACPI.NFIT\n");
    std::vector<std::string> unreadable;
    auto regions = read_nd_regions(t.root(), unreadable);
    ASSERT_EQ(regions.size(), 2u);
    EXPECT_EQ(regions[0].name, "region2");
    EXPECT_EQ(regions[1].name, "region10");
    EXPECT_EQ(regions[1].domain, PersistenceDomain::cpu_cache);
}

} // namespace
} // namespace rpm::platform
