// Fabrics Connect through the Registry: every refusal, with the status and
// the IATTR / IPO the kernel host logs.
#include "controller_fixture.hpp"

namespace rpm::nvmf::target::test {
namespace {

// Connect Invalid Parameters dword 0: IATTR bits 23:16 (1 = data), IPO 15:0.
constexpr std::uint32_t in_data(std::uint32_t offset) { return 1u << 16 | offset; }
constexpr std::uint32_t in_sqe(std::uint32_t offset) { return offset; }

using NvmfControllerConnect = ControllerTest;

TEST_F(NvmfControllerConnect, AdminConnectCreatesControllerAndReturnsCntlid) {
    auto [c, o] = connect_admin(nvm_nqn, host_a, 15000);
    ASSERT_TRUE(c);
    EXPECT_EQ(o.status, wire::sc::success);
    EXPECT_EQ(o.dw0 & 0xFFFF, c->cntlid());
    EXPECT_EQ(o.dw0 >> 16, 0u) << "AUTHREQ must be 0";
    EXPECT_GE(c->cntlid(), 1);
    EXPECT_EQ(c->hostnqn(), host_a);
    EXPECT_EQ(c->subsystem().nqn(), nvm_nqn);
    EXPECT_FALSE(c->is_discovery());
    EXPECT_EQ(c->kato_ms(), 15000u);
    EXPECT_FALSE(c->ready()) << "CC.EN is still 0";
}

TEST_F(NvmfControllerConnect, DiscoveryNqnConnectsToTheDiscoverySubsystem) {
    auto [c, o] = connect_admin(wire::discovery_nqn, host_b, 0);
    ASSERT_TRUE(c);
    EXPECT_EQ(o.status, wire::sc::success);
    EXPECT_TRUE(c->is_discovery());
    EXPECT_EQ(c->kato_ms(), 0u);
    EXPECT_EQ(c->io_queues(), 0);
}

TEST_F(NvmfControllerConnect, UnknownSubsystemIsInvalidParameterAtSubnqn) {
    auto [c, o] = connect_admin("nqn.2026-11.io.rpm:nope", host_a);
    EXPECT_FALSE(c);
    EXPECT_EQ(o.status, wire::sc::connect_invalid_parameters);
    EXPECT_EQ(o.dw0, in_data(256));
}

TEST_F(NvmfControllerConnect, HostNotAllowedIsInvalidHost) {
    auto [c, o] = connect_admin(restricted_nqn, host_b);
    EXPECT_FALSE(c);
    EXPECT_EQ(o.status, wire::sc::connect_invalid_host);
}

TEST_F(NvmfControllerConnect, AllowedHostConnectsToRestrictedSubsystem) {
    auto [c, o] = connect_admin(restricted_nqn, host_a);
    ASSERT_TRUE(c);
    EXPECT_EQ(o.status, wire::sc::success);
}

TEST_F(NvmfControllerConnect, EmptyHostNqnIsInvalidParameterAtHostnqn) {
    auto [c, o] = connect_admin(nvm_nqn, "");
    EXPECT_FALSE(c);
    EXPECT_EQ(o.status, wire::sc::connect_invalid_parameters);
    EXPECT_EQ(o.dw0, in_data(512));
}

TEST_F(NvmfControllerConnect, AdminConnectWithStaticCntlidIsRefused) {
    auto [c, o] = registry->connect(connect_sqe(0, 31), connect_data(nvm_nqn, host_a, 5));
    EXPECT_FALSE(c);
    EXPECT_EQ(o.status, wire::sc::connect_invalid_parameters);
    EXPECT_EQ(o.dw0, in_data(16));
}

TEST_F(NvmfControllerConnect, NonZeroRecfmtIsIncompatibleFormat) {
    auto [c, o] = registry->connect(connect_sqe(0, 31, 0, 1), connect_data(nvm_nqn, host_a));
    EXPECT_FALSE(c);
    EXPECT_EQ(o.status, wire::sc::connect_incompatible_format);
}

TEST_F(NvmfControllerConnect, ShortDataIsDataLengthInvalid) {
    auto data = connect_data(nvm_nqn, host_a);
    data.resize(512);
    auto [c, o] = registry->connect(connect_sqe(0, 31), data);
    EXPECT_FALSE(c);
    EXPECT_EQ(o.status, wire::sc::sgl_data_length_invalid);
}

TEST_F(NvmfControllerConnect, ZeroSqsizeIsInvalidParameterAtSqsize) {
    auto [c, o] = registry->connect(connect_sqe(0, 0), connect_data(nvm_nqn, host_a));
    EXPECT_FALSE(c);
    EXPECT_EQ(o.status, wire::sc::connect_invalid_parameters);
    EXPECT_EQ(o.dw0, in_sqe(44));

    auto admin = enabled();
    auto [io, o2] = connect_io(admin->cntlid(), 1, host_a, nvm_nqn, 0);
    EXPECT_FALSE(io);
    EXPECT_EQ(o2.status, wire::sc::connect_invalid_parameters);
    EXPECT_EQ(o2.dw0, in_sqe(44));
}

TEST_F(NvmfControllerConnect, SqsizeAboveMqesIsInvalidParameterAtSqsize) {
    auto admin = enabled();
    auto [ok, o1] = connect_io(admin->cntlid(), 1, host_a, nvm_nqn, 127);
    EXPECT_TRUE(ok) << "127 is CAP.MQES for 128 entries";
    auto [io, o2] = connect_io(admin->cntlid(), 2, host_a, nvm_nqn, 128);
    EXPECT_FALSE(io);
    EXPECT_EQ(o2.status, wire::sc::connect_invalid_parameters);
    EXPECT_EQ(o2.dw0, in_sqe(44));
    auto [c, o3] = registry->connect(connect_sqe(0, 128), connect_data(nvm_nqn, host_a));
    EXPECT_FALSE(c);
    EXPECT_EQ(o3.dw0, in_sqe(44));
}

TEST_F(NvmfControllerConnect, KernelAdminQueueFitsEvenWhenMqesIsSmaller) {
    Limits small;
    small.max_queue_size = 16;
    rebuild(small);
    auto [c, o] = connect_admin();
    EXPECT_TRUE(c) << "the kernel's admin queue always has 32 entries";
    auto [c2, o2] = registry->connect(connect_sqe(0, 32), connect_data(nvm_nqn, host_a));
    EXPECT_FALSE(c2);
    EXPECT_EQ(o2.dw0, in_sqe(44));
}

TEST_F(NvmfControllerConnect, IoConnectJoinsTheControllerAndReturnsCntlid) {
    auto admin = enabled();
    auto [io, o] = connect_io(admin->cntlid(), 1);
    ASSERT_TRUE(io);
    EXPECT_EQ(io, admin) << "the same controller object";
    EXPECT_EQ(o.status, wire::sc::success);
    EXPECT_EQ(o.dw0, admin->cntlid());
}

TEST_F(NvmfControllerConnect, IoConnectToUnknownCntlidIsInvalidParameterAtCntlid) {
    auto admin = enabled();
    auto [io, o] = connect_io(std::uint16_t(admin->cntlid() + 1), 1);
    EXPECT_FALSE(io);
    EXPECT_EQ(o.status, wire::sc::connect_invalid_parameters);
    EXPECT_EQ(o.dw0, in_data(16));
}

TEST_F(NvmfControllerConnect, IoConnectToAnotherHostsControllerIsRefused) {
    auto admin = enabled(nvm_nqn, host_a);
    auto [io, o] = connect_io(admin->cntlid(), 1, host_b);
    EXPECT_FALSE(io);
    EXPECT_EQ(o.status, wire::sc::connect_invalid_parameters);
    EXPECT_EQ(o.dw0, in_data(16));
    auto [mine, o2] = connect_io(admin->cntlid(), 1, host_a);
    EXPECT_TRUE(mine) << "the owner still can";
}

TEST_F(NvmfControllerConnect, IoConnectWithAnotherHostIdIsRefused) {
    auto admin = enabled(nvm_nqn, host_a);  // host ID all zeros
    auto [io, o] = connect_io(admin->cntlid(), 1, host_a, nvm_nqn, 127, /*hostid=*/0x5A);
    EXPECT_FALSE(io) << "the same host NQN with another host ID joined the controller";
    EXPECT_EQ(o.status, wire::sc::connect_invalid_parameters);
    EXPECT_EQ(o.dw0, in_data(0));
    auto [mine, o2] = connect_io(admin->cntlid(), 1, host_a);
    EXPECT_TRUE(mine) << "the same host ID still can";
}

TEST_F(NvmfControllerConnect, IoConnectThroughAnotherSubsystemIsRefused) {
    auto admin = enabled(nvm_nqn, host_a);
    auto [io, o] = connect_io(admin->cntlid(), 1, host_a, restricted_nqn);
    EXPECT_FALSE(io);
    EXPECT_EQ(o.status, wire::sc::connect_invalid_parameters);
    EXPECT_EQ(o.dw0, in_data(16));
}

TEST_F(NvmfControllerConnect, IoConnectToUnknownSubsystemPointsAtSubnqn) {
    auto admin = enabled();
    auto [io, o] = connect_io(admin->cntlid(), 1, host_a, "nqn.2026-11.io.rpm:nope");
    EXPECT_FALSE(io);
    EXPECT_EQ(o.dw0, in_data(256));
}

TEST_F(NvmfControllerConnect, IoConnectBeforeEnableIsSequenceError) {
    auto [admin, o1] = connect_admin();
    ASSERT_TRUE(admin);
    auto [io, o] = connect_io(admin->cntlid(), 1);
    EXPECT_FALSE(io);
    EXPECT_EQ(o.status, wire::sc::command_sequence_error);
}

TEST_F(NvmfControllerConnect, QidAboveGrantedQueuesIsInvalidParameterAtQid) {
    auto admin = enabled();
    auto [io, o] = connect_io(admin->cntlid(), 9);  // max_io_queues = 8
    EXPECT_FALSE(io);
    EXPECT_EQ(o.status, wire::sc::connect_invalid_parameters);
    EXPECT_EQ(o.dw0, in_sqe(42));
    // Number of Queues: 2 granted, so qid 3 is now out of range too.
    EXPECT_EQ(run(*admin, set_feature_sqe(wire::fid::num_queues, 1 | 1 << 16)).status, wire::sc::success);
    EXPECT_FALSE(connect_io(admin->cntlid(), 3).first);
    EXPECT_TRUE(connect_io(admin->cntlid(), 2).first);
}

TEST_F(NvmfControllerConnect, DiscoveryControllerHasNoIoQueues) {
    auto [d, o1] = connect_admin(wire::discovery_nqn, host_a);
    ASSERT_TRUE(d);
    ASSERT_EQ(d->property_set(prop_set(wire::prop::cc, 1)).status, wire::sc::success);
    ASSERT_TRUE(d->ready());
    auto [io, o] = connect_io(d->cntlid(), 1, host_a, wire::discovery_nqn);
    EXPECT_FALSE(io);
    EXPECT_EQ(o.dw0, in_sqe(42));
}

TEST_F(NvmfControllerConnect, SameQidTwiceIsControllerBusyUntilReleased) {
    auto admin = enabled();
    ASSERT_TRUE(connect_io(admin->cntlid(), 1).first);
    auto [again, o] = connect_io(admin->cntlid(), 1);
    EXPECT_FALSE(again);
    EXPECT_EQ(o.status, wire::sc::connect_controller_busy);
    registry->release(admin, 1);
    EXPECT_TRUE(connect_io(admin->cntlid(), 1).first);
}

} // namespace
} // namespace rpm::nvmf::target::test
