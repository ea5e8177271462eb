// native_flush over rdma:// against the fake fabric: when a grant picks it
// (an RNIC that reports persistent FLUSH, a build that can post it, a PM
// region whose registration admits it), and why not otherwise; a persist
// as its write(s) and one FLUSH per written range in one chain under one
// doorbell, only the FLUSH signaled, nothing asked of the server; a
// forced native_flush that cannot work refused with its reason; a FLUSH
// the responder refuses failing the persist and the connection.
#include "support.hpp"

#include <rpm/flush_plan.hpp>

#include <algorithm>

namespace rpm::rdma::test {
namespace {

constexpr int kChainQuiet = kCompletionOnError | kDeferDoorbell;
constexpr int kChainSignaled = kCompletionAlways | kDeferDoorbell;

// The server's platform: the fake RNIC ("fake0") reports persistent FLUSH
// (DDIO on, so the table alone would say send_flush for ADR), and the
// server's rdma:// can issue it (as a trixie build's can), unless `caps`.
Harness::PlatformTune rnic_with_flush(bool caps = true) {
    return [caps](platform::Profile& p, server::TransportCaps& c) {
        platform::RdmaDevice d;
        d.name = "fake0";
        d.ddio.state = Ddio::on;
        d.native_flush = platform::Tri::yes;
        d.caps_detail = "test";
        p.rdma_devices.push_back(d);
        c.rdma_native_flush = caps;
    };
}

struct Native {
    explicit Native(bool caps = true, ClientLimits limits = {}, rpm::Overrides ov = {})
        : h({{"pm", PersistenceDomain::memory_controller}, {"file", PersistenceDomain::not_pmem}}, "/",
            std::move(ov), {}, rnic_with_flush(caps)) {
        h.fabric.native_flush = true;
        h.listen();
        auto c = h.connect(ClientOptions{}, limits);
        EXPECT_TRUE(c) << c.error().message();
        if (c) t = std::move(*c);
    }
    Result<proto::RegionGrant> open(const std::string& name, std::optional<flush::Method> force = {},
                                    bool unsafe = false) {
        return t->open_region(proto::OpenRegion{name, force, unsafe});
    }
    Harness h;
    std::unique_ptr<client::Transport> t;
};

// Why a PM region's registration admits no FLUSH when the RNIC refused the
// access: said so where this build can post FLUSH; elsewhere (the fake
// fabric claims a FLUSH Debian 12's rdma-core could not post) the build's
// reason comes first.
std::string refused_why(const std::string& region) {
    const auto build = flush::rdma_ability();
    return build.native_flush ? "the RNIC would not register region '" + region + "''s memory for persistent FLUSH"
                              : build.why_not;
}

std::error_code persist_now(client::Transport& t, const proto::RegionGrant& g, std::vector<proto::Slice> slices) {
    Waiter w;
    t.persist(g, slices, w.done());
    return w.get();
}

std::error_code flush_now(client::Transport& t, const proto::RegionGrant& g, std::vector<proto::Range> ranges) {
    Waiter w;
    t.flush(g, ranges, w.done());
    return w.get();
}

std::size_t calls_named_native(const Harness& h, const std::string& name) {
    const auto c = h.fabric.calls();
    return static_cast<std::size_t>(std::count(c.begin(), c.end(), name));
}

TEST(NativeFlushGrant, APmRegionWhoseMemoryTakesFlushGetsNativeFlush) {
    Native n;
    auto g = n.open("pm");
    ASSERT_TRUE(g) << g.error().message();
    EXPECT_EQ(g->method, flush::Method::native_flush) << g->reason;
    EXPECT_EQ(g->server_persist, flush::ServerPersist::none);
    EXPECT_NE(g->reason.find("native flush yes"), std::string::npos) << g->reason;
    // Registered once, for persistent flush: the registration admits it.
    const auto regs = n.h.fabric.mr_regs();
    EXPECT_EQ(std::count_if(regs.begin(), regs.end(), [](const auto& r) { return r.usage == kRegionUsage; }), 1);
}

TEST(NativeFlushGrant, MemoryThatIsNotPmKeepsTheTablesMethodAndSaysWhy) {
    Native n;
    auto g = n.open("file");
    ASSERT_TRUE(g) << g.error().message();
    EXPECT_EQ(g->method, flush::Method::send_flush);
    EXPECT_EQ(g->server_persist, flush::ServerPersist::msync);
    EXPECT_NE(g->reason.find("native flush no (the RNIC reports native flush, but region 'file' is page cache, "
                             "not PM: its memory is registered without persistent FLUSH access"),
              std::string::npos)
        << g->reason;
}

TEST(NativeFlushGrant, MemoryTheRnicWillNotRegisterForFlushKeepsTheTablesMethodAndSaysWhy) {
    Native n;
    n.h.fabric.refuse_native_flush_mr = true;  // rxe on memmap= PM: not every page is persistent memory
    auto g = n.open("pm");
    ASSERT_TRUE(g) << g.error().message();
    EXPECT_EQ(g->method, flush::Method::send_flush) << g->reason;  // ADR, DDIO on
    EXPECT_EQ(g->server_persist, flush::ServerPersist::cache_flush_sfence);
    EXPECT_NE(g->reason.find("native flush no (the RNIC reports native flush, but " + refused_why("pm")),
              std::string::npos)
        << g->reason;
}

TEST(NativeFlushGrant, ABuildThatCannotIssueItKeepsTheTablesMethodAndSaysWhy) {
    Native n(false);  // the server's caps: Debian 12's rdma-core 44, say
    auto g = n.open("pm");
    ASSERT_TRUE(g) << g.error().message();
    EXPECT_EQ(g->method, flush::Method::send_flush);
    const auto build = flush::rdma_ability();
    const std::string why = build.native_flush ? "rpm's rdma:// does not issue it here" : build.why_not;
    EXPECT_NE(g->reason.find("the RNIC reports native flush, but " + why), std::string::npos) << g->reason;
    if (!build.native_flush) {
        EXPECT_NE(g->reason.find("ibv_wr_flush"), std::string::npos) << g->reason;
    }
}

TEST(NativeFlushGrant, AForcedNativeFlushThatCannotWorkIsRefusedWithTheReason) {
    Native n;
    auto unsafe = n.open("file", flush::Method::native_flush);
    ASSERT_FALSE(unsafe);
    EXPECT_EQ(unsafe.error().code(), errc::invalid_argument);
    EXPECT_NE(unsafe.error().message().find("unsafe"), std::string::npos) << unsafe.error().message();
    auto refused = n.open("file", flush::Method::native_flush, true);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code(), errc::unsupported);
    const auto msg = refused.error().message();
    EXPECT_NE(msg.find("region 'file': native_flush cannot be honored over rdma://: region 'file' is page cache, "
                       "not PM"),
              std::string::npos)
        << msg;
    // A PM region the RNIC would not register for FLUSH: the same, with that reason.
    n.h.fabric.refuse_native_flush_mr = true;
    auto pm = n.open("pm", flush::Method::native_flush, true);
    ASSERT_FALSE(pm);
    EXPECT_EQ(pm.error().code(), errc::unsupported);
    EXPECT_NE(pm.error().message().find(refused_why("pm")), std::string::npos) << pm.error().message();
    EXPECT_TRUE(n.h.fabric.native_flushes().empty());
}

TEST(NativeFlushGrant, AnOverrideOfNativeFlushWithoutTheRnicsIsRefusedWithTheReason) {
    // RPM_NATIVE_FLUSH=yes where the RNIC has none: decided, then refused.
    rpm::Overrides ov;
    ov.native_flush["*"] = flush::Input<bool>{true, flush::Source::override_env, "RPM_NATIVE_FLUSH"};
    Harness h({{"pm", PersistenceDomain::memory_controller}}, "/", ov, {},
              [](platform::Profile&, server::TransportCaps& c) { c.rdma_native_flush = true; });
    h.listen();
    auto t = h.connect_ok();
    ASSERT_TRUE(t);
    auto g = t->open_region(proto::OpenRegion{"pm", std::nullopt, false});
    ASSERT_FALSE(g);
    EXPECT_EQ(g.error().code(), errc::unsupported);
    EXPECT_NE(g.error().message().find("the RNIC reports no persistent FLUSH"), std::string::npos)
        << g.error().message();
}

TEST(NativeFlushGrant, AClientThatCannotPostFlushAsksForSendFlushInstead) {
    Native n;
    n.h.fabric.native_flush = false;  // this client's queue pair takes no FLUSH
    auto c = n.h.connect();
    ASSERT_TRUE(c) << c.error().message();
    n.h.fabric.native_flush = true;  // the server's registration does
    auto g = (*c)->open_region(proto::OpenRegion{"pm", std::nullopt, false});
    ASSERT_TRUE(g) << g.error().message();
    EXPECT_EQ(g->method, flush::Method::send_flush);
    EXPECT_TRUE(g->forced);
    EXPECT_NE(g->reason.find("forced by the client; decision was:"), std::string::npos) << g->reason;
    // Forced by the application, it is refused with the reason instead.
    auto forced = (*c)->open_region(proto::OpenRegion{"pm", flush::Method::native_flush, false});
    ASSERT_FALSE(forced);
    EXPECT_EQ(forced.error().code(), errc::unsupported);
    EXPECT_NE(forced.error().message().find("the server granted native_flush, but"), std::string::npos)
        << forced.error().message();
}

TEST(NativePersist, ADirectPersistIsItsWriteAndOneFlushUnderOneDoorbell) {
    Native n;
    auto g = n.open("pm");
    ASSERT_TRUE(g);
    ASSERT_EQ(g->method, flush::Method::native_flush);
    const auto sends = n.h.fabric.sends().size();
    const auto rings = calls_named_native(n.h, "ring");
    const auto rec = bytes_of("a durable record");
    ASSERT_FALSE(persist_now(*n.t, *g, {{4096, rec}}));
    const auto writes = n.h.fabric.writes();
    ASSERT_EQ(writes.size(), 1u);
    EXPECT_EQ(writes[0].flags, kChainQuiet);  // retired by the FLUSH's completion
    EXPECT_EQ(writes[0].ctx, reinterpret_cast<const void*>(kDirectWriteTag));
    const auto f = n.h.fabric.native_flushes();
    ASSERT_EQ(f.size(), 1u);
    EXPECT_EQ(f[0].type, kFlushPersistent);
    EXPECT_EQ(f[0].dst, writes[0].dst);  // the region's rkey
    EXPECT_EQ(f[0].dst_offset, 4096u);
    EXPECT_EQ(f[0].len, rec.size());
    EXPECT_EQ(f[0].flags, kChainSignaled);  // the only signaled one
    EXPECT_EQ(f[0].ctx, direct_ctx());
    EXPECT_EQ(calls_named_native(n.h, "ring"), rings + 1);  // one doorbell for both
    // Nothing for the server: no read, no Flush frame, no persist step.
    EXPECT_TRUE(n.h.fabric.flushes().empty());
    EXPECT_EQ(n.h.fabric.sends().size(), sends);
    EXPECT_TRUE(n.h.targets["pm"]->persists().empty());
    EXPECT_TRUE(std::equal(rec.begin(), rec.end(), n.h.targets["pm"]->bytes().begin() + 4096));
}

TEST(NativePersist, AQueuedPersistFlushesEachWrittenRangeOnceOnlyTheLastSignaled) {
    ClientLimits lim;
    lim.direct = false;
    Native n(true, lim);
    auto g = n.open("pm");
    ASSERT_TRUE(g);
    // A log record (body at 8, its commit word at 0: adjacent, one range)
    // and a second record elsewhere.
    const auto body = bytes_of("record body"), word = bytes_of("commit!!"), other = bytes_of("elsewhere");
    ASSERT_FALSE(persist_now(*n.t, *g, {{8, body}, {0, word}, {8192, other}}));
    const auto writes = n.h.fabric.writes();
    ASSERT_EQ(writes.size(), 3u);
    EXPECT_EQ(writes[0].flags, kChainSignaled);  // as for every method: only the last write waits on the flush
    EXPECT_EQ(writes[1].flags, kChainSignaled);
    EXPECT_EQ(writes[2].flags, kChainQuiet);
    const auto f = n.h.fabric.native_flushes();
    ASSERT_EQ(f.size(), 2u);
    EXPECT_EQ(f[0].dst_offset, 0u);
    EXPECT_EQ(f[0].len, 8 + body.size());
    EXPECT_EQ(f[0].flags, kChainQuiet);
    EXPECT_EQ(f[1].dst_offset, 8192u);
    EXPECT_EQ(f[1].len, other.size());
    EXPECT_EQ(f[1].flags, kChainSignaled);
    // One doorbell for the five.
    const auto calls = n.h.fabric.calls();
    auto it = std::find(calls.begin(), calls.end(), "rpma_write");
    std::vector<std::string> chain;
    for (; it != calls.end() && *it != "ring"; ++it) chain.push_back(*it);
    EXPECT_EQ(chain, (std::vector<std::string>{"rpma_write", "rpma_write", "rpma_write", "rpma_flush_native",
                                               "rpma_flush_native"}));
    EXPECT_TRUE(n.h.targets["pm"]->persists().empty());
}

TEST(NativePersist, AFlushOfNothingPostsNoneAndSucceeds) {
    Native n;
    auto g = n.open("pm");
    ASSERT_TRUE(g);
    EXPECT_FALSE(flush_now(*n.t, *g, {{64, 0}}));
    EXPECT_FALSE(flush_now(*n.t, *g, {}));
    EXPECT_TRUE(n.h.fabric.native_flushes().empty());
    EXPECT_FALSE(flush_now(*n.t, *g, {{64, 32}}));
    ASSERT_EQ(n.h.fabric.native_flushes().size(), 1u);
    EXPECT_EQ(n.h.fabric.native_flushes()[0].flags, kChainSignaled);
}

TEST(NativePersist, AFlushTheResponderRefusesFailsThePersistAndTheConnection) {
    Native n;
    auto g = n.open("pm");
    ASSERT_TRUE(g);
    n.h.fabric.fail_wc_next("native_flush", IBV_WC_REM_ACCESS_ERR);
    EXPECT_EQ(persist_now(*n.t, *g, {{0, bytes_of("never acknowledged")}}), errc::io_error);
    // RC: the queue pair is in error; later operations fail too.
    EXPECT_EQ(persist_now(*n.t, *g, {{64, bytes_of("nor this")}}), errc::io_error);
}

} // namespace
} // namespace rpm::rdma::test
