// Connection set-up limits of a tcp:// listener (ServerOptions): a
// connection that does not authenticate within the handshake timeout is
// closed, silent or dribbling; authenticated ones may idle; connections in
// their handshake from one address, and connections in all, are bounded,
// and each refusal is told in one log line.
#include "raw_peer.hpp"
#include "common/server_fixture.hpp"

#include "tests/support/result.hpp"

#include <chrono>
#include <fstream>
#include <thread>

namespace {
using namespace rpm;
using namespace std::chrono_literals;
using rpm::test::ok;
using rpm::test::RawPeer;
using rpm::test::TcpServerTest;
using Clock = std::chrono::steady_clock;

class TcpLimits : public TcpServerTest {
protected:
    void tune(ServerOptions& o) override {
        o.handshake_timeout = 300ms;
        o.max_connections = 4;
        o.max_unauthenticated_per_address = 3;
        o.max_queued_answer_bytes = 1u << 20;
        o.on_log = [this](std::string_view line) {
            std::lock_guard lock(mu);
            log.emplace_back(line);
        };
    }
    bool logged(const std::string& words) {
        std::lock_guard lock(mu);
        for (const auto& l : log)
            if (l.find(words) != std::string::npos) return true;
        return false;
    }
    static double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
    std::vector<std::string> log;
};

TEST_F(TcpLimits, SilentConnectionIsClosedAfterTheHandshakeTimeout) {
    RawPeer p(server->port(Scheme::tcp));
    const auto start = Clock::now();
    ASSERT_TRUE(p.next());  // hello
    EXPECT_FALSE(p.next()) << "the server kept a connection that never authenticated";
    const double waited = seconds_since(start);
    EXPECT_GE(waited, 0.25);
    EXPECT_LT(waited, 2.0) << "closed only by the test's own 5 s receive timeout";
    EXPECT_TRUE(logged("no authentication within 300 ms"));
}

TEST_F(TcpLimits, DribbledHandshakeIsClosedToo) {
    RawPeer p(server->port(Scheme::tcp));
    ASSERT_TRUE(p.next());  // hello
    proto::Auth a;
    a.client_id = "app";
    a.client_nonce = proto::random_nonce();
    std::vector<std::byte> frame;
    proto::encode(frame, 1, a);
    const auto start = Clock::now();
    // One byte every 50 ms: the whole frame would take seconds.
    bool sent_all = true;
    for (std::size_t i = 0; i < frame.size() && seconds_since(start) < 4.0; ++i) {
        if (!p.send_bytes(std::span(frame).subspan(i, 1))) {
            sent_all = false;
            break;
        }
        std::this_thread::sleep_for(50ms);
    }
    EXPECT_FALSE(p.next()) << "a dribbled handshake outlived the timeout";
    EXPECT_LT(seconds_since(start), 4.5);
    EXPECT_TRUE(logged("no authentication within")) << (sent_all ? "(the whole frame went out)" : "");
}

TEST_F(TcpLimits, AuthenticatedIdleConnectionIsKept) {
    auto c = connect();
    ASSERT_TRUE(c) << c.error().message();
    auto r = c->open_region("kv");
    ASSERT_TRUE(r);
    std::this_thread::sleep_for(800ms);  // well past the handshake timeout
    EXPECT_TRUE(ok(r->persist(0, rpm::test::bytes_of("still here"))));
}

TEST_F(TcpLimits, HandshakesFromOneAddressAreBounded) {
    std::vector<std::unique_ptr<RawPeer>> half_open;
    for (int i = 0; i < 3; ++i) {
        half_open.push_back(std::make_unique<RawPeer>(server->port(Scheme::tcp)));
        ASSERT_TRUE(half_open.back()->next()) << "connection " << i << " got no hello";
    }
    RawPeer fourth(server->port(Scheme::tcp));
    EXPECT_FALSE(fourth.next()) << "a 4th connection mid-handshake from one address was admitted";
    EXPECT_TRUE(logged("3 of its connections have not authenticated yet, the limit is 3"));
    // One of them logs in: it no longer counts, and a new one is admitted.
    auto w = half_open[0]->login("app", "app-secret", proto::kVersion, /*hello_read=*/true);
    ASSERT_TRUE(w);
    EXPECT_EQ(w->first.type, proto::Type::welcome);
    RawPeer next(server->port(Scheme::tcp));
    EXPECT_TRUE(next.next()) << "refused although only 2 are mid-handshake";
}

TEST_F(TcpLimits, ConnectionsAreBounded) {
    std::vector<Connection> open;
    for (int i = 0; i < 4; ++i) {
        auto c = connect();
        ASSERT_TRUE(c) << c.error().message();
        open.push_back(std::move(*c));
    }
    auto fifth = connect();
    ASSERT_FALSE(fifth) << "a 5th connection was admitted past max_connections 4";
    EXPECT_TRUE(logged("4 are open, the limit is 4"));
    open.pop_back();
    // The server notices the close on its own loop; try for a while.
    Result<Connection> again = Error(errc::io_error, "not tried");
    for (int i = 0; i < 40 && !again; ++i) {
        std::this_thread::sleep_for(50ms);
        again = connect();
    }
    EXPECT_TRUE(again) << "no room after a connection closed";
}

// VmRSS of this process (the server runs in it), in bytes.
std::size_t resident_bytes() {
    std::ifstream status("/proc/self/status");
    std::string key;
    while (status >> key) {
        if (key == "VmRSS:") {
            std::size_t kb = 0;
            status >> kb;
            return kb * 1024;
        }
        status.ignore(1 << 10, '\n');
    }
    return 0;
}

// A logged-in client pipelines reads of 512 bytes (a 28-byte request asks
// for 18 times its size) and never reads an answer. The server stops taking
// its requests once 1 MiB of answers wait; what the client sends after that
// sits in the kernel's socket buffers (up to tens of MB on loopback, not the
// server's memory), and others are still served. Without the bound the
// server reads all 1.5 million requests and queues 800 MB of answers.
TEST_F(TcpLimits, ClientThatNeverReadsHoldsBoundedMemory) {
    RawPeer p(server->port(Scheme::tcp));
    auto w = p.login("app", "app-secret");
    ASSERT_TRUE(w && w->first.type == proto::Type::welcome);
    auto g = p.request(2, proto::OpenRegion{"kv", std::nullopt, false});
    ASSERT_TRUE(g && g->first.type == proto::Type::region);
    std::vector<std::byte> read;
    proto::encode(read, 3, proto::Read{0, 0, 512});
    const std::size_t before = resident_bytes();
    const std::size_t sent = p.flood(read, 1500000, 300);
    std::this_thread::sleep_for(200ms);  // whatever the server would still take in
    const std::size_t after = resident_bytes();
    EXPECT_LT(after, before + (48u << 20)) << "RSS grew from " << before << " to " << after << " bytes after "
                                           << sent << " requests";
    auto c = connect();
    ASSERT_TRUE(c) << c.error().message();
    auto r = c->open_region("kv");
    ASSERT_TRUE(r);
    EXPECT_TRUE(ok(r->persist(8192, rpm::test::bytes_of("served meanwhile"))));
}

TEST(TcpLimitsOptions, NonPositiveLimitsAreRefused) {
    ServerOptions o;
    o.listen = {"tcp://127.0.0.1:0"};
    o.secrets = {{"app", "secret"}};
    o.regions = {{"r", "/dev/shm/rpm-limits-options-test", 4096, true, {}}};
    for (int i = 0; i < 4; ++i) {
        ServerOptions bad = o;
        if (i == 0) bad.handshake_timeout = 0ms;
        if (i == 1) bad.max_connections = 0;
        if (i == 2) bad.max_unauthenticated_per_address = 0;
        if (i == 3) bad.max_queued_answer_bytes = 0;
        auto s = Server::start(bad);
        ASSERT_FALSE(s) << i;
        EXPECT_EQ(s.error(), errc::invalid_argument);
    }
}

} // namespace
