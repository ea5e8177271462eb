// CXL provenance against the CXL fixture trees (tests/fixtures/sysfs/cxl_*,
// made by make-sysfs-fixtures.sh from the kernel's layout) and scratch trees
// for the failure paths.
#include <rpm/flush_plan.hpp>
#include <rpm/platform.hpp>

#include "temp_tree.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace rpm::platform {
namespace {

using testing::kFixtures;
using testing::TempTree;

bool mentions(const std::vector<std::string>& lines, const std::string& what) {
    return std::any_of(lines.begin(), lines.end(),
                       [&](const std::string& l) { return l.find(what) != std::string::npos; });
}

TEST(PlatformCxl, SingleDeviceRegion) {
    const CxlInventory inv = cxl_inventory(kFixtures / "cxl_pmem_single");
    EXPECT_TRUE(inv.unreadable.empty()) << inv.unreadable.front();
    ASSERT_EQ(inv.regions.size(), 1u);
    const CxlRegion& r = inv.regions[0];
    EXPECT_EQ(r.nd_region, "region0");
    EXPECT_EQ(r.cxl_region, "region0");
    EXPECT_EQ(r.interleave_ways, 1u);
    EXPECT_EQ(r.interleave_granularity, 256u);
    EXPECT_EQ(r.host_bridge, "pci0000:0c");
    EXPECT_EQ(r.domain, PersistenceDomain::memory_controller);
    EXPECT_EQ(r.raw_domain, "memory_controller");
    ASSERT_EQ(r.memdevs.size(), 1u);
    EXPECT_EQ(r.memdevs[0].name, "mem0");
    EXPECT_EQ(r.memdevs[0].serial, 1u);
    EXPECT_EQ(r.memdevs[0].pmem_size, 0x10000000u);
    EXPECT_EQ(r.memdevs[0].ram_size, 0u);
    EXPECT_EQ(inv.nvdimm_bridges, std::vector<std::string>{"nvdimm-bridge0"});
}

TEST(PlatformCxl, TwoWayInterleaveInPositionOrder) {
    const CxlInventory inv = cxl_inventory(kFixtures / "cxl_pmem_interleave2");
    EXPECT_TRUE(inv.unreadable.empty()) << inv.unreadable.front();
    ASSERT_EQ(inv.regions.size(), 1u);
    const CxlRegion& r = inv.regions[0];
    EXPECT_EQ(r.interleave_ways, 2u);
    EXPECT_EQ(r.interleave_granularity, 256u);
    EXPECT_EQ(r.host_bridge, "pci0000:0c");  // one bridge, named once
    ASSERT_EQ(r.memdevs.size(), 2u);
    EXPECT_EQ(r.memdevs[0].name, "mem0");
    EXPECT_EQ(r.memdevs[0].serial, 1u);
    EXPECT_EQ(r.memdevs[1].name, "mem1");
    EXPECT_EQ(r.memdevs[1].serial, 2u);
}

TEST(PlatformCxl, VolatileOnlyMemdevIsNoPm) {
    const auto root = kFixtures / "cxl_volatile_only";
    const CxlInventory inv = cxl_inventory(root);
    EXPECT_TRUE(inv.unreadable.empty()) << inv.unreadable.front();
    EXPECT_TRUE(inv.regions.empty());
    EXPECT_TRUE(inv.nvdimm_bridges.empty());
    ASSERT_EQ(inv.memdevs.size(), 1u);
    EXPECT_EQ(inv.memdevs[0].name, "mem0");
    EXPECT_EQ(inv.memdevs[0].pmem_size, 0u);
    EXPECT_EQ(inv.memdevs[0].ram_size, 0x10000000u);
    DetectOptions o;
    o.root = root;
    auto p = detect(o);
    ASSERT_TRUE(p) << p.error().message();
    EXPECT_TRUE(p->regions.empty());
}

TEST(PlatformCxl, BridgeWithoutRegion) {
    const CxlInventory inv = cxl_inventory(kFixtures / "cxl_bridge_no_region");
    EXPECT_TRUE(inv.unreadable.empty()) << inv.unreadable.front();
    EXPECT_TRUE(inv.regions.empty());
    EXPECT_EQ(inv.nvdimm_bridges, std::vector<std::string>{"nvdimm-bridge0"});
    ASSERT_EQ(inv.memdevs.size(), 1u);
    EXPECT_EQ(inv.memdevs[0].pmem_size, 0x10000000u);
}

// Linux 6.12 adds region `mode`/`uuid` and nmem cxl/{id,provider}: the
// pmem region reads as in 6.1, and is not taken for a ram region.
TEST(PlatformCxl, Kernel612PmemRegion) {
    const auto root = kFixtures / "cxl_k612_pmem_single";
    const CxlInventory inv = cxl_inventory(root);
    EXPECT_TRUE(inv.unreadable.empty()) << inv.unreadable.front();
    ASSERT_EQ(inv.regions.size(), 1u);
    EXPECT_EQ(inv.regions[0].cxl_region, "region0");
    EXPECT_EQ(inv.regions[0].domain, PersistenceDomain::memory_controller);
    ASSERT_EQ(inv.regions[0].memdevs.size(), 1u);
    EXPECT_EQ(inv.regions[0].memdevs[0].serial, 1u);
    const CxlRamRegions ram = cxl_ram_regions(root);
    EXPECT_TRUE(ram.regions.empty());
    EXPECT_TRUE(ram.unreadable.empty()) << ram.unreadable.front();
    EXPECT_EQ(nd_region_of(root, 252, 0, true), "region0");
}

TEST(PlatformCxl, Kernel612RamRegionIsCxlButNotPm) {
    const auto root = kFixtures / "cxl_k612_ram_region";
    const CxlInventory inv = cxl_inventory(root);
    EXPECT_TRUE(inv.unreadable.empty()) << inv.unreadable.front();
    EXPECT_TRUE(inv.regions.empty());
    ASSERT_EQ(inv.memdevs.size(), 1u);
    EXPECT_EQ(inv.memdevs[0].ram_size, 0x10000000u);
    const CxlRamRegions ram = cxl_ram_regions(root);
    EXPECT_TRUE(ram.unreadable.empty()) << ram.unreadable.front();
    ASSERT_EQ(ram.regions.size(), 1u);
    const CxlRamRegion& r = ram.regions[0];
    EXPECT_EQ(r.cxl_region, "region0");
    EXPECT_EQ(r.interleave_ways, 1u);
    EXPECT_EQ(r.interleave_granularity, 256u);
    EXPECT_EQ(r.host_bridge, "pci0000:0c");
    ASSERT_EQ(r.memdevs.size(), 1u);
    EXPECT_EQ(r.memdevs[0].name, "mem0");
    EXPECT_EQ(r.memdevs[0].pmem_size, 0u);
    DetectOptions o;
    o.root = root;
    auto p = detect(o);
    ASSERT_TRUE(p) << p.error().message();
    EXPECT_TRUE(p->regions.empty());
    EXPECT_TRUE(p->unreadable.empty()) << p->unreadable.front();
}

// Its dax0.0 sits below CXL region0, which is no nd region.
TEST(PlatformCxl, RamRegionDaxDeviceIsInNoNdRegion) {
    EXPECT_EQ(nd_region_of(kFixtures / "cxl_k612_ram_region", 252, 0, true), std::nullopt);
    EXPECT_EQ(nd_region_of(kFixtures / "cxl_pmem_single", 252, 0, true), "region0");
    EXPECT_EQ(nd_region_of(kFixtures / "cxl_pmem_interleave2", 252, 0, true), "region0");
}

// 6.1 regions have no `mode`; all of them are pmem.
TEST(PlatformCxl, RegionWithoutModeIsNotRam) {
    const CxlRamRegions ram = cxl_ram_regions(kFixtures / "cxl_pmem_single");
    EXPECT_TRUE(ram.regions.empty());
    EXPECT_TRUE(ram.unreadable.empty()) << ram.unreadable.front();
}

TEST(PlatformCxl, UnreadableRamRegionTargetIsNoted) {
    TempTree t;
    t.file("sys/bus/cxl/devices/region3/mode", "ram\n");
    t.file("sys/bus/cxl/devices/region3/interleave_ways", "1\n");
    t.file("sys/bus/cxl/devices/region3/interleave_granularity", "4096\n");
    t.file("sys/bus/cxl/devices/region3/target0", "\n");
    t.file("sys/bus/cxl/devices/region4/mode", "pmem\n");
    const CxlRamRegions ram = cxl_ram_regions(t.root());
    ASSERT_EQ(ram.regions.size(), 1u);
    EXPECT_EQ(ram.regions[0].cxl_region, "region3");
    EXPECT_EQ(ram.regions[0].interleave_granularity, 4096u);
    EXPECT_TRUE(ram.regions[0].memdevs.empty());
    EXPECT_TRUE(mentions(ram.unreadable, "region3 target0: empty"));
}

TEST(PlatformCxl, NfitRegionIsNotCxl) {
    const CxlInventory inv = cxl_inventory(kFixtures / "adr_ddio_on");
    EXPECT_TRUE(inv.regions.empty());
    EXPECT_TRUE(inv.memdevs.empty());
    EXPECT_TRUE(inv.unreadable.empty());
}

TEST(PlatformCxl, CxlBusRegionWithoutCxlRegionIsNoted) {
    TempTree t;
    t.file("sys/devices/b/ndbus0/provider", "CXL\n");
    t.file("sys/devices/b/ndbus0/region4/persistence_domain", "memory_controller\n");
    t.dir("sys/bus/nd/devices");
    std::filesystem::create_directory_symlink("../../../devices/b/ndbus0/region4",
                                              t.root() / "sys/bus/nd/devices/region4");
    const CxlInventory inv = cxl_inventory(t.root());
    ASSERT_EQ(inv.regions.size(), 1u);
    EXPECT_EQ(inv.regions[0].cxl_region, "");
    EXPECT_EQ(inv.regions[0].domain, PersistenceDomain::memory_controller);
    EXPECT_TRUE(mentions(inv.unreadable, "region4 is on the CXL nvdimm bus but"));
}

TEST(PlatformCxl, BadSerialAndEmptyTargetAreNoted) {
    TempTree t;
    t.file("sys/bus/cxl/devices/mem0/serial", "zz\n");
    t.file("sys/bus/cxl/devices/mem0/pmem/size", "0x10000000\n");
    t.file("sys/bus/cxl/devices/mem0/ram/size", "0x0\n");
    const CxlInventory inv = cxl_inventory(t.root());
    ASSERT_EQ(inv.memdevs.size(), 1u);
    EXPECT_EQ(inv.memdevs[0].serial, 0u);
    EXPECT_TRUE(mentions(inv.unreadable, "mem0/serial: not a number: \"zz\""));
}

TEST(PlatformCxl, FlushReasonNamesCxl) {
    DetectOptions o;
    o.root = kFixtures / "cxl_pmem_interleave2";
    auto p = detect(o);
    ASSERT_TRUE(p) << p.error().message();
    auto regions = flush::regions_of(*p);
    ASSERT_EQ(regions.size(), 1u);
    EXPECT_EQ(regions[0].domain.value, PersistenceDomain::memory_controller);
    auto plan = flush::plan(regions, p->rdma_devices, Overrides{});
    ASSERT_EQ(plan.size(), 1u);
    EXPECT_EQ(plan[0].decision.method, flush::Method::send_flush);
    EXPECT_EQ(plan[0].decision.server_persist, flush::ServerPersist::cache_flush_sfence);
    EXPECT_NE(plan[0].decision.reason.find("domain memory_controller (CXL region0 (mem0, mem1) via /sys/bus/nd/devices/region0/persistence_domain)"),
              std::string::npos)
        << plan[0].decision.reason;
}

} // namespace
} // namespace rpm::platform
