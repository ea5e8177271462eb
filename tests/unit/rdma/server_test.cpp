// The RDMA listener against the fake fabric, driven by the real client:
// region registration, the peer configuration each method gets, the RNIC
// lookup, messages, refusals, and shutdown.
#include "support.hpp"
#include "tests/support/paths.hpp"

namespace rpm::rdma::test {
namespace {

Result<proto::RegionGrant> open_region(client::Transport& t, const std::string& name,
                                std::optional<flush::Method> force = std::nullopt, bool unsafe = false) {
    return t.open_region(proto::OpenRegion{name, force, unsafe});
}

std::vector<fake::MrRegCall> region_regs(const Harness& h, const std::string& name) {
    std::vector<fake::MrRegCall> out;
    auto* t = h.targets.at(name);
    for (const auto& r : h.fabric.mr_regs())
        if (r.ptr == t->bytes().data()) out.push_back(r);
    return out;
}

TEST(RdmaListener, RegistersEachRegionOnceForWritesReadsAndFlushes) {
    Harness h({{"raw", PersistenceDomain::cpu_cache, 1 << 16}});
    h.listen();
    auto a = h.connect_ok();
    auto b = h.connect_ok();
    ASSERT_TRUE(open_region(*a, "raw"));
    ASSERT_TRUE(open_region(*b, "raw"));
    ASSERT_TRUE(open_region(*a, "raw"));
    const auto regs = region_regs(h, "raw");
    ASSERT_EQ(regs.size(), 1u);
    EXPECT_EQ(regs[0].size, 1u << 16);
    EXPECT_EQ(regs[0].usage, kUsageReadSrc | kUsageWriteDst |
                                 kUsageFlushPersistent | kUsageFlushVisibility);
}

struct MethodCase {
    PersistenceDomain domain;
    flush::Method method;
};

class RdmaListenerPeerCfg : public ::testing::TestWithParam<MethodCase> {};

TEST_P(RdmaListenerPeerCfg, DirectWriteToPmemIsDeclaredExactlyForReadAfterWrite) {
    const auto [domain, method] = GetParam();
    Harness h({{"r", domain}});
    h.listen();
    auto t = h.connect_ok();
    auto g = open_region(*t, "r");
    ASSERT_TRUE(g) << g.error().message();
    EXPECT_EQ(g->method, method);
    const bool direct = method == flush::Method::read_after_write;
    const auto sets = h.fabric.peer_cfg_sets();
    ASSERT_EQ(sets.size(), 1u);
    EXPECT_EQ(sets[0].second, direct);
    EXPECT_EQ(g->rdma_peer_cfg, std::vector<std::uint8_t>{static_cast<std::uint8_t>(direct ? 1 : 0)});
    EXPECT_EQ(g->rdma_mr.size(), 8u);
}

INSTANTIATE_TEST_SUITE_P(Domains, RdmaListenerPeerCfg,
                         ::testing::Values(MethodCase{PersistenceDomain::cpu_cache, flush::Method::read_after_write},
                                           MethodCase{PersistenceDomain::memory_controller, flush::Method::send_flush},
                                           MethodCase{PersistenceDomain::unknown, flush::Method::send_flush},
                                           MethodCase{PersistenceDomain::not_pmem, flush::Method::send_flush}));

TEST(RdmaListener, AForcedMethodGetsTheMatchingPeerCfg) {
    Harness h({{"adr", PersistenceDomain::memory_controller}});
    h.listen();
    auto t = h.connect_ok();
    auto refused = open_region(*t, "adr", flush::Method::read_after_write, false);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error(), errc::invalid_argument);
    auto g = open_region(*t, "adr", flush::Method::read_after_write, true);
    ASSERT_TRUE(g) << g.error().message();
    EXPECT_EQ(g->method, flush::Method::read_after_write);
    EXPECT_TRUE(h.fabric.peer_cfg_sets().back().second);
}

TEST(RdmaListener, TheRnicsDdioComesFromSysfs) {
    // Fixtures: mlx5_0 under an Intel Xeon IIO root port with DDIO off / on,
    // and an ADR region: DDIO off makes read-after-write enough.
    for (const auto& [fixture, method] : {std::pair{"adr_ddio_off", flush::Method::read_after_write},
                                          std::pair{"adr_ddio_on", flush::Method::send_flush}}) {
        Harness h({{"adr", PersistenceDomain::memory_controller}},
                  rpm::test::fixtures_dir() / "sysfs" / fixture);
        h.fabric.device_name = "mlx5_0";
        h.listen();
        auto t = h.connect_ok();
        auto g = open_region(*t, "adr");
        ASSERT_TRUE(g) << g.error().message();
        EXPECT_EQ(g->method, method) << fixture << ": " << g->reason;
    }
}

TEST(RdmaListener, NativeFlushIsRefusedWithAReason) {
    rpm::Overrides ov;
    ov.native_flush["*"] = flush::Input<bool>{true, flush::Source::override_api, "test"};
    Harness h({{"raw", PersistenceDomain::cpu_cache}}, "/", ov);
    h.listen();
    auto t = h.connect_ok();
    auto g = open_region(*t, "raw");
    ASSERT_FALSE(g);
    EXPECT_EQ(g.error(), errc::unsupported);
    EXPECT_NE(g.error().detail().find("native_flush cannot be honored over rdma://"), std::string::npos)
        << g.error().message();
    // The override decided it; the RNIC (unknown here) reports no FLUSH,
    // so the region's registration admits none (native_persist_test.cpp
    // has the other reasons: the build, the memory).
    EXPECT_NE(g.error().detail().find("the RNIC reports no persistent FLUSH"), std::string::npos)
        << g.error().message();
    EXPECT_NE(g.error().detail().find("RPM_NATIVE_FLUSH=no"), std::string::npos) << g.error().message();
    auto forced = open_region(*t, "raw", flush::Method::native_flush, true);
    ASSERT_FALSE(forced);
    EXPECT_EQ(forced.error(), errc::unsupported);
}

TEST(RdmaListener, OnlyPmBackedRegionsAreRegisteredForPersistentFlush) {
    Harness h({{"pm", PersistenceDomain::memory_controller}, {"file", PersistenceDomain::not_pmem}});
    h.listen();
    auto t = h.connect_ok();
    const auto pm = open_region(*t, "pm");
    const auto file = open_region(*t, "file");
    ASSERT_TRUE(pm) << pm.error().message();
    ASSERT_TRUE(file) << file.error().message();
    EXPECT_EQ(file->server_persist, flush::ServerPersist::msync) << file->reason;
    const auto usage_of = [&](const std::string& name) {
        const void* base = h.targets[name]->bytes().data();
        for (const auto& r : h.fabric.mr_regs())
            if (r.ptr == base) return r.usage;
        ADD_FAILURE() << name << " was not registered";
        return 0;
    };
    const int both = kUsageReadSrc | kUsageWriteDst;
    EXPECT_EQ(usage_of("pm"), both | kUsageFlushPersistent | kUsageFlushVisibility);
    EXPECT_EQ(usage_of("file"), both | kUsageFlushVisibility);
    // Read-after-write cannot make such memory persistent: forcing it (even
    // unsafe) is refused by the client, which would post the flush.
    auto forced = open_region(*t, "file", flush::Method::read_after_write, true);
    ASSERT_FALSE(forced);
    EXPECT_EQ(forced.error(), errc::unsupported);
    EXPECT_NE(forced.error().detail().find("needs persistent memory"), std::string::npos) << forced.error().message();
    // Both still serve every operation.
    for (const auto* g : {&*pm, &*file}) {
        Waiter w;
        const auto data = bytes_of("bytes");
        const proto::Slice one{0, data};
        t->persist(*g, std::span(&one, 1), w.done());
        EXPECT_FALSE(w.get()) << g->reason;
    }
}

TEST(RdmaListener, RegionsWithoutRegistrableMemoryAreUnsupported) {
    Harness h({{"model", PersistenceDomain::cpu_cache, 4096, /*registrable=*/false}});
    h.listen();
    auto t = h.connect_ok();
    auto g = open_region(*t, "model");
    ASSERT_FALSE(g);
    EXPECT_EQ(g.error(), errc::unsupported);
}

TEST(RdmaListener, ARegistrationFailureNamesTheRegion) {
    Harness h({{"raw", PersistenceDomain::cpu_cache}});
    h.listen();
    auto t = h.connect_ok();
    h.fabric.fail_next("rpma_mr_reg", kErrProvider);
    auto g = open_region(*t, "raw");
    ASSERT_FALSE(g);
    // What rxe answers for fsdax memory (seen in the lab): the hint says what to do.
    EXPECT_EQ(g.error(), errc::unsupported);
    EXPECT_NE(g.error().detail().find("region 'raw'"), std::string::npos) << g.error().message();
    EXPECT_NE(g.error().detail().find("devdax"), std::string::npos) << g.error().message();
    EXPECT_TRUE(open_region(*t, "raw"));  // registered on the next try
}

TEST(RdmaListener, UnknownRegionsAndWrongSecrets) {
    Harness h({{"raw", PersistenceDomain::cpu_cache}});
    h.listen();
    auto t = h.connect_ok();
    auto g = open_region(*t, "nope");
    ASSERT_FALSE(g);
    EXPECT_EQ(g.error(), errc::invalid_argument);
    ClientOptions wrong;
    wrong.secret = "wrong";
    auto bad = h.connect(wrong);
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error(), errc::auth_failed) << bad.error().message();
}

TEST(RdmaListener, PortZeroPicksAPortAndAPortInUseIsRefused) {
    Harness h({{"raw", PersistenceDomain::cpu_cache}});
    h.listen(0);
    EXPECT_EQ(h.listener->port(), 20000);  // the fake rdma_cm's first free port
    auto again = listen_rdma_with(fake::Fabric::api(), *h.service, kHost, 20000);
    ASSERT_FALSE(again);
    EXPECT_EQ(again.error(), errc::rdma_unavailable);
    auto fixed = listen_rdma_with(fake::Fabric::api(), *h.service, kHost, 7001);
    ASSERT_TRUE(fixed);
    EXPECT_EQ((*fixed)->port(), 7001);
}

TEST(RdmaListener, NoDeviceIsRdmaUnavailable) {
    Harness h({{"raw", PersistenceDomain::cpu_cache}});
    h.fabric.no_device = true;
    auto l = listen_rdma_with(fake::Fabric::api(), *h.service, kHost, 0);
    ASSERT_FALSE(l);
    EXPECT_EQ(l.error(), errc::rdma_unavailable);
    EXPECT_NE(l.error().detail().find("no RDMA device"), std::string::npos);
}

TEST(RdmaListener, NoServerListeningIsAnIoError) {
    Harness h({{"raw", PersistenceDomain::cpu_cache}});
    h.listen();
    ClientOptions opts;
    opts.client_id = kClientId;
    opts.secret = kSecret;
    opts.timeout = 2s;
    auto t = connect_rdma_with(fake::Fabric::api(), kHost, 9, opts);
    ASSERT_FALSE(t);
    EXPECT_EQ(t.error(), errc::io_error);
    EXPECT_NE(t.error().detail().find("rejected"), std::string::npos) << t.error().message();
}

TEST(RdmaListener, MessagesGoBothWays) {
    Harness h({{"raw", PersistenceDomain::cpu_cache}});
    h.listen();
    auto t = h.connect_ok();
    for (int i = 0; i < 3 * static_cast<int>(kRecvSlots); ++i) {  // more than the posted receives
        Waiter w;
        t->send(bytes_of("ping " + std::to_string(i)), w.done());
        ASSERT_FALSE(w.get());
    }
    {
        std::lock_guard lock(h.mu);
        ASSERT_EQ(h.messages.size(), 3 * kRecvSlots);
        EXPECT_EQ(h.messages.back(), bytes_of("ping 23"));
    }
    ASSERT_TRUE(h.listener->send(1, bytes_of("pong")));
    ASSERT_TRUE(h.listener->send(1, bytes_of("a longer pong")));
    std::vector<std::byte> in(16);
    std::promise<Result<std::size_t>> got;
    t->recv(in, [&](Result<std::size_t> r) { got.set_value(std::move(r)); });
    auto n = got.get_future().get();
    ASSERT_TRUE(ok(n));
    EXPECT_EQ(std::vector<std::byte>(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(*n)), bytes_of("pong"));
    std::vector<std::byte> small(4);
    std::promise<Result<std::size_t>> got2;
    t->recv(small, [&](Result<std::size_t> r) { got2.set_value(std::move(r)); });
    auto n2 = got2.get_future().get();
    EXPECT_EQ(code_of(n2), errc::bad_size);
    // The message's size (13 bytes, "a longer pong") is in the error's detail.
    EXPECT_TRUE(detail_has(n2, "recv over rdma://"));
    EXPECT_TRUE(detail_has(n2, "a message of 13 bytes, larger than the buffer"));
}

// A reply leaves straight from the session's buffer into a send slot when
// one is free, and waits in the outbox when none is: with the server's send
// completions held back, its slots stay taken after kSendSlots replies, the
// rest are queued, and once the completions come every request still gets
// its one reply.
TEST(RdmaListener, RepliesWaitForASendSlotWhenNoneIsFree) {
    Harness h({{"adr", PersistenceDomain::memory_controller}});
    h.listen();
    auto t = h.connect_ok();
    auto g = open_region(*t, "adr");
    ASSERT_TRUE(g);
    auto replies = [&] {
        std::size_t n = 0;
        for (const auto& s : h.fabric.sends()) {
            if (!s.passive) continue;
            auto f = parse_frame(s.bytes, kSlotSize);
            if (f && f->first.type == proto::Type::response && f->first.request_id != 0) ++n;
        }
        return n;
    };
    const std::size_t before = replies();  // OpenRegion's
    h.fabric.hold_server_completions(true);
    const auto rec = bytes_of("a record");
    const std::vector<proto::Slice> slices{{0, rec}};
    std::vector<Waiter> ws(3 * kSendSlots);
    for (auto& w : ws) t->persist(*g, slices, w.done());
    ASSERT_TRUE(eventually([&] { return replies() == before + kSendSlots; }));
    std::this_thread::sleep_for(20ms);
    EXPECT_EQ(replies(), before + kSendSlots);  // the rest wait for a slot
    ASSERT_TRUE(eventually([&] {
        h.fabric.release_held();
        return replies() == before + ws.size();
    }));
    h.fabric.hold_server_completions(false);
    h.fabric.release_held();
    for (auto& w : ws) EXPECT_FALSE(w.get());
}

TEST(RdmaListener, MessagesLargerThanASlotAreBadSize) {
    Harness h({{"raw", PersistenceDomain::cpu_cache}});
    h.listen();
    auto t = h.connect_ok();
    std::vector<std::byte> big(kSlotSize);
    Waiter w;
    t->send(big, w.done());
    EXPECT_EQ(w.get(), errc::bad_size);
    // Refused by the client before it was sent: the server never saw it.
    EXPECT_TRUE(detail_lacks(w.result(), "refused by the server"));
    auto r = h.listener->send(1, big);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::bad_size);
    auto unknown = h.listener->send(42, bytes_of("x"));
    ASSERT_FALSE(unknown);
    EXPECT_EQ(unknown.error(), errc::invalid_argument);
}

TEST(RdmaListener, ABadFrameIsAnsweredWithRequestIdZeroAndCloses) {
    Harness h({{"raw", PersistenceDomain::cpu_cache}});
    h.listen();
    auto t = h.connect_ok();
    auto g = open_region(*t, "raw");
    ASSERT_TRUE(g);
    h.fabric.inject_to_server(bytes_of("definitely not a frame header"));
    ASSERT_TRUE(eventually([&] {
        for (const auto& s : h.fabric.sends()) {
            if (!s.passive) continue;
            auto f = parse_frame(s.bytes, kSlotSize);
            if (f && f->first.type == proto::Type::response && f->first.request_id == 0 &&
                response_status(f->first, f->second) == errc::invalid_argument)
                return true;
        }
        return false;
    }));
    ASSERT_TRUE(eventually([&] {
        Waiter w;
        t->write(*g, 0, bytes_of("x"), w.done());
        return w.get() == errc::io_error;
    }));
}

TEST(RdmaListener, StopClosesEverySessionAndFreesEverything) {
    Harness h({{"raw", PersistenceDomain::cpu_cache}});
    h.listen();
    {
        auto t = h.connect_ok();
        auto g = open_region(*t, "raw");
        ASSERT_TRUE(g);
        h.listener->stop();
        Waiter w;
        t->write(*g, 0, bytes_of("late"), w.done());
        EXPECT_EQ(w.get(), errc::io_error);
        EXPECT_TRUE(detail_has(w.result(), "the connection failed"));
        EXPECT_FALSE(h.listener->send(1, bytes_of("x")));
    }
    h.listener.reset();
    EXPECT_EQ(h.fabric.live_objects(), 0u);
}

TEST(RdmaListener, ConnectionsPastMaxConnectionsAreRejected) {
    std::vector<std::string> logged;
    std::mutex log_mu;
    Harness h({{"raw", PersistenceDomain::cpu_cache}}, "/", {}, [&](ServerOptions& o) {
        o.max_connections = 2;
        o.on_log = [&](std::string_view line) {
            std::lock_guard lock(log_mu);
            logged.emplace_back(line);
        };
    });
    h.listen();
    auto a = h.connect_ok();
    auto b = h.connect_ok();
    auto c = h.connect();
    EXPECT_FALSE(c) << "a third connection was accepted past max_connections 2";
    {
        std::lock_guard lock(log_mu);
        ASSERT_FALSE(logged.empty());
        EXPECT_NE(logged[0].find("max_connections"), std::string::npos) << logged[0];
    }
    EXPECT_TRUE(open_region(*b, "raw")) << "an admitted connection stopped being served";
    a.reset();  // one leaves: a new one is admitted once it is reaped
    EXPECT_TRUE(eventually([&] { return h.connect().has_value(); }));
}

// A client that connects and never sends Auth: only Api calls, no rpm client.
struct SilentPeer {
    const Api& api = fake::Fabric::api();
    Peer* peer = nullptr;
    ConnCfg* cfg = nullptr;
    Conn* conn = nullptr;
    int event_fd = -1;
    SilentPeer(Harness& h) {
        EXPECT_EQ(api.peer_new(&h.fabric.context_, &peer), 0);
        EXPECT_EQ(api.conn_cfg_new(&cfg), 0);
        ConnReq* req = nullptr;
        const auto port = std::to_string(h.listener->port());
        EXPECT_EQ(api.conn_req_new(peer, kHost, port.c_str(), cfg, &req), 0);
        EXPECT_EQ(api.conn_req_connect(&req, nullptr, &conn), 0);
        EXPECT_EQ(api.conn_get_event_fd(conn, &event_fd), 0);
    }
    ~SilentPeer() {
        if (conn) (void)api.conn_disconnect(conn), (void)api.conn_delete(&conn);
        if (cfg) (void)api.conn_cfg_delete(&cfg);
        if (peer) (void)api.peer_delete(&peer);
    }
    /// Whether the server closed the connection (an event other than
    /// ESTABLISHED arrived) within `t`.
    bool closed_within(std::chrono::milliseconds t) {
        return eventually([&] {
            ConnEvent ev = kConnUndefined;
            while (api.conn_next_event(conn, &ev) == 0)
                if (ev != kConnEstablished) return true;
            return false;
        }, t);
    }
};

TEST(RdmaListener, AClientThatNeverAuthenticatesIsClosedAfterTheHandshakeTimeout) {
    std::vector<std::string> logged;
    std::mutex log_mu;
    Harness h({{"raw", PersistenceDomain::cpu_cache}}, "/", {}, [&](ServerOptions& o) {
        o.handshake_timeout = 200ms;
        o.on_log = [&](std::string_view line) {
            std::lock_guard lock(log_mu);
            logged.emplace_back(line);
        };
    });
    h.listen();
    SilentPeer silent(h);
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_TRUE(silent.closed_within(3s)) << "the server kept a connection that never authenticated";
    EXPECT_GE(std::chrono::steady_clock::now() - t0, 150ms);
    std::lock_guard lock(log_mu);
    ASSERT_EQ(logged.size(), 1u);
    EXPECT_NE(logged[0].find("handshake_timeout"), std::string::npos) << logged[0];
}

TEST(RdmaListener, AnAuthenticatedClientMayIdlePastTheHandshakeTimeout) {
    Harness h({{"raw", PersistenceDomain::cpu_cache}}, "/", {}, [](ServerOptions& o) { o.handshake_timeout = 100ms; });
    h.listen();
    auto t = h.connect_ok();
    std::this_thread::sleep_for(400ms);
    EXPECT_TRUE(open_region(*t, "raw"));
}

TEST(RdmaListener, AClientThatGoesAwayIsReaped) {
    Harness h({{"raw", PersistenceDomain::cpu_cache}});
    h.listen();
    { auto t = h.connect_ok(); }
    EXPECT_TRUE(eventually([&] { return !h.listener->send(1, bytes_of("x")); }));
    auto t2 = h.connect_ok();
    EXPECT_TRUE(open_region(*t2, "raw"));
}

} // namespace
} // namespace rpm::rdma::test
