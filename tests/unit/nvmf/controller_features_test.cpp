// Set / Get Features, Keep Alive, Async Event Request, Abort, and the
// admin commands' dependence on CC.EN / CSTS.RDY.
#include "controller_fixture.hpp"

#include <thread>

namespace rpm::nvmf::target::test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

using NvmfControllerFeatures = ControllerTest;
using NvmfControllerAdmin = ControllerTest;

TEST_F(NvmfControllerFeatures, NumberOfQueuesGrantsTheSmallerAsk) {
    auto c = enabled();
    const auto o = run(*c, set_feature_sqe(wire::fid::num_queues, 2 | 4u << 16));  // 3 SQs, 5 CQs
    EXPECT_EQ(o.status, wire::sc::success);
    EXPECT_EQ(o.dw0, 2u | 2u << 16);
    EXPECT_EQ(c->io_queues(), 3);
    EXPECT_EQ(run(*c, get_feature_sqe(wire::fid::num_queues)).dw0, 2u | 2u << 16);
    auto other = enabled(nvm_nqn, host_b);
    EXPECT_EQ(run(*other, set_feature_sqe(wire::fid::num_queues, 4 | 1u << 16)).dw0, 1u | 1u << 16)
        << "5 SQs, 2 CQs: 2 pairs";
    EXPECT_EQ(other->io_queues(), 2);
}

TEST_F(NvmfControllerFeatures, NumberOfQueuesIsCappedByTheTarget) {
    auto c = enabled();
    const auto o = run(*c, set_feature_sqe(wire::fid::num_queues, 99 | 99u << 16));
    EXPECT_EQ(o.dw0, 7u | 7u << 16) << "max_io_queues = 8";
    EXPECT_EQ(c->io_queues(), 8);
}

TEST_F(NvmfControllerFeatures, NumberOfQueuesDefaultsToTheTargetLimit) {
    auto c = enabled();
    EXPECT_EQ(c->io_queues(), 8);
    EXPECT_EQ(run(*c, get_feature_sqe(wire::fid::num_queues)).dw0, 7u | 7u << 16);
}

TEST_F(NvmfControllerFeatures, NumberOfQueues65536IsInvalidField) {
    auto c = enabled();
    EXPECT_EQ(run(*c, set_feature_sqe(wire::fid::num_queues, 0xFFFF | 1u << 16)).status, wire::sc::invalid_field);
    EXPECT_EQ(run(*c, set_feature_sqe(wire::fid::num_queues, 1 | 0xFFFFu << 16)).status, wire::sc::invalid_field);
    EXPECT_EQ(c->io_queues(), 8) << "unchanged";
}

TEST_F(NvmfControllerFeatures, NumberOfQueuesAfterAnIoQueueIsSequenceError) {
    auto c = enabled();
    ASSERT_TRUE(connect_io(c->cntlid(), 1).first);
    EXPECT_EQ(run(*c, set_feature_sqe(wire::fid::num_queues, 1 | 1u << 16)).status,
              wire::sc::command_sequence_error);
    EXPECT_EQ(c->io_queues(), 8);
}

TEST_F(NvmfControllerFeatures, DiscoveryControllerHasNoNumberOfQueues) {
    auto c = enabled(wire::discovery_nqn);
    EXPECT_EQ(run(*c, set_feature_sqe(wire::fid::num_queues, 0)).status, wire::sc::invalid_field);
    EXPECT_EQ(run(*c, get_feature_sqe(wire::fid::num_queues)).status, wire::sc::invalid_field);
    EXPECT_EQ(run(*c, get_feature_sqe(wire::fid::keep_alive_timer)).status, wire::sc::success);
}

TEST_F(NvmfControllerFeatures, KeepAliveTimerRoundsUpToKasGranularity) {
    auto c = enabled(nvm_nqn, host_a, 5000);
    EXPECT_EQ(run(*c, get_feature_sqe(wire::fid::keep_alive_timer)).dw0, 5000u);
    EXPECT_EQ(run(*c, set_feature_sqe(wire::fid::keep_alive_timer, 1234)).status, wire::sc::success);
    EXPECT_EQ(c->kato_ms(), 1300u);
    EXPECT_EQ(run(*c, get_feature_sqe(wire::fid::keep_alive_timer)).dw0, 1300u);
    EXPECT_EQ(run(*c, set_feature_sqe(wire::fid::keep_alive_timer, 0)).status, wire::sc::success);
    EXPECT_EQ(c->kato_ms(), 0u);
}

TEST_F(NvmfControllerFeatures, AsyncEventConfiguration) {
    auto c = enabled();
    EXPECT_EQ(run(*c, get_feature_sqe(wire::fid::async_event_config)).dw0, 0u);
    EXPECT_EQ(run(*c, set_feature_sqe(wire::fid::async_event_config, 0)).status, wire::sc::success);
    EXPECT_EQ(run(*c, set_feature_sqe(wire::fid::async_event_config, 1u << 8)).status, wire::sc::invalid_field)
        << "namespace-attribute notices need OAES";
}

TEST_F(NvmfControllerFeatures, OtherFeaturesAreInvalidField) {
    auto c = enabled();
    for (std::uint8_t fid : std::vector<std::uint8_t>{0x01, 0x04, 0x06, 0x0C, 0x80}) {
        EXPECT_EQ(run(*c, set_feature_sqe(fid, 0)).status, wire::sc::invalid_field) << int(fid);
        EXPECT_EQ(run(*c, get_feature_sqe(fid)).status, wire::sc::invalid_field) << int(fid);
    }
}

TEST_F(NvmfControllerFeatures, GetSelectsCapabilitiesAndRefusesReservedSel) {
    auto c = enabled();
    EXPECT_EQ(run(*c, get_feature_sqe(wire::fid::keep_alive_timer, 3)).dw0, 0x4u) << "changeable";
    EXPECT_EQ(run(*c, get_feature_sqe(wire::fid::keep_alive_timer, 4)).status, wire::sc::invalid_field);
}

TEST_F(NvmfControllerAdmin, KeepAliveSucceedsAndRestartsTheTimer) {
    auto c = enabled(nvm_nqn, host_a, 1000);
    std::this_thread::sleep_for(5ms);  // so the connect-time touch is strictly older
    const auto before = Clock::now();
    EXPECT_EQ(run(*c, admin_sqe(wire::admin::keep_alive)).status, wire::sc::success);
    const auto after = Clock::now();
    EXPECT_FALSE(c->expired(before + 1000ms)) << "touched at or after `before`";
    EXPECT_TRUE(c->expired(after + 1001ms));
}

TEST_F(NvmfControllerAdmin, AnyAdminCommandRestartsTheTimer) {
    auto c = enabled(nvm_nqn, host_a, 1000);
    std::this_thread::sleep_for(5ms);
    const auto before = Clock::now();
    EXPECT_EQ(run(*c, get_feature_sqe(wire::fid::keep_alive_timer)).status, wire::sc::success);
    EXPECT_FALSE(c->expired(before + 1000ms));
}

TEST_F(NvmfControllerAdmin, TouchRestartsTheTimer) {
    auto c = enabled(nvm_nqn, host_a, 1000);
    std::this_thread::sleep_for(5ms);
    const auto before = Clock::now();
    c->touch();
    EXPECT_FALSE(c->expired(before + 1000ms));
}

TEST_F(NvmfControllerAdmin, ZeroKatoNeverExpires) {
    auto c = enabled(nvm_nqn, host_a, 0);
    EXPECT_FALSE(c->expired(Clock::now() + 24h));
}

TEST_F(NvmfControllerAdmin, AsyncEventRequestsAreDeferredUpToFour) {
    auto c = enabled();
    for (std::uint16_t cid = 10; cid < 14; ++cid) {
        const auto o = run(*c, admin_sqe(wire::admin::async_event_request, cid));
        EXPECT_EQ(o.status, wire::sc::success);
        EXPECT_TRUE(o.deferred);
    }
    const auto fifth = run(*c, admin_sqe(wire::admin::async_event_request, 14));
    EXPECT_FALSE(fifth.deferred);
    EXPECT_EQ(fifth.status, wire::sc::async_event_limit_exceeded);
    EXPECT_EQ(c->take_pending_aers(), (std::vector<std::uint16_t>{10, 11, 12, 13}));
    EXPECT_TRUE(c->take_pending_aers().empty());
    EXPECT_TRUE(run(*c, admin_sqe(wire::admin::async_event_request, 15)).deferred) << "room again";
}

TEST_F(NvmfControllerAdmin, AbortReportsNotAborted) {
    auto c = enabled();
    const auto o = run(*c, admin_sqe(wire::admin::abort));
    EXPECT_EQ(o.status, wire::sc::success);
    EXPECT_EQ(o.dw0 & 1, 1u);
}

TEST_F(NvmfControllerAdmin, UnknownOpcodeIsInvalidOpcode) {
    auto c = enabled();
    for (std::uint8_t op : std::vector<std::uint8_t>{0x00, 0x01, 0x05, 0x10, 0x80, 0xC0})
        EXPECT_EQ(run(*c, admin_sqe(op)).status, wire::sc::invalid_opcode) << int(op);
}

TEST_F(NvmfControllerAdmin, CommandsBeforeEnableAreSequenceErrors) {
    auto [c, o] = connect_admin();
    ASSERT_TRUE(c);
    for (std::uint8_t op : {wire::admin::keep_alive, wire::admin::get_features, wire::admin::set_features,
                            wire::admin::async_event_request, wire::admin::abort})
        EXPECT_EQ(run(*c, admin_sqe(op)).status, wire::sc::command_sequence_error) << int(op);
    EXPECT_TRUE(c->take_pending_aers().empty());
}

TEST_F(NvmfControllerAdmin, CommandsAfterDisableAreSequenceErrors) {
    auto c = enabled();
    ASSERT_EQ(c->property_set(prop_set(wire::prop::cc, 0)).status, wire::sc::success);
    EXPECT_EQ(run(*c, admin_sqe(wire::admin::keep_alive)).status, wire::sc::command_sequence_error);
}

TEST_F(NvmfControllerAdmin, CommandsAfterFatalStatusAreSequenceErrors) {
    auto [c, o] = connect_admin();
    ASSERT_TRUE(c);
    ASSERT_EQ(c->property_set(prop_set(wire::prop::cc, 1)).status, wire::sc::success);  // EN, IOSQES 0
    EXPECT_EQ(run(*c, admin_sqe(wire::admin::keep_alive)).status, wire::sc::command_sequence_error)
        << "CC.EN = 1 but CSTS.RDY = 0";
}

} // namespace
} // namespace rpm::nvmf::target::test
