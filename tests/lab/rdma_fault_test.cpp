// Bad input and faults over real rdma:// (Soft-RoCE in the lab VM; run by
// suite.sh, never on a machine without an RDMA device). A client built on
// the real verbs layer with one call wrapped (eRPC-style fault injection through
// rdma::Api) sends what a broken or hostile peer would; each case must end
// in a clear error, leave the region untouched and the server serving.
#include "common/server_fixture.hpp"
#include "transport/rdma/api.hpp"
#include "transport/rdma/client.hpp"

#include "tests/support/result.hpp"

#include <atomic>
#include <cstdlib>
#include <future>
#include <iostream>
#include <mutex>
#include <utility>

namespace {
using namespace rpm;
using rpm::test::bytes_of;
using rpm::test::code_of;
using rpm::test::ok;

// The fault to inject into the next send: cut the frame to this many
// bytes (0: send it whole).
std::atomic<std::size_t> g_cut_send_to{0};

int cutting_send(rdma::Conn* conn, const rdma::LocalMr* src, std::size_t offset, std::size_t len, int flags,
                 const void* ctx) {
    const std::size_t cut = g_cut_send_to.exchange(0);
    return rdma::real_api().send(conn, src, offset, cut ? std::min(cut, len) : len, flags, ctx);
}

// The fault for the next remote MR the client builds from a grant: corrupt
// the rkey. The descriptor is (verbs/mr.cpp) address (8 bytes, LE), size (8), rkey
// (4), usage (1); the test checks the size field sits where this says.
std::atomic<bool> g_forge_rkey{false};
// Or use this descriptor instead of the grant's (an old grant's: a stale
// rkey on a live queue pair).
std::mutex g_swap_mu;
std::vector<std::uint8_t> g_swap_descriptor;

int forging_mr_remote_from_descriptor(const void* desc, std::size_t size, rdma::RemoteMr** out) {
    std::vector<std::uint8_t> d(static_cast<const std::uint8_t*>(desc), static_cast<const std::uint8_t*>(desc) + size);
    {
        std::lock_guard lock(g_swap_mu);
        if (!g_swap_descriptor.empty()) d = std::exchange(g_swap_descriptor, {});
    }
    if (g_forge_rkey.exchange(false) && d.size() >= 20) {
        d[16] ^= 0x5a;
        d[17] ^= 0x3c;
    }
    return rdma::real_api().mr_remote_from_descriptor(d.data(), d.size(), out);
}

std::uint64_t le64_at(const std::vector<std::uint8_t>& d, std::size_t at) {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < 8 && at + i < d.size(); ++i) v |= std::uint64_t{d[at + i]} << (8 * i);
    return v;
}

class RdmaFaults : public rpm::test::ServerTest {
protected:
    void SetUp() override {
        ServerTest::SetUp();
        if (HasFatalFailure()) return;
        ASSERT_EQ(scheme(), "rdma") << "run by tests/lab/suite.sh with RPM_IT_TRANSPORT=rdma";
        auto c = connect();
        ASSERT_TRUE(c) << c.error().message();
        auto r = c->open_region("logs");
        ASSERT_TRUE(r) << r.error().message();
        logs_size = r->size();
        ASSERT_TRUE(ok(r->persist(logs_size - kSentinel.size(), bytes_of(kSentinel))));
    }

    // A transport on the real verbs layer with send wrapped, and the grant
    // of "logs" as the server sent it (no client-side range checks below).
    std::pair<std::unique_ptr<client::Transport>, proto::RegionGrant> raw_transport(std::uint64_t term = 0) {
        static const rdma::Api api = [] {
            rdma::Api a = rdma::real_api();
            a.send = &cutting_send;
            a.mr_remote_from_descriptor = &forging_mr_remote_from_descriptor;
            return a;
        }();
        ClientOptions o;
        o.client_id = "app";
        o.secret = "app-secret";
        o.timeout = std::chrono::seconds(20);
        o.completion = completion();
        auto t = rdma::connect_rdma_with(api, address(), server->port(Scheme::rdma), o);
        EXPECT_TRUE(t) << t.error().message();
        if (!t) return {};
        auto g = (*t)->open_region(proto::OpenRegion{"logs", std::nullopt, false, term});
        EXPECT_TRUE(g) << g.error().message();
        return {std::move(*t), g ? *g : proto::RegionGrant{}};
    }

    // RETURN VALUE: the code `op`'s callback got ({} for success), or
    // std::errc::timed_out when it did not run within 60 s.
    static std::error_code wait(const std::function<void(client::Done)>& op) {
        // Shared: a callback arriving after a timeout must find the promise alive.
        auto p = std::make_shared<std::promise<Result<void>>>();
        op([p](Result<void> r) { p->set_value(std::move(r)); });
        auto f = p->get_future();
        if (f.wait_for(std::chrono::seconds(60)) != std::future_status::ready) return std::make_error_code(std::errc::timed_out);
        return code_of(f.get());
    }

    void expect_untouched_and_serving(std::uint64_t term = 0) {
        auto c = connect();
        ASSERT_TRUE(c) << "the server stopped serving: " << c.error().message();
        RegionOptions ro;
        ro.fencing_term = term;
        auto r = c->open_region("logs", ro);
        ASSERT_TRUE(r) << r.error().message();
        std::string back(kSentinel.size(), '\0');
        ASSERT_TRUE(ok(r->read(logs_size - kSentinel.size(), std::as_writable_bytes(std::span(back.data(), back.size())))));
        EXPECT_EQ(back, kSentinel);
        EXPECT_EQ(std::filesystem::file_size(logs_path), logs_size) << "the region's file grew";
    }

    static constexpr std::string_view kSentinel = "sentinel at the end: must never change";
    std::uint64_t logs_size = 0;
};

TEST_F(RdmaFaults, OneSidedWritePastTheRegionIsStoppedByTheRnic) {
    auto [t, g] = raw_transport();
    ASSERT_TRUE(t);
    const std::string over(64, 'X');
    // Straddles the end of the registered region: rxe's MR bounds check
    // refuses it, as a hardware RNIC's would.
    const auto ec = wait([&](client::Done d) { t->write(g, g.size - 16, bytes_of(over), std::move(d)); });
    EXPECT_TRUE(ec) << "a write past the region's end was acknowledged";
    EXPECT_NE(ec, std::errc::timed_out);
    t.reset();
    expect_untouched_and_serving();
}

TEST_F(RdmaFaults, ForgedRkeyIsRefused) {
    g_forge_rkey = true;  // the client's view of "logs" gets a wrong rkey
    auto [t, g] = raw_transport();
    ASSERT_TRUE(t);
    ASSERT_FALSE(g_forge_rkey) << "the grant's descriptor was never decoded";
    ASSERT_GE(g.rdma_mr.size(), 21u);
    ASSERT_EQ(le64_at(g.rdma_mr, 8), g.size) << "the descriptor layout is not the one assumed";
    const std::string data(16, 'Y');
    const auto ec = wait([&](client::Done d) { t->write(g, logs_size - 16, bytes_of(data), std::move(d)); });
    EXPECT_TRUE(ec) << "a write with an unknown grant or forged key was acknowledged";
    t.reset();
    expect_untouched_and_serving();
}

// Fencing's one-sided half: a stale primary's queue pair may still be
// connected, or its write already posted, when a newer term opens. The
// newer term's own live connection, given the old grant's rkey, stands in
// for it: only the region's re-registration stops the write.
TEST_F(RdmaFaults, AnOldRkeyDiesWhenANewerTermOpens) {
    auto [old_t, old_g] = raw_transport(1);
    ASSERT_TRUE(old_t);
    {
        std::lock_guard lock(g_swap_mu);
        g_swap_descriptor = old_g.rdma_mr;
    }
    auto [new_t, new_g] = raw_transport(2);
    ASSERT_TRUE(new_t);
    {
        std::lock_guard lock(g_swap_mu);
        ASSERT_TRUE(g_swap_descriptor.empty()) << "the newer grant's descriptor was never decoded";
    }
    EXPECT_NE(new_g.rdma_mr, old_g.rdma_mr) << "the region kept its registration across terms";
    const std::string data(16, 'F');
    const auto ec = wait([&](client::Done d) { new_t->write(new_g, logs_size - 16, bytes_of(data), std::move(d)); });
    EXPECT_TRUE(ec) << "a write with the older term's rkey was acknowledged";
    EXPECT_NE(ec, std::errc::timed_out);
    old_t.reset();
    new_t.reset();
    expect_untouched_and_serving(2);
    auto fence = logs_path;
    fence += ".fence";
    std::filesystem::remove(fence);
}

TEST_F(RdmaFaults, TruncatedFramesCloseTheSessionAndTheServerGoesOn) {
    for (std::size_t cut : {std::size_t{5}, proto::kHeaderSize + 3}) {
        auto [t, g] = raw_transport();
        ASSERT_TRUE(t);
        g_cut_send_to = cut;  // the next send: a short header, then a short body
        const std::string msg(200, 'm');
        const auto ec = wait([&](client::Done d) { t->send(bytes_of(msg), std::move(d)); });
        EXPECT_TRUE(ec) << "a frame cut to " << cut << " bytes was accepted";
        EXPECT_NE(ec, std::errc::timed_out) << "no answer to a frame cut to " << cut << " bytes";
        t.reset();
        expect_untouched_and_serving();
    }
    std::lock_guard lock(mu);
    EXPECT_TRUE(messages.empty()) << "a truncated message was delivered";
}

// Why a connection failed, as a later call on it (here one that posts
// nothing) reports it.
std::string failure_of(Connection& c) {
    std::vector<std::byte> mem(64);
    auto m = c.register_memory(mem);
    return m ? std::string("(the connection is up)") : m.error().message();
}

// Native FLUSH on the wire (the trixie lab): "kv" is devdax on the NVDIMM,
// the grant native_flush, and a persist (its write and one FLUSH) succeeds.
TEST_F(RdmaFaults, ANativeFlushPersistsOnDevdax) {
    if (rpm::test::env_or("RPM_IT_NATIVE_FLUSH", "no") != "yes") GTEST_SKIP() << "needs native FLUSH (the trixie lab)";
    auto c = connect();
    ASSERT_TRUE(c) << c.error().message();
    auto r = c->open_region("kv");
    ASSERT_TRUE(r) << r.error().message();
    ASSERT_EQ(r->method(), flush::Method::native_flush) << r->reason();
    const Result<void> p = r->persist(16384, bytes_of("durable by FLUSH"));
    EXPECT_TRUE(ok(p)) << failure_of(*c);
}

// Native FLUSH's negative control (the trixie lab, RPM_IT_NATIVE_FLUSH=yes):
// the region's memory registered for global FLUSH only while the server
// claims persistent (RPM_FAULT=flush-global-only, read when "kv" is first
// registered, at its open here), so the grant is native_flush and rxe
// completes the persistent FLUSH with a remote access error. The persist
// fails, nothing is acknowledged, and the connection's failure says why.
TEST_F(RdmaFaults, ANativeFlushTheMemoryDoesNotAdmitFailsAndAcknowledgesNothing) {
    if (rpm::test::env_or("RPM_IT_NATIVE_FLUSH", "no") != "yes") GTEST_SKIP() << "needs native FLUSH (the trixie lab)";
    auto c = connect();
    ASSERT_TRUE(c) << c.error().message();
    ::setenv("RPM_FAULT", "flush-global-only", 1);
    auto r = c->open_region("kv");
    ::unsetenv("RPM_FAULT");
    ASSERT_TRUE(r) << r.error().message();
    ASSERT_EQ(r->method(), flush::Method::native_flush) << r->reason();
    const Result<void> p = r->persist(12288, bytes_of("never acknowledged"));
    EXPECT_EQ(code_of(p), errc::io_error) << "a FLUSH the memory does not admit was acknowledged";
    // RC: the queue pair is in error, the connection closed with the reason,
    // which the next persist's error names.
    const Result<void> next = r->persist(12288, bytes_of("nor this"));
    EXPECT_EQ(code_of(next), errc::io_error);
    if (!next.has_value()) {
        EXPECT_NE(next.error().detail().find("the connection failed"), std::string::npos) << next.error().message();
        EXPECT_NE(next.error().detail().find("work request failed: remote access error"), std::string::npos)
            << next.error().message();
    }
    const std::string why = failure_of(*c);
    EXPECT_NE(why.find("work request failed: remote access error"), std::string::npos) << why;
    std::cout << "[native-flush control] persist: " << (p.has_value() ? std::string("success") : p.error().message())
              << "; the connection: " << why << "\n";
    expect_untouched_and_serving();
}

TEST_F(RdmaFaults, BadRequestsThroughTheApiGetClearErrors) {
    auto bad = connect("app", "wrong");
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().code(), errc::auth_failed);
    auto c = connect();
    ASSERT_TRUE(c) << c.error().message();
    auto unknown = c->open_region("no-such-region");
    ASSERT_FALSE(unknown);
    EXPECT_EQ(unknown.error().code(), errc::invalid_argument);
    auto r = c->open_region("logs");
    ASSERT_TRUE(r);
    EXPECT_EQ(code_of(r->atomic_write(12, 1)), errc::misaligned);
    EXPECT_EQ(code_of(r->write(logs_size - 8, bytes_of("sixteen bytes!!!"))), errc::out_of_range);
    const std::vector<std::byte> too_big(65521);
    EXPECT_EQ(code_of(c->send(too_big)), errc::bad_size);
    EXPECT_TRUE(ok(c->send(bytes_of("still connected"))));
    expect_untouched_and_serving();
}

} // namespace
