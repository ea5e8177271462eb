// The plan limits each device's inputs to what rdma:// can issue: a native
// flush the RNIC reports is used only where this build's rdma-core has
// ibv_wr_flush (the build's probe, flush::rdma_ability), and otherwise the
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

TEST(FlushPlan, ABuildWithoutIbvWrFlushDoesNotUseTheReportedNativeFlushAndSaysWhy) {
    // What a Debian 12 build's rdma_ability() is (rdma-core 44).
    const TransportAbility debian12{false, "rpm's rdma:// cannot issue it: this build's rdma-core has no "
                                           "ibv_wr_flush (added in rdma-core v45; Debian 12 ships v44)"};
    const auto p = plan(adr_region(), {reporting_native_flush()}, {}, debian12);
    ASSERT_EQ(p.size(), 1u);
    const auto& d = p[0].decision;
    EXPECT_EQ(d.method, Method::send_flush) << d.reason;  // the table's row for ADR, DDIO unknown
    EXPECT_EQ(d.server_persist, ServerPersist::cache_flush_sfence);
    EXPECT_FALSE(d.inputs.native_flush.value);
    EXPECT_NE(d.reason.find("native flush no (the RNIC reports native flush, but rpm's rdma:// cannot issue it: "
                            "this build's rdma-core has no ibv_wr_flush"),
              std::string::npos)
        << d.reason;
}

TEST(FlushPlan, ThisBuildsAbilityIsTheProbesAndSaysWhyNot) {
    const auto a = rdma_ability();
    if (a.native_flush) {
        EXPECT_TRUE(a.why_not.empty()) << a.why_not;
    } else {
        EXPECT_NE(a.why_not.find("ibv_wr_flush"), std::string::npos) << a.why_not;
        EXPECT_NE(a.why_not.find("v45"), std::string::npos) << a.why_not;
    }
    // The plan's default is this build's ability.
    const auto p = plan(adr_region(), {reporting_native_flush()}, {});
    ASSERT_EQ(p.size(), 1u);
    EXPECT_EQ(p[0].decision.method, a.native_flush ? Method::native_flush : Method::send_flush)
        << p[0].decision.reason;
}

TEST(FlushPlan, WithTheAbilityTheReportedNativeFlushIsChosen) {
    const auto p = plan(adr_region(), {reporting_native_flush()}, {}, TransportAbility{true, {}});
    ASSERT_EQ(p.size(), 1u);
    EXPECT_EQ(p[0].decision.method, Method::native_flush) << p[0].decision.reason;
    EXPECT_EQ(p[0].decision.server_persist, ServerPersist::none);
    EXPECT_EQ(p[0].decision.reason.find("cannot issue"), std::string::npos);
}

TEST(FlushPlan, AnAbilityWithItsOwnReasonIsQuoted) {
    // A region whose memory the RNIC would not register for FLUSH (the
    // server's RegionRegistry says so): the table's cell, and why.
    Inputs in;
    in.native_flush = {true, Source::detected, "caps"};
    const auto out = limit_to(in, {false, "the RNIC would not register region 'r''s memory for persistent FLUSH"});
    EXPECT_FALSE(out.native_flush.value);
    EXPECT_EQ(out.native_flush.source, Source::assumed);
    EXPECT_EQ(out.native_flush.origin, "caps");
    EXPECT_EQ(out.native_flush_unusable,
              "the RNIC reports native flush, but the RNIC would not register region 'r''s memory for persistent "
              "FLUSH");
    const auto bare = limit_to(in, {false, {}});
    EXPECT_EQ(bare.native_flush_unusable, "the RNIC reports native flush, but rpm's rdma:// does not issue it here");
}

TEST(FlushPlan, LimitToLeavesADeviceWithoutNativeFlushAlone) {
    Inputs in;
    in.native_flush = {false, Source::detected, "caps"};
    const auto out = limit_to(in, {false, "anything"});
    EXPECT_FALSE(out.native_flush.value);
    EXPECT_EQ(out.native_flush.source, Source::detected);
    EXPECT_TRUE(out.native_flush_unusable.empty());
}

} // namespace
