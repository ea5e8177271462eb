#include "fixture.hpp"

#include <algorithm>

namespace rpm::rdma::verbs::test {

std::vector<std::uint8_t> descriptor(std::uint64_t addr, std::uint64_t size, std::uint32_t rkey, int usage) {
    std::vector<std::uint8_t> d;
    const auto put = [&d](std::uint64_t v, int bytes) {
        for (int i = 0; i < bytes; ++i) d.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
    };
    put(addr, 8);
    put(size, 8);
    put(rkey, 4);
    put(static_cast<std::uint64_t>(usage), 1);
    return d;
}

void expect_one_recv(std::uint64_t wr_id, const ibv_sge& sge) {
    ASSERT_EQ(fake::recvs().size(), 1u);
    ASSERT_EQ(fake::recvs()[0].chain.size(), 1u);
    const auto& r = fake::recvs()[0].chain[0];
    EXPECT_EQ(r.wr_id, wr_id);
    EXPECT_EQ(r.num_sge, 1);
    ASSERT_EQ(r.sge.size(), 1u);
    EXPECT_EQ(r.sge[0].addr, sge.addr);
    EXPECT_EQ(r.sge[0].length, sge.length);
    EXPECT_EQ(r.sge[0].lkey, sge.lkey);
}

void expect_wr(const fake::SendWr& got, const WantWr& want) {
    EXPECT_EQ(got.wr_id, want.wr_id);
    EXPECT_EQ(got.opcode, want.opcode);
    EXPECT_EQ(got.send_flags, want.send_flags) << "send_flags: SIGNALED=" << kSig << " INLINE=" << kInline
                                               << " FENCE=" << kFence;
    EXPECT_EQ(got.num_sge, want.num_sge);
    ASSERT_EQ(got.sge.size(), static_cast<std::size_t>(want.num_sge));
    if (want.num_sge == 1) {
        EXPECT_EQ(got.sge[0].addr, want.sge.addr);
        EXPECT_EQ(got.sge[0].length, want.sge.length);
        // Inline data is copied at posting: the device ignores the lkey.
        if ((want.send_flags & kInline) == 0) {
            EXPECT_EQ(got.sge[0].lkey, want.sge.lkey);
        }
    }
    EXPECT_EQ(got.remote_addr, want.remote_addr);
    EXPECT_EQ(got.rkey, want.rkey);
}

::testing::AssertionResult posted(std::size_t doorbells, std::size_t len) {
    const auto& s = fake::sends();
    if (s.size() != doorbells)
        return ::testing::AssertionFailure() << s.size() << " post_send calls, expected " << doorbells;
    if (doorbells > 0 && s.back().chain.size() != len)
        return ::testing::AssertionFailure() << "the last chain holds " << s.back().chain.size()
                                             << " work requests, expected " << len;
    return ::testing::AssertionSuccess();
}

void VerbsTest::SetUp() {
    fake::reset();
    // The layer's last failure is per thread: none may leak in from an
    // earlier test into an error_name() checked here.
    (void)take_last_failure(0);  // clears whatever was recorded
}

void VerbsTest::TearDown() {
    close();
    std::string all;
    for (const auto& v : fake::violations()) all += "\n  " + v;
    EXPECT_TRUE(fake::violations().empty()) << "calls the real rdma-core would refuse or hang on:" << all;
    fake::reset();
}

void VerbsTest::open(const Options& o) {
    fake::config().device_cap_flags_ex = o.cap_flags;
    fake::config().granted_inline = o.granted_inline;
    ASSERT_EQ(api.utils_get_ibv_context("127.0.0.1", kContextRemote, &ctx), 0);
    ASSERT_EQ(ctx, fake::device());
    ASSERT_EQ(api.peer_new(ctx, &peer), 0);
    ASSERT_EQ(api.mr_reg(peer, buf.data(), buf.size(), kLocalUsage, &mr), 0);
    const auto d = descriptor(kRemoteAddr, kRemoteSize, kRemoteRkey, o.remote_usage);
    ASSERT_EQ(api.mr_remote_from_descriptor(d.data(), d.size(), &remote), 0);
    ASSERT_EQ(api.conn_cfg_new(&cfg), 0);
    ConnReq* req = nullptr;
    ASSERT_EQ(api.conn_req_new(peer, "127.0.0.1", "7204", cfg, &req), 0);
    ASSERT_EQ(api.conn_req_connect(&req, nullptr, &conn), 0);
    EXPECT_EQ(req, nullptr);
    if (o.apply_peer_cfg) {
        PeerCfg* pc = nullptr;
        ASSERT_EQ(api.peer_cfg_new(&pc), 0);
        ASSERT_EQ(api.peer_cfg_set_direct_write_to_pmem(pc, o.direct), 0);
        EXPECT_EQ(api.conn_apply_remote_peer_cfg(conn, pc), 0);
        EXPECT_EQ(api.peer_cfg_delete(&pc), 0);
    }
}

void VerbsTest::close() {
    if (conn != nullptr) {
        EXPECT_EQ(api.conn_disconnect(conn), 0);
        EXPECT_EQ(api.conn_delete(&conn), 0);
        EXPECT_EQ(conn, nullptr);
    }
    // Each a no-op on a NULL handle.
    EXPECT_EQ(api.mr_remote_delete(&remote), 0);
    EXPECT_EQ(api.mr_dereg(&mr), 0);
    EXPECT_EQ(api.conn_cfg_delete(&cfg), 0);
    EXPECT_EQ(api.peer_delete(&peer), 0);
    ctx = nullptr;
}

const ibv_mr& VerbsTest::local() const {
    static const ibv_mr none{};
    const ibv_mr* m = fake::find_mr(buf.data());
    if (m == nullptr) ADD_FAILURE() << "buf is not registered";
    return m != nullptr ? *m : none;
}

fake::Registration VerbsTest::flush_buffer() const {
    // The only 8-byte registration: the connection's own (buf is larger).
    const auto& regs = fake::registrations();
    const auto it = std::find_if(regs.begin(), regs.end(), [](const auto& r) { return r.length == 8; });
    if (it == regs.end()) {
        ADD_FAILURE() << "no flush buffer was registered";
        return {};
    }
    return *it;
}

int VerbsTest::conn_fd() const {
    int fd = -1;
    EXPECT_EQ(api.conn_get_event_fd(conn, &fd), 0);
    return fd;
}

int VerbsTest::cq_fd() const {
    Cq* cq = nullptr;
    int fd = -1;
    EXPECT_EQ(api.conn_get_cq(conn, &cq), 0);
    EXPECT_EQ(api.cq_get_fd(cq, &fd), 0);
    return fd;
}

} // namespace rpm::rdma::verbs::test
