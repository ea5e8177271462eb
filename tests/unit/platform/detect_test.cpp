// detect() against the fixture trees in tests/fixtures/sysfs/ (regenerate
// them with tests/fixtures/make-sysfs-fixtures.sh).
#include <rpm/platform.hpp>

#include "temp_tree.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace rpm::platform {
namespace {

namespace fs = std::filesystem;

using testing::kFixtures;

Profile detect_fixture(const std::string& name, std::vector<std::uint16_t> extra = {}) {
    DetectOptions opts;
    opts.root = kFixtures / name;
    opts.extra_iio_device_ids = std::move(extra);
    auto p = detect(opts);
    if (!p) ADD_FAILURE() << name << ": " << p.error().message();
    return p ? std::move(*p) : Profile{};
}

using testing::contains;

const RdmaDevice& only_device(const Profile& p) {
    static const RdmaDevice none;
    if (p.rdma_devices.size() != 1) {
        ADD_FAILURE() << "expected one RDMA device, got " << p.rdma_devices.size();
        return none;
    }
    return p.rdma_devices.front();
}

TEST(DetectFixture, EadrDdioOn) {
    Profile p = detect_fixture("eadr_ddio_on");
    ASSERT_EQ(p.regions.size(), 1u);
    EXPECT_EQ(p.regions[0].name, "region0");
    EXPECT_EQ(p.regions[0].domain, PersistenceDomain::cpu_cache);
    EXPECT_EQ(p.regions[0].raw_domain, "cpu_cache");
    EXPECT_TRUE(p.regions[0].domain_readable);
    EXPECT_EQ(p.regions[0].size, 8ULL << 30);
    EXPECT_EQ(p.regions[0].devices, std::vector<std::string>{"pmem0"});
    const RdmaDevice& d = only_device(p);
    EXPECT_EQ(d.name, "mlx5_0");
    EXPECT_EQ(d.pci_bdf, "0000:18:00.0");
    EXPECT_EQ(d.pci_path, (std::vector<std::string>{"0000:17:00.0", "0000:18:00.0"}));
    ASSERT_TRUE(d.root_port);
    EXPECT_EQ(d.root_port->bdf, "0000:17:00.0");
    EXPECT_EQ(d.root_port->vendor, 0x8086);
    EXPECT_EQ(d.root_port->device, 0x2030);
    EXPECT_TRUE(d.root_port->xeon_iio);
    EXPECT_EQ(d.ddio.state, Ddio::on);
    EXPECT_EQ(d.ddio.perfctrlsts_0, 0x80);
    EXPECT_TRUE(p.unreadable.empty()) << p.unreadable.front();
}

TEST(DetectFixture, AdrDdioOff) {
    Profile p = detect_fixture("adr_ddio_off");
    ASSERT_EQ(p.regions.size(), 1u);
    EXPECT_EQ(p.regions[0].domain, PersistenceDomain::memory_controller);
    const RdmaDevice& d = only_device(p);
    EXPECT_EQ(d.ddio.state, Ddio::off);
    EXPECT_EQ(d.ddio.no_snoop_op_wr_en, true);
    EXPECT_EQ(d.ddio.detail,
              "perfctrlsts_0 (0x180) = 0x08: use_allocating_flow_wr=0, NoSnoopOpWrEn=1");
    EXPECT_TRUE(p.unreadable.empty());
}

TEST(DetectFixture, AdrDdioOn) {
    Profile p = detect_fixture("adr_ddio_on");
    ASSERT_EQ(p.regions.size(), 1u);
    EXPECT_EQ(p.regions[0].domain, PersistenceDomain::memory_controller);
    EXPECT_EQ(only_device(p).ddio.state, Ddio::on);
}

TEST(DetectFixture, NoAdrRegions) {
    Profile p = detect_fixture("no_adr");
    ASSERT_EQ(p.regions.size(), 2u);
    EXPECT_EQ(p.regions[0].name, "region0");
    EXPECT_EQ(p.regions[0].domain, PersistenceDomain::unknown);
    EXPECT_EQ(p.regions[0].raw_domain, "");
    EXPECT_TRUE(p.regions[0].domain_readable);
    EXPECT_EQ(p.regions[1].name, "region1");
    EXPECT_EQ(p.regions[1].domain, PersistenceDomain::none);
    EXPECT_EQ(p.regions[1].devices, std::vector<std::string>{"pmem1"});
    EXPECT_EQ(only_device(p).ddio.state, Ddio::off);
    EXPECT_TRUE(p.unreadable.empty());
}

TEST(DetectFixture, NonIntelRootPortIsAFactNotAFailure) {
    Profile p = detect_fixture("non_intel_root_port");
    const RdmaDevice& d = only_device(p);
    ASSERT_TRUE(d.root_port);
    EXPECT_EQ(d.root_port->bdf, "0000:40:01.1");
    EXPECT_EQ(d.root_port->vendor, 0x1022);
    EXPECT_EQ(d.root_port->device, 0x1483);
    EXPECT_FALSE(d.root_port->xeon_iio);
    EXPECT_EQ(d.ddio.state, Ddio::unknown);
    EXPECT_EQ(d.ddio.detail, "root port 1022:1483 is not Intel: DDIO cannot be read (set RPM_DDIO)");
    EXPECT_TRUE(p.unreadable.empty()) << p.unreadable.front();
}

TEST(DetectFixture, NoNdBusMeansNoRegionsAndNoComplaint) {
    Profile p = detect_fixture("no_nd_regions");
    EXPECT_TRUE(p.regions.empty());
    EXPECT_EQ(only_device(p).ddio.state, Ddio::off);
    EXPECT_TRUE(p.unreadable.empty()) << p.unreadable.front();
}

TEST(DetectFixture, ShortConfigIsUnknownAndUnreadable) {
    Profile p = detect_fixture("unreadable_config");
    const RdmaDevice& d = only_device(p);
    ASSERT_TRUE(d.root_port);
    EXPECT_TRUE(d.root_port->xeon_iio);
    EXPECT_EQ(d.ddio.state, Ddio::unknown);
    EXPECT_FALSE(d.ddio.perfctrlsts_0);
    EXPECT_EQ(d.ddio.detail, "config space of 0000:17:00.0 is 64 bytes; offset 0x180 needs root "
                             "(run as root or set RPM_DDIO)");
    ASSERT_EQ(p.unreadable.size(), 1u);
    EXPECT_TRUE(contains(p.unreadable[0], "0000:17:00.0")) << p.unreadable[0];
    EXPECT_TRUE(contains(p.unreadable[0], "64 bytes")) << p.unreadable[0];
}

TEST(DetectFixture, RootPortAboveAPcieSwitch) {
    Profile p = detect_fixture("rdma_behind_switch");
    const RdmaDevice& d = only_device(p);
    EXPECT_EQ(d.pci_bdf, "0000:1a:00.0");
    EXPECT_EQ(d.pci_path, (std::vector<std::string>{"0000:17:00.0", "0000:18:00.0",
                                                    "0000:19:00.0", "0000:1a:00.0"}));
    ASSERT_TRUE(d.root_port);
    EXPECT_EQ(d.root_port->bdf, "0000:17:00.0");
    EXPECT_EQ(d.root_port->device, 0x2031);
    EXPECT_EQ(d.ddio.state, Ddio::off);
    EXPECT_EQ(d.ddio.perfctrlsts_0, 0x00);
}

TEST(DetectFixture, RxeIsASoftwareDevice) {
    Profile p = detect_fixture("rxe_only");
    ASSERT_EQ(p.regions.size(), 1u);
    EXPECT_EQ(p.regions[0].domain, PersistenceDomain::unknown);
    const RdmaDevice& d = only_device(p);
    EXPECT_EQ(d.name, "rxe0");
    EXPECT_EQ(d.pci_bdf, "");
    EXPECT_TRUE(d.pci_path.empty());
    EXPECT_FALSE(d.root_port);
    EXPECT_EQ(d.ddio.state, Ddio::unknown);
    EXPECT_EQ(d.ddio.detail, "software RDMA device (rxe): no PCIe root port");
    EXPECT_TRUE(p.unreadable.empty());
}

TEST(DetectFixture, UnknownIntelPortNeedsAnExtraId) {
    Profile p = detect_fixture("unknown_intel_root_port");
    const RdmaDevice& d = only_device(p);
    ASSERT_TRUE(d.root_port);
    EXPECT_FALSE(d.root_port->xeon_iio);
    EXPECT_EQ(d.ddio.state, Ddio::unknown);
    EXPECT_TRUE(contains(d.ddio.detail, "add 0x7fff")) << d.ddio.detail;
    EXPECT_TRUE(p.unreadable.empty());

    Profile with_extra = detect_fixture("unknown_intel_root_port", {0x7fff});
    const RdmaDevice& e = only_device(with_extra);
    ASSERT_TRUE(e.root_port);
    EXPECT_TRUE(e.root_port->xeon_iio);
    EXPECT_EQ(e.ddio.state, Ddio::on);
}

TEST(DetectFixture, DeviceOnTheRootComplexHasNoRootPort) {
    Profile p = detect_fixture("rdma_on_root_complex");
    const RdmaDevice& d = only_device(p);
    EXPECT_EQ(d.pci_bdf, "0000:00:05.0");
    EXPECT_EQ(d.pci_path, std::vector<std::string>{"0000:00:05.0"});
    EXPECT_FALSE(d.root_port);
    EXPECT_EQ(d.ddio.state, Ddio::unknown);
    EXPECT_TRUE(contains(d.ddio.detail, "root complex")) << d.ddio.detail;
}

TEST(DetectFixture, FixtureTreesAreNotAskedForVerbsCapabilities) {
    Profile p = detect_fixture("eadr_ddio_on");
    const RdmaDevice& d = only_device(p);
    EXPECT_EQ(d.native_flush, Tri::unknown);
    EXPECT_EQ(d.atomic_write, Tri::unknown);
    EXPECT_EQ(d.caps_detail, "not queried: sysfs root is a fixture tree");
}

TEST(DetectFixture, CpuIsReadFromTheMachine) {
    Profile p = detect_fixture("eadr_ddio_on");
    EXPECT_EQ(p.root, kFixtures / "eadr_ddio_on");
#if defined(__x86_64__) || defined(__i386__)
    EXPECT_EQ(p.cpu_detail.rfind("cpuid", 0), 0u) << p.cpu_detail;
#endif
}

TEST(DetectRoot, MissingRootIsPathNotFound) {
    DetectOptions opts;
    opts.root = kFixtures / "no-such-tree";
    auto p = detect(opts);
    ASSERT_FALSE(p);
    EXPECT_TRUE(p.error() == errc::path_not_found);
    EXPECT_TRUE(contains(p.error().detail(), "no-such-tree")) << p.error().detail();
}

TEST(DetectRoot, EmptyRootIsAMachineWithNothing) {
    testing::TempTree t;
    DetectOptions opts;
    opts.root = t.root();
    auto p = detect(opts);
    ASSERT_TRUE(p) << p.error().message();
    EXPECT_TRUE(p->regions.empty());
    EXPECT_TRUE(p->rdma_devices.empty());
    EXPECT_TRUE(p->unreadable.empty());
}

TEST(DetectRoot, TheRealMachineDoesNotFail) {
    // Whatever this machine has, detect() reports it rather than failing.
    auto p = detect();
    ASSERT_TRUE(p) << p.error().message();
    EXPECT_EQ(p->root, fs::path("/"));
    for (const auto& d : p->rdma_devices) EXPECT_FALSE(d.caps_detail.empty()) << d.name;
}

TEST(DetectTri, Names) {
    EXPECT_EQ(to_string(Tri::no), "no");
    EXPECT_EQ(to_string(Tri::yes), "yes");
    EXPECT_EQ(to_string(Tri::unknown), "unknown");
}

} // namespace
} // namespace rpm::platform
