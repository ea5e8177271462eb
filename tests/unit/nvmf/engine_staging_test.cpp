// Staging buffers: slots handed to enabled queues and given back, host
// memory and the reasons for it, and a P2P provider (the lab VM's CMB, a
// fixture file standing in for its BAR) when one suits every client.
#include "engine_fixture.hpp"

#include <set>
#include "tests/support/paths.hpp"

namespace rpm::nvmf {
namespace {

using namespace test;
namespace io = wire::io;

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

TEST(NvmfEngineStaging, WithoutClientsItIsHostMemoryInMaxIoSizeSlots) {
    auto e = make_software_engine();
    SubsystemAttrs a;
    a.staging_bytes = 1 * MiB + 64 * KiB;  // the tail that holds no whole slot is unused
    auto s = e->create_subsystem(a);
    ASSERT_TRUE(s) << s.error().message();
    const auto r = e->staging(*s);
    EXPECT_FALSE(r.p2p);
    EXPECT_TRUE(r.provider.empty());
    EXPECT_EQ(r.bytes, 1 * MiB + 64 * KiB);
    EXPECT_EQ(r.slots, 8u);
    EXPECT_EQ(r.why, "no staging clients given");
}

TEST(NvmfEngineStaging, SlotsRunOutAndComeBackWhenQueuesGo) {
    auto e = make_software_engine();
    SubsystemAttrs a;
    a.staging_bytes = 512 * KiB;  // 4 slots
    auto s = e->create_subsystem(a);
    ASSERT_TRUE(s) << s.error().message();
    std::vector<std::unique_ptr<OffloadQueue>> queues;
    std::set<std::byte*> starts;
    for (int i = 0; i < 4; ++i) {
        auto q = e->enable(*s);
        ASSERT_TRUE(q) << i << ": " << q.error().message();
        const auto st = (*q)->staging();
        EXPECT_EQ(st.size(), 128 * KiB);
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(st.data()) % 4096, 0u);
        starts.insert(st.data());
        queues.push_back(std::move(*q));
    }
    EXPECT_EQ(starts.size(), 4u);
    const auto lowest = *starts.begin();
    EXPECT_EQ(*starts.rbegin() - lowest, std::ptrdiff_t(3 * 128 * KiB));  // disjoint slots of one buffer
    auto refused = e->enable(*s);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error(), errc::unsupported);
    EXPECT_NE(refused.error().detail().find("no staging slot free"), std::string::npos);
    EXPECT_EQ(e->stats(*s).refused_enables, 1u);
    EXPECT_EQ(e->stats(*s).enabled_queues, 4u);
    std::byte* freed = queues[2]->staging().data();
    queues.erase(queues.begin() + 2);
    EXPECT_EQ(e->stats(*s).enabled_queues, 3u);
    auto again = e->enable(*s);
    ASSERT_TRUE(again) << again.error().message();
    EXPECT_EQ((*again)->staging().data(), freed);
    queues.clear();
    again->reset();
    EXPECT_EQ(e->stats(*s).enabled_queues, 0u);
}

TEST(NvmfEngineStaging, AQueueOutlivesItsEngine) {
    TempDir dir;
    std::unique_ptr<OffloadQueue> q;
    {
        Rig rig(dir / "disk", 64 * KiB);
        auto e = rig.engine->enable(rig.s);
        ASSERT_TRUE(e);
        q = std::move(*e);
    }
    fill(q->staging().first(512), 2);
    EXPECT_EQ(q->execute(view(sqe(io::write, 1, 3, 1))), sc::success);
    EXPECT_TRUE(holds(read_file(dir / "disk", 3 * 512, 512), 2));
}

// A copy of the lab VM's tree (tests/fixtures/p2p/qemu_lab): its NVMe
// controller 0000:00:03.0 has a 16 MiB CMB in BAR2, here a plain file.
class NvmfEngineStagingLab : public ::testing::Test {
protected:
    void SetUp() override {
        fs::copy(rpm::test::fixtures_dir() / "p2p/qemu_lab", dir.path(),
                 fs::copy_options::recursive | fs::copy_options::copy_symlinks | fs::copy_options::overwrite_existing);
        bar = dir.path() / "sys/devices/pci0000:00" / nvme / "resource2";
        { std::ofstream create(bar); }
        fs::resize_file(bar, 16 * MiB);
    }
    SubsystemAttrs attrs(std::vector<std::string> clients) const {
        SubsystemAttrs a;
        a.staging_bytes = 1 * MiB;
        a.staging_clients = std::move(clients);
        a.sysfs_root = dir.path();
        return a;
    }
    const std::string nvme = "0000:00:03.0";
    TempDir dir;
    fs::path bar;
};

TEST_F(NvmfEngineStagingLab, TheCmbServesAClientItSuits) {
    TempDir data;
    Rig rig(data / "disk", 1 * MiB, 512, attrs({nvme}));
    const auto r = rig.engine->staging(rig.s);
    EXPECT_TRUE(r.p2p) << r.why;
    EXPECT_EQ(r.provider, nvme);
    EXPECT_EQ(r.slots, 8u);
    EXPECT_FALSE(r.why.empty());
    // The queue's staging is the BAR: what the transport puts there is in
    // the "device" (the file), and the write takes it from there.
    auto q = rig.engine->enable(rig.s);
    ASSERT_TRUE(q) << q.error().message();
    fill((*q)->staging().first(4096), 61);
    bool in_bar = false;
    const auto bar_bytes = read_file(bar, 0, 16 * MiB);
    for (std::size_t off = 0; off + 4096 <= bar_bytes.size() && !in_bar; off += 4096)
        in_bar = holds(std::span(bar_bytes).subspan(off, 4096), 61);
    EXPECT_TRUE(in_bar);
    EXPECT_EQ((*q)->execute(view(sqe(io::write, 1, 0, 8))), sc::success);
    EXPECT_TRUE(holds(read_file(rig.file, 0, 4096), 61));
}

TEST_F(NvmfEngineStagingLab, AClientNoProviderSuitsGetsHostMemoryAndTheReason) {
    auto e = make_software_engine();
    auto s = e->create_subsystem(attrs({nvme, "0000:00:04.0"}));
    ASSERT_TRUE(s) << s.error().message();
    const auto r = e->staging(*s);
    EXPECT_FALSE(r.p2p);
    EXPECT_TRUE(starts_with(r.why, "no provider suits ")) << r.why;
    EXPECT_EQ(r.slots, 8u);
    EXPECT_TRUE(e->enable(*s));
}

TEST_F(NvmfEngineStagingLab, AClientThatCannotBePlacedGetsHostMemoryAndTheReason) {
    auto e = make_software_engine();
    auto s = e->create_subsystem(attrs({"nvme9"}));
    ASSERT_TRUE(s) << s.error().message();
    const auto r = e->staging(*s);
    EXPECT_FALSE(r.p2p);
    EXPECT_TRUE(starts_with(r.why, "P2P placement failed: ")) << r.why;
    EXPECT_NE(r.why.find("nvme9"), std::string::npos) << r.why;
}

TEST(NvmfEngineStaging, ARootWithoutPciDevicesGetsHostMemoryAndTheReason) {
    TempDir root;
    auto e = make_software_engine();
    SubsystemAttrs a;
    a.staging_clients = {"mlx5_0"};
    a.sysfs_root = root.path();
    auto s = e->create_subsystem(a);
    ASSERT_TRUE(s) << s.error().message();
    const auto r = e->staging(*s);
    EXPECT_FALSE(r.p2p);
    EXPECT_TRUE(starts_with(r.why, "P2P discovery failed: ")) << r.why;
}

} // namespace
} // namespace rpm::nvmf
