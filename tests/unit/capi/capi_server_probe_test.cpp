// The in-process server through the C API (start, port, stop, the message
// callback and rpm_server_send to a session) and the probe's decisions on
// fixture sysfs trees (what rpm-probe --sysfs-root prints for each); plus
// the C-compiled c_usage.c run against a server.
#include "capi_helpers.hpp"

#include "paths.hpp"

#include <cstring>
#include <string>

extern "C" int rpm_c_usage_roundtrip(uint16_t port, char* err, size_t errlen);

namespace capi {
namespace {

/// What rpm_message_fn was given.
struct Inbox {
    std::mutex mu;
    std::vector<std::pair<std::uint64_t, std::string>> messages;
    static void fn(void* ctx, std::uint64_t session, const void* payload, std::size_t len) {
        auto* in = static_cast<Inbox*>(ctx);
        std::lock_guard lock(in->mu);
        in->messages.emplace_back(session, std::string(static_cast<const char*>(payload), len));
    }
};

/// A server whose message callback fills an Inbox, a connection to it, and
/// the session id its first message ("hello") told.
struct CapiMessaging : ::testing::Test {
    void SetUp() override {
        ServerOpts so;
        CAPI_ASSERT_OK(make_server_opts(dir, {{"r0", 65536}}, so));
        CAPI_ASSERT_OK(rpm_server_opts_set_message_fn(so, Inbox::fn, &inbox));
        CAPI_ASSERT_OK(server.start(so));
        CAPI_ASSERT_OK(connect(server.uri(), conn));
        CAPI_ASSERT_OK(rpm_conn_send(conn, "hello", 5));
        std::lock_guard lock(inbox.mu);  // on_message returned before the answer
        ASSERT_EQ(inbox.messages.size(), 1u);
        EXPECT_EQ(inbox.messages[0].second, "hello");
        session = inbox.messages[0].first;
    }
    TempDir dir;
    Inbox inbox;
    TestServer server;
    Conn conn;
    std::uint64_t session = 0;
};

TEST_F(CapiMessaging, MessagesBothWays) {
    Completion sent;
    CAPI_ASSERT_OK(rpm_conn_send_async(conn, "again", 5, Completion::fn, &sent));
    ASSERT_EQ(sent.wait(), 0) << sent.message;
    {
        std::lock_guard lock(inbox.mu);
        ASSERT_EQ(inbox.messages.size(), 2u);
        EXPECT_EQ(inbox.messages[1], std::make_pair(session, std::string("again")));
    }
    CAPI_ASSERT_OK(rpm_server_send(server.get(), session, "world", 5));
    char buf[64] = {};
    std::size_t len = 0;
    CAPI_ASSERT_OK(rpm_conn_recv(conn, buf, sizeof buf, &len));
    EXPECT_EQ(std::string(buf, len), "world");
    // The async receive of the next one.
    CAPI_ASSERT_OK(rpm_server_send(server.get(), session, "second!", 7));
    struct Got {
        std::atomic<std::int64_t> status{-1000};
    } got;
    char buf2[64] = {};
    CAPI_ASSERT_OK(rpm_conn_recv_async(
        conn, buf2, sizeof buf2,
        [](void* ctx, std::int64_t st) { static_cast<Got*>(ctx)->status.store(st); }, &got));
    ASSERT_TRUE(eventually([&] { return got.status.load() != -1000; }));
    ASSERT_EQ(got.status.load(), 7);
    EXPECT_EQ(std::string(buf2, 7), "second!");
}

TEST_F(CapiMessaging, SendAndRecvRefusals) {
    EXPECT_EQ(rpm_server_send(server.get(), session + 1000, "x", 1), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_server_send(nullptr, session, "x", 1), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_server_send(server.get(), session, nullptr, 1), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_conn_send(nullptr, "x", 1), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_conn_send(conn, nullptr, 1), RPM_E_INVALID_ARGUMENT);
    char buf[4];
    std::size_t len = 0;
    EXPECT_EQ(rpm_conn_recv(nullptr, buf, sizeof buf, &len), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_conn_recv(conn, nullptr, 4, &len), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_conn_recv(conn, buf, sizeof buf, nullptr), RPM_E_INVALID_ARGUMENT);
    // Larger than the buffer: bad size, and the message is dropped.
    CAPI_ASSERT_OK(rpm_server_send(server.get(), session, "too long for four", 17));
    CAPI_ASSERT_OK(rpm_server_send(server.get(), session, "ok", 2));
    EXPECT_EQ(rpm_conn_recv(conn, buf, sizeof buf, &len), RPM_E_BAD_SIZE);
    CAPI_ASSERT_OK(rpm_conn_recv(conn, buf, sizeof buf, &len));
    EXPECT_EQ(std::string(buf, len), "ok");
}

TEST(CapiServer, StartPortAndStop) {
    TempDir dir;
    TestServer server;
    CAPI_ASSERT_OK(server.start(dir, {{"r0", 65536}}));
    std::uint16_t port = 0;
    CAPI_ASSERT_OK(rpm_server_get_port(server.get(), RPM_SCHEME_TCP, &port));
    EXPECT_EQ(port, server.port());
    EXPECT_NE(port, 0);
    EXPECT_EQ(rpm_server_get_port(nullptr, RPM_SCHEME_TCP, &port), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_server_get_port(server.get(), RPM_SCHEME_TCP, nullptr), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_server_get_port(server.get(), 2, &port), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_server_get_port(server.get(), -1, &port), RPM_E_INVALID_ARGUMENT);
    EXPECT_TRUE(std::filesystem::exists(dir.path("r0")));  // create=1 made the file
    EXPECT_EQ(std::filesystem::file_size(dir.path("r0")), 65536u);
    CAPI_ASSERT_OK(server.stop());
    EXPECT_EQ(server.get(), nullptr);
    Conn conn;
    EXPECT_LT(connect("tcp://127.0.0.1:" + std::to_string(port), conn), 0);  // nobody listens
    rpm_server* none = nullptr;
    CAPI_EXPECT_OK(rpm_server_stop(&none));
    EXPECT_EQ(rpm_server_stop(nullptr), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_server_start(nullptr, &none), RPM_E_INVALID_ARGUMENT);
}

TEST(CapiServer, StartRefusesARegionItCannotMake) {
    TempDir dir;
    ServerOpts so;
    CAPI_ASSERT_OK(rpm_server_opts_new(so.out()));
    CAPI_ASSERT_OK(rpm_server_opts_add_listen(so, "tcp://127.0.0.1:0"));
    CAPI_ASSERT_OK(rpm_server_opts_add_client(so, kClientId, kSecret));
    CAPI_ASSERT_OK(rpm_server_opts_add_region(so, "gone", dir.path("no-dir/gone").c_str(), 65536, 0));
    rpm_server* s = nullptr;
    EXPECT_LT(rpm_server_start(so, &s), 0);
    EXPECT_EQ(s, nullptr);
    EXPECT_NE(std::string(rpm_errormsg()).find("no-dir/gone"), std::string::npos) << rpm_errormsg();
    EXPECT_EQ(rpm_server_start(so, nullptr), RPM_E_INVALID_ARGUMENT);
}

TEST(CapiCUsage, RoundTripFromC) {
    TempDir dir;
    TestServer server;
    CAPI_ASSERT_OK(server.start(dir, {{"r0", 65536}}));
    char err[512] = {};
    EXPECT_EQ(rpm_c_usage_roundtrip(server.port(), err, sizeof err), 0) << err;
    // And a failure reported as such: nobody on port 1.
    EXPECT_LT(rpm_c_usage_roundtrip(1, err, sizeof err), 0);
    EXPECT_NE(std::string(err).find("rpm_conn_new"), std::string::npos) << err;
}

std::string fixture(const char* name) { return (rpm::test::fixtures_dir() / "sysfs" / name).string(); }

TEST(CapiProbe, AdrDdioOnIsSendFlushWithCacheFlush) {
    Probe p;
    CAPI_ASSERT_OK(rpm_probe_new(fixture("adr_ddio_on").c_str(), p.out()));
    std::size_t n = 0;
    CAPI_ASSERT_OK(rpm_probe_get_count(p, &n));
    ASSERT_EQ(n, 1u);
    rpm_decision d{};
    CAPI_ASSERT_OK(rpm_probe_get_decision(p, 0, &d));
    // rpm-probe --sysfs-root tests/fixtures/sysfs/adr_ddio_on:
    //   region0 via mlx5_0: send_flush, server persist cache_flush_sfence,
    //   effective domain memory_controller
    EXPECT_STREQ(d.region, "region0");
    ASSERT_NE(d.device, nullptr);
    EXPECT_STREQ(d.device, "mlx5_0");
    EXPECT_EQ(d.method, RPM_METHOD_SEND_FLUSH);
    EXPECT_EQ(d.server_persist, RPM_SERVER_PERSIST_CACHE_FLUSH_SFENCE);
    EXPECT_EQ(d.domain, RPM_DOMAIN_MEMORY_CONTROLLER);
    ASSERT_NE(d.reason, nullptr);
    EXPECT_NE(std::string(d.reason).find("DDIO on"), std::string::npos) << d.reason;
    EXPECT_LT(rpm_probe_get_decision(p, 1, &d), 0);
}

TEST(CapiProbe, OtherFixtures) {
    Probe off, cxl, none;
    rpm_decision d{};
    CAPI_ASSERT_OK(rpm_probe_new(fixture("adr_ddio_off").c_str(), off.out()));
    CAPI_ASSERT_OK(rpm_probe_get_decision(off, 0, &d));
    EXPECT_EQ(d.method, RPM_METHOD_READ_AFTER_WRITE);
    EXPECT_EQ(d.server_persist, RPM_SERVER_PERSIST_NONE);
    CAPI_ASSERT_OK(rpm_probe_new(fixture("cxl_pmem_single").c_str(), cxl.out()));
    CAPI_ASSERT_OK(rpm_probe_get_decision(cxl, 0, &d));
    EXPECT_EQ(d.device, nullptr);  // no RDMA device
    EXPECT_EQ(d.method, RPM_METHOD_SEND_FLUSH);
    EXPECT_EQ(d.domain, RPM_DOMAIN_MEMORY_CONTROLLER);
    CAPI_ASSERT_OK(rpm_probe_new(fixture("no_nd_regions").c_str(), none.out()));
    std::size_t n = 9;
    CAPI_ASSERT_OK(rpm_probe_get_count(none, &n));
    EXPECT_EQ(n, 0u);
}

TEST(CapiProbe, ThisMachine) {
    Probe p;  // sysfs_root NULL: "/"
    CAPI_ASSERT_OK(rpm_probe_new(nullptr, p.out()));
    std::size_t n = 99999;
    CAPI_ASSERT_OK(rpm_probe_get_count(p, &n));
    EXPECT_LT(n, 99999u);
    for (std::size_t i = 0; i < n; ++i) {
        rpm_decision d{};
        CAPI_ASSERT_OK(rpm_probe_get_decision(p, i, &d));
        EXPECT_NE(d.region, nullptr);
        EXPECT_NE(rpm_method_name(d.method), nullptr);
        EXPECT_NE(rpm_server_persist_name(d.server_persist), nullptr);
        EXPECT_NE(rpm_domain_name(d.domain), nullptr);
    }
}

TEST(CapiProbe, RefusesBadArguments) {
    Probe p;
    CAPI_ASSERT_OK(rpm_probe_new(fixture("adr_ddio_on").c_str(), p.out()));
    rpm_decision d{};
    std::size_t n = 0;
    EXPECT_EQ(rpm_probe_new(fixture("adr_ddio_on").c_str(), nullptr), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_probe_get_count(nullptr, &n), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_probe_get_count(p, nullptr), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_probe_get_decision(nullptr, 0, &d), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_probe_get_decision(p, 0, nullptr), RPM_E_INVALID_ARGUMENT);
    rpm_probe* q = p.p;
    p.p = nullptr;
    CAPI_EXPECT_OK(rpm_probe_delete(&q));
    EXPECT_EQ(q, nullptr);
    CAPI_EXPECT_OK(rpm_probe_delete(&q));
    EXPECT_EQ(rpm_probe_delete(nullptr), RPM_E_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace capi
