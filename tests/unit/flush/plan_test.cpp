// The plan limits each device's inputs to what rdma:// can issue: a native
// flush the RNIC reports is not used by this build (rdma-core 44 has no ibv_wr_flush), and the
// decision says why, as a server's grant does (flush::limit_to).
#include <rpm/flush_plan.hpp>

#include <gtest/gtest.h>

namespace {
using namespace rpm;
using namespace rpm::flush;

std::vector<RegionInput> adr_region() {
    return {{"region0", {PersistenceDomain::memory_controller, Source::detected, "test"}, std::nullopt}};
}

platform::RdmaDevice reporting_native_flush() {
    platform::RdmaDevice dev;
    dev.name = "rxe0";
    dev.native_flush = platform::Tri::yes;
    dev.atomic_write = platform::Tri::yes;
    dev.caps_detail = "ibv_query_device_ex: device_cap_flags_ex=0x...";
    return dev;
}

TEST(FlushPlan, ANativeFlushThisBuildCannotIssueIsNotUsedAndTheReasonSaysWhy) {
    const auto p = plan(adr_region(), {reporting_native_flush()}, {});
    ASSERT_EQ(p.size(), 1u);
    const auto& d = p[0].decision;
    EXPECT_EQ(d.method, Method::send_flush) << d.reason;  // the table's row for ADR, DDIO unknown
    EXPECT_EQ(d.server_persist, ServerPersist::cache_flush_sfence);
    EXPECT_FALSE(d.inputs.native_flush.value);
    EXPECT_NE(d.reason.find("native flush no (the RNIC reports native flush, but rpm's rdma:// cannot issue it"),
              std::string::npos) << d.reason;
    EXPECT_FALSE(rdma_ability().native_flush);
}

TEST(FlushPlan, WithTheAbilityTheReportedNativeFlushIsChosen) {
    const auto p = plan(adr_region(), {reporting_native_flush()}, {}, TransportAbility{true});
    ASSERT_EQ(p.size(), 1u);
    EXPECT_EQ(p[0].decision.method, Method::native_flush) << p[0].decision.reason;
    EXPECT_EQ(p[0].decision.reason.find("cannot issue"), std::string::npos);
}

TEST(FlushPlan, LimitToLeavesADeviceWithoutNativeFlushAlone) {
    Inputs in;
    in.native_flush = {false, Source::detected, "caps"};
    const auto out = limit_to(in, rdma_ability());
    EXPECT_FALSE(out.native_flush.value);
    EXPECT_EQ(out.native_flush.source, Source::detected);
    EXPECT_TRUE(out.native_flush_unusable.empty());
}

} // namespace
