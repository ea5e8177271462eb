// Property Get / Property Set: CAP, VS, CC, CSTS as the kernel host reads
// and writes them while enabling and shutting down a controller.
#include "controller_fixture.hpp"

namespace rpm::nvmf::target::test {
namespace {

class NvmfControllerProperties : public ControllerTest {
protected:
    void SetUp() override {
        auto [c, o] = connect_admin();
        ASSERT_TRUE(c);
        ctrl = c;
    }
    std::uint64_t get64(std::uint32_t offset) {
        const auto o = ctrl->property_get(prop_get(offset, true));
        EXPECT_EQ(o.status, wire::sc::success);
        return o.dw0 | std::uint64_t(o.dw1) << 32;
    }
    std::uint32_t get32(std::uint32_t offset) {
        const auto o = ctrl->property_get(prop_get(offset));
        EXPECT_EQ(o.status, wire::sc::success);
        return o.dw0;
    }
    std::uint16_t set_cc(std::uint32_t v) { return ctrl->property_set(prop_set(wire::prop::cc, v)).status; }

    std::shared_ptr<Controller> ctrl;
};

TEST_F(NvmfControllerProperties, CapReportsQueueSizeTimeoutCommandSetAndPageSizes) {
    const auto cap = get64(wire::prop::cap);
    EXPECT_EQ(cap & 0xFFFF, 127u) << "MQES = max_queue_size - 1";
    EXPECT_EQ((cap >> 16) & 1, 1u) << "CQR";
    EXPECT_EQ((cap >> 24) & 0xFF, 15u) << "TO";
    EXPECT_EQ((cap >> 32) & 0xF, 0u) << "DSTRD";
    EXPECT_EQ((cap >> 37) & 0xFF, 1u) << "CSS: NVM only";
    EXPECT_EQ((cap >> 48) & 0xF, 0u) << "MPSMIN: 4 KiB";
    EXPECT_EQ((cap >> 52) & 0xF, 0u) << "MPSMAX: 4 KiB";
}

TEST_F(NvmfControllerProperties, CapFollowsMaxQueueSize) {
    Limits l;
    l.max_queue_size = 64;
    rebuild(l);
    ctrl = connect_admin().first;
    ASSERT_TRUE(ctrl);
    EXPECT_EQ(get64(wire::prop::cap) & 0xFFFF, 63u);
}

TEST_F(NvmfControllerProperties, VersionIs13) { EXPECT_EQ(get32(wire::prop::vs), 0x00010300u); }

TEST_F(NvmfControllerProperties, WrongSizesAreInvalidField) {
    EXPECT_EQ(ctrl->property_get(prop_get(wire::prop::cap, false)).status, wire::sc::invalid_field);
    EXPECT_EQ(ctrl->property_get(prop_get(wire::prop::vs, true)).status, wire::sc::invalid_field);
    EXPECT_EQ(ctrl->property_get(prop_get(wire::prop::csts, true)).status, wire::sc::invalid_field);
    auto reserved_size = prop_get(wire::prop::vs);
    reserved_size.b[40] = 2;
    EXPECT_EQ(ctrl->property_get(reserved_size).status, wire::sc::invalid_field);
    EXPECT_EQ(ctrl->property_set(prop_set(wire::prop::cc, cc_enable, true)).status, wire::sc::invalid_field);
    EXPECT_FALSE(ctrl->ready()) << "a refused set changes nothing";
}

TEST_F(NvmfControllerProperties, UnknownOffsetIsInvalidField) {
    EXPECT_EQ(ctrl->property_get(prop_get(0x20)).status, wire::sc::invalid_field);
    EXPECT_EQ(ctrl->property_get(prop_get(0x08, true)).status, wire::sc::invalid_field);
    EXPECT_EQ(ctrl->property_set(prop_set(0x20, 1)).status, wire::sc::invalid_field);
}

TEST_F(NvmfControllerProperties, ReadOnlyRegistersCannotBeSet) {
    EXPECT_EQ(ctrl->property_set(prop_set(wire::prop::vs, 0x00020000)).status, wire::sc::invalid_field);
    EXPECT_EQ(ctrl->property_set(prop_set(wire::prop::csts, 1)).status, wire::sc::invalid_field);
    EXPECT_EQ(ctrl->property_set(prop_set(wire::prop::cap, 0, true)).status, wire::sc::invalid_field);
    EXPECT_EQ(get32(wire::prop::vs), 0x00010300u);
    EXPECT_EQ(get32(wire::prop::csts), 0u);
}

TEST_F(NvmfControllerProperties, EnableSetsReady) {
    EXPECT_EQ(get32(wire::prop::csts), 0u);
    ASSERT_EQ(set_cc(cc_enable), wire::sc::success);
    EXPECT_EQ(get32(wire::prop::cc), cc_enable);
    EXPECT_EQ(get32(wire::prop::csts), 1u) << "RDY, no CFS";
    EXPECT_TRUE(ctrl->ready());
}

TEST_F(NvmfControllerProperties, EnableWithWrongEntrySizesSetsFatalStatus) {
    ASSERT_EQ(set_cc(0x00450001), wire::sc::success);  // IOCQES 4, IOSQES 5
    EXPECT_EQ(get32(wire::prop::csts), 2u) << "CFS, not RDY";
    EXPECT_FALSE(ctrl->ready());
}

TEST_F(NvmfControllerProperties, EnableWithWrongCqEntrySizeSetsFatalStatus) {
    ASSERT_EQ(set_cc(0x00360001), wire::sc::success);  // IOCQES 3, IOSQES 6
    EXPECT_EQ(get32(wire::prop::csts), 2u);
}

TEST_F(NvmfControllerProperties, EnableWithOtherPageSizeOrCommandSetSetsFatalStatus) {
    ASSERT_EQ(set_cc(cc_enable | 1u << 7), wire::sc::success);  // MPS 1: 8 KiB
    EXPECT_EQ(get32(wire::prop::csts), 2u);
    ASSERT_EQ(set_cc(0), wire::sc::success);
    ASSERT_EQ(set_cc(cc_enable | 6u << 4), wire::sc::success);  // CSS 6
    EXPECT_EQ(get32(wire::prop::csts), 2u);
    ASSERT_EQ(set_cc(0), wire::sc::success);
    ASSERT_EQ(set_cc(cc_enable | 1u << 11), wire::sc::success);  // AMS 1
    EXPECT_EQ(get32(wire::prop::csts), 2u);
}

TEST_F(NvmfControllerProperties, DiscoveryControllerNeedsNoEntrySizes) {
    ctrl = connect_admin(wire::discovery_nqn, host_a).first;
    ASSERT_TRUE(ctrl);
    ASSERT_EQ(set_cc(1), wire::sc::success);
    EXPECT_EQ(get32(wire::prop::csts), 1u);
    EXPECT_TRUE(ctrl->ready());
}

TEST_F(NvmfControllerProperties, DisableClearsReady) {
    ASSERT_EQ(set_cc(cc_enable), wire::sc::success);
    ASSERT_EQ(set_cc(cc_enable & ~1u), wire::sc::success);
    EXPECT_EQ(get32(wire::prop::csts), 0u);
    EXPECT_FALSE(ctrl->ready());
    ASSERT_EQ(set_cc(cc_enable), wire::sc::success);
    EXPECT_TRUE(ctrl->ready()) << "enabled again";
}

TEST_F(NvmfControllerProperties, ShutdownNotificationCompletesAtOnce) {
    ASSERT_EQ(set_cc(cc_enable), wire::sc::success);
    ASSERT_EQ(set_cc(cc_enable | 1u << 14), wire::sc::success);  // SHN normal
    EXPECT_EQ((get32(wire::prop::csts) >> 2) & 3, 2u) << "SHST complete";
    ASSERT_EQ(set_cc(cc_enable), wire::sc::success);
    EXPECT_EQ((get32(wire::prop::csts) >> 2) & 3, 0u);
}

TEST_F(NvmfControllerProperties, AdminEntryPointRoutesFabricsPropertyCommands) {
    const auto before = run(*ctrl, prop_get(wire::prop::csts));
    EXPECT_EQ(before.status, wire::sc::success) << "properties work before CC.EN";
    EXPECT_EQ(before.dw0, 0u);
    EXPECT_EQ(run(*ctrl, prop_set(wire::prop::cc, cc_enable)).status, wire::sc::success);
    EXPECT_EQ(run(*ctrl, prop_get(wire::prop::csts)).dw0, 1u);
    auto connect = connect_sqe(0, 31);
    EXPECT_EQ(run(*ctrl, connect).status, wire::sc::invalid_opcode);
}

} // namespace
} // namespace rpm::nvmf::target::test
