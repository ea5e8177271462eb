// dirty_shutdown_counts against the CXL fixtures (Linux 6.12: no count;
// 6.15: a count) and scratch trees for NFIT and the failure paths.
#include <rpm/platform.hpp>

#include "temp_tree.hpp"

#include <gtest/gtest.h>

namespace rpm::platform {
namespace {

using testing::contains;
using testing::kFixtures;
using testing::TempTree;

TEST(PlatformDirtyShutdown, Kernel615CountWithItsMemdev) {
    const DirtyShutdownCounts d = dirty_shutdown_counts(kFixtures / "cxl_k615_dirty_shutdown");
    EXPECT_TRUE(d.unreadable.empty()) << d.unreadable.front();
    ASSERT_EQ(d.nmems.size(), 1u);
    EXPECT_EQ(d.nmems[0].nmem, "nmem0");
    EXPECT_EQ(d.nmems[0].memdev, "mem0");
    EXPECT_EQ(d.nmems[0].source, "sys/bus/nd/devices/nmem0/cxl/dirty_shutdown");
    EXPECT_EQ(d.nmems[0].count, std::optional<std::uint64_t>(3));
}

TEST(PlatformDirtyShutdown, Kernel612ReportsNoCount) {
    const DirtyShutdownCounts d = dirty_shutdown_counts(kFixtures / "cxl_k612_pmem_single");
    EXPECT_TRUE(d.unreadable.empty()) << d.unreadable.front();
    ASSERT_EQ(d.nmems.size(), 1u);
    EXPECT_EQ(d.nmems[0].memdev, "mem0");
    EXPECT_EQ(d.nmems[0].source, "");
    EXPECT_EQ(d.nmems[0].count, std::nullopt);
}

TEST(PlatformDirtyShutdown, NoNvdimmsNoEntries) {
    for (const char* tree : {"cxl_k612_ram_region", "adr_ddio_on"}) {
        const DirtyShutdownCounts d = dirty_shutdown_counts(kFixtures / tree);
        EXPECT_TRUE(d.nmems.empty()) << tree;
        EXPECT_TRUE(d.unreadable.empty()) << tree;
    }
}

TEST(PlatformDirtyShutdown, NfitCountInNumericOrder) {
    TempTree t;
    t.file("sys/bus/nd/devices/nmem10/nfit/dirty_shutdown", "12\n");
    t.file("sys/bus/nd/devices/nmem2/nfit/dirty_shutdown", "0\n");
    t.dir("sys/bus/nd/devices/region0");
    const DirtyShutdownCounts d = dirty_shutdown_counts(t.root());
    EXPECT_TRUE(d.unreadable.empty()) << d.unreadable.front();
    ASSERT_EQ(d.nmems.size(), 2u);
    EXPECT_EQ(d.nmems[0].nmem, "nmem2");
    EXPECT_EQ(d.nmems[0].count, std::optional<std::uint64_t>(0));
    EXPECT_EQ(d.nmems[1].nmem, "nmem10");
    EXPECT_EQ(d.nmems[1].count, std::optional<std::uint64_t>(12));
    EXPECT_EQ(d.nmems[1].memdev, "");
    EXPECT_EQ(d.nmems[1].source, "sys/bus/nd/devices/nmem10/nfit/dirty_shutdown");
}

TEST(PlatformDirtyShutdown, GarbledCountAndDanglingProviderAreNoted) {
    TempTree t;
    t.file("sys/bus/nd/devices/nmem0/cxl/dirty_shutdown", "-1\n");
    t.file("sys/bus/nd/devices/nmem0/cxl/provider", "pmem7\n");
    const DirtyShutdownCounts d = dirty_shutdown_counts(t.root());
    ASSERT_EQ(d.nmems.size(), 1u);
    EXPECT_EQ(d.nmems[0].count, std::nullopt);
    EXPECT_EQ(d.nmems[0].memdev, "");
    ASSERT_EQ(d.unreadable.size(), 2u);
    EXPECT_TRUE(contains(d.unreadable[0], "nmem0 cxl/provider pmem7")) << d.unreadable[0];
    EXPECT_TRUE(contains(d.unreadable[1], "nmem0/cxl/dirty_shutdown: not a count: \"-1\"")) << d.unreadable[1];
}

} // namespace
} // namespace rpm::platform
