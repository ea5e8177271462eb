// Memory registrations and their descriptors, peer configurations and
// their one-byte descriptors, and connection configurations.
#include "fixture.hpp"

#include <string>

namespace rpm::rdma::verbs::test {
namespace {

using MrTest = VerbsTest;
using CfgTest = VerbsTest;

TEST_F(MrTest, RegistrationAccessFollowsUsage) {
    ASSERT_NO_FATAL_FAILURE(open());
    constexpr int kRemoteRead = IBV_ACCESS_REMOTE_READ;
    constexpr int kRemoteWrite = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
    constexpr int kLocalWrite = IBV_ACCESS_LOCAL_WRITE;
    const std::pair<int, int> cases[] = {
        {kUsageWriteSrc, 0},  // the device only reads it: no access flag needed
        {kUsageSend, 0},
        {kUsageReadSrc, kRemoteRead},
        {kUsageFlushVisibility, kRemoteRead},  // a flush is a remote read
        {kUsageFlushPersistent, kRemoteRead},
        {kUsageWriteDst, kRemoteWrite},
        {kUsageReadDst, kLocalWrite},
        {kUsageRecv, kLocalWrite},
        {kUsageWriteDst | kUsageReadSrc | kUsageFlushPersistent, kRemoteWrite | kRemoteRead},
    };
    for (const auto& [usage, access] : cases) {
        SCOPED_TRACE("usage " + std::to_string(usage));
        LocalMr* m = nullptr;
        ASSERT_EQ(api.mr_reg(peer, buf.data() + 64, 1000, usage, &m), 0);
        const auto& r = fake::registrations().back();
        EXPECT_EQ(r.access, access);
        EXPECT_EQ(r.addr, buf.data() + 64);
        EXPECT_EQ(r.length, 1000u);
        const std::size_t deregs = fake::deregistrations().size();
        ASSERT_EQ(api.mr_dereg(&m), 0);
        EXPECT_EQ(m, nullptr);
        ASSERT_EQ(fake::deregistrations().size(), deregs + 1);
        EXPECT_EQ(fake::deregistrations().back().mr, r.mr);
    }
}

TEST_F(MrTest, BadRegistrationsNeverReachTheDevice) {
    ASSERT_NO_FATAL_FAILURE(open());
    const std::size_t regs = fake::count("reg_mr");
    LocalMr* m = nullptr;
    EXPECT_EQ(api.mr_reg(nullptr, buf.data(), 64, kUsageSend, &m), kErrInval);
    EXPECT_EQ(api.mr_reg(peer, nullptr, 64, kUsageSend, &m), kErrInval);
    EXPECT_EQ(api.mr_reg(peer, buf.data(), 0, kUsageSend, &m), kErrInval);
    EXPECT_EQ(api.mr_reg(peer, buf.data(), 64, 0, &m), kErrInval);
    EXPECT_EQ(api.mr_reg(peer, buf.data(), 64, 1 << 8, &m), kErrInval);
    EXPECT_EQ(api.mr_reg(peer, buf.data(), 64, kUsageSend, nullptr), kErrInval);
    EXPECT_EQ(m, nullptr);
    EXPECT_EQ(fake::count("reg_mr"), regs);
}

TEST_F(MrTest, AFailedRegistrationSaysWhy) {
    ASSERT_NO_FATAL_FAILURE(open());
    LocalMr* m = nullptr;
    fake::fail_next("reg_mr", EINVAL);
    EXPECT_EQ(api.mr_reg(peer, buf.data(), 64, kUsageSend, &m), kErrInval);
    EXPECT_EQ(m, nullptr);
    fake::fail_next("reg_mr", ENOMEM);
    const int ret = api.mr_reg(peer, buf.data(), 64, kUsageSend, &m);
    EXPECT_EQ(ret, kErrProvider);
    EXPECT_EQ(m, nullptr);
    const std::string why = error_name(ret);
    EXPECT_NE(why.find("ibv_reg_mr"), std::string::npos) << why;
    EXPECT_NE(why.find("Cannot allocate memory"), std::string::npos) << why;
}

TEST_F(MrTest, DescriptorCarriesAddressSizeRkeyAndUsage) {
    ASSERT_NO_FATAL_FAILURE(open());
    LocalMr* dst = nullptr;
    const int usage = kUsageWriteDst | kUsageReadSrc | kUsageFlushPersistent;
    ASSERT_EQ(api.mr_reg(peer, buf.data() + 1024, 2048, usage, &dst), 0);
    const auto& reg = fake::registrations().back();
    std::size_t n = 0;
    ASSERT_EQ(api.mr_get_descriptor_size(dst, &n), 0);
    ASSERT_EQ(n, 21u);
    std::vector<std::uint8_t> d(n);
    ASSERT_EQ(api.mr_get_descriptor(dst, d.data()), 0);
    // The rkey, not the lkey: the peer names the region with it.
    EXPECT_EQ(d, descriptor(at(1024), 2048, reg.rkey, usage));
    EXPECT_NE(reg.rkey, reg.lkey);

    RemoteMr* r = nullptr;
    ASSERT_EQ(api.mr_remote_from_descriptor(d.data(), d.size(), &r), 0);
    std::size_t size = 0;
    ASSERT_EQ(api.mr_remote_get_size(r, &size), 0);
    EXPECT_EQ(size, 2048u);
    int flush_type = -1;
    ASSERT_EQ(api.mr_remote_get_flush_type(r, &flush_type), 0);
    EXPECT_EQ(flush_type, kUsageFlushPersistent);
    // Address and key as a write's work request names them.
    ASSERT_EQ(api.write(conn, r, 100, mr, 0, 200, kCompletionAlways, tag(1)), 0);
    ASSERT_TRUE(posted(1, 1));
    EXPECT_EQ(fake::sends()[0].chain[0].remote_addr, at(1024) + 100);
    EXPECT_EQ(fake::sends()[0].chain[0].rkey, reg.rkey);
    // And the usage: persistent flush allowed, as the peer cfg declares direct write.
    EXPECT_EQ(api.flush(conn, r, 0, 8, kFlushPersistent, kCompletionAlways, tag(2)), 0);
    EXPECT_EQ(api.flush(conn, r, 0, 8, kFlushVisibility, kCompletionAlways, tag(3)), kErrNoSupp);
    EXPECT_EQ(api.mr_remote_delete(&r), 0);
    EXPECT_EQ(r, nullptr);
    EXPECT_EQ(api.mr_dereg(&dst), 0);
}

TEST_F(MrTest, EveryUsageBitSurvivesTheDescriptor) {
    for (int usage : {kUsageFlushVisibility, kUsageFlushPersistent, kUsageFlushVisibility | kUsageFlushPersistent,
                      0xFF, kUsageRecv}) {
        SCOPED_TRACE(usage);
        const auto d = descriptor(0x1000, 64, 7, usage);
        RemoteMr* r = nullptr;
        ASSERT_EQ(api.mr_remote_from_descriptor(d.data(), d.size(), &r), 0);
        int type = -1;
        ASSERT_EQ(api.mr_remote_get_flush_type(r, &type), 0);
        EXPECT_EQ(type, usage & (kUsageFlushVisibility | kUsageFlushPersistent));
        EXPECT_EQ(api.mr_remote_delete(&r), 0);
    }
}

TEST_F(MrTest, MalformedDescriptorsAreRefused) {
    const auto good = descriptor(0x10000, 4096, 0x1234, kUsageWriteDst);
    RemoteMr* r = nullptr;
    ASSERT_EQ(api.mr_remote_from_descriptor(good.data(), good.size(), &r), 0);
    ASSERT_EQ(api.mr_remote_delete(&r), 0);

    const auto longer = [&] {
        auto d = good;
        d.push_back(0);
        return d;
    }();
    EXPECT_EQ(api.mr_remote_from_descriptor(good.data(), good.size() - 1, &r), kErrInval);
    EXPECT_EQ(api.mr_remote_from_descriptor(longer.data(), longer.size(), &r), kErrInval);
    EXPECT_EQ(api.mr_remote_from_descriptor(good.data(), 0, &r), kErrInval);
    const auto empty = descriptor(0x10000, 0, 0x1234, kUsageWriteDst);
    EXPECT_EQ(api.mr_remote_from_descriptor(empty.data(), empty.size(), &r), kErrInval);
    const auto wraps = descriptor(UINT64_MAX - 10, 100, 0x1234, kUsageWriteDst);
    EXPECT_EQ(api.mr_remote_from_descriptor(wraps.data(), wraps.size(), &r), kErrInval);
    const auto huge = descriptor(0x10000, UINT64_MAX, 0x1234, kUsageWriteDst);
    EXPECT_EQ(api.mr_remote_from_descriptor(huge.data(), huge.size(), &r), kErrInval);
    EXPECT_EQ(api.mr_remote_from_descriptor(nullptr, good.size(), &r), kErrInval);
    EXPECT_EQ(api.mr_remote_from_descriptor(good.data(), good.size(), nullptr), kErrInval);
    EXPECT_EQ(r, nullptr);
    // Every bit of the one usage byte is a known usage (kUsageRecv is 1 << 7),
    // so no descriptor can carry an unknown one: nothing more to refuse there.
}

TEST_F(MrTest, NullArgumentsAreRefused) {
    std::size_t n = 0;
    int type = 0;
    std::uint8_t d[21] = {};
    LocalMr* m = nullptr;
    RemoteMr* r = nullptr;
    EXPECT_EQ(api.mr_get_descriptor_size(nullptr, &n), kErrInval);
    EXPECT_EQ(api.mr_get_descriptor(nullptr, d), kErrInval);
    EXPECT_EQ(api.mr_remote_get_size(nullptr, &n), kErrInval);
    EXPECT_EQ(api.mr_remote_get_flush_type(nullptr, &type), kErrInval);
    EXPECT_EQ(api.mr_dereg(nullptr), kErrInval);
    EXPECT_EQ(api.mr_dereg(&m), 0);  // a NULL registration: nothing to do
    EXPECT_EQ(api.mr_remote_delete(nullptr), kErrInval);
    EXPECT_EQ(api.mr_remote_delete(&r), 0);
    EXPECT_EQ(fake::count("dereg_mr"), 0u);
}

TEST_F(CfgTest, PeerCfgDescriptorRoundTrip) {
    PeerCfg* c = nullptr;
    ASSERT_EQ(api.peer_cfg_new(&c), 0);
    bool direct = true;
    ASSERT_EQ(api.peer_cfg_get_direct_write_to_pmem(c, &direct), 0);
    EXPECT_FALSE(direct);  // not declared until set
    std::size_t n = 0;
    ASSERT_EQ(api.peer_cfg_get_descriptor_size(c, &n), 0);
    ASSERT_EQ(n, 1u);
    for (const bool value : {true, false}) {
        SCOPED_TRACE(value);
        ASSERT_EQ(api.peer_cfg_set_direct_write_to_pmem(c, value), 0);
        std::uint8_t byte = 0xAA;
        ASSERT_EQ(api.peer_cfg_get_descriptor(c, &byte), 0);
        EXPECT_EQ(byte, value ? 1 : 0);
        PeerCfg* back = nullptr;
        ASSERT_EQ(api.peer_cfg_from_descriptor(&byte, 1, &back), 0);
        bool got = !value;
        ASSERT_EQ(api.peer_cfg_get_direct_write_to_pmem(back, &got), 0);
        EXPECT_EQ(got, value);
        EXPECT_EQ(api.peer_cfg_delete(&back), 0);
        EXPECT_EQ(back, nullptr);
    }
    EXPECT_EQ(api.peer_cfg_delete(&c), 0);
}

TEST_F(CfgTest, PeerCfgDescriptorsOtherThanZeroOrOneAreRefused) {
    PeerCfg* c = nullptr;
    for (const std::uint8_t b : {std::uint8_t{2}, std::uint8_t{0x80}, std::uint8_t{0xFF}}) {
        EXPECT_EQ(api.peer_cfg_from_descriptor(&b, 1, &c), kErrInval) << int{b};
    }
    const std::uint8_t two[2] = {1, 0};
    EXPECT_EQ(api.peer_cfg_from_descriptor(two, 2, &c), kErrInval);
    EXPECT_EQ(api.peer_cfg_from_descriptor(two, 0, &c), kErrInval);
    EXPECT_EQ(api.peer_cfg_from_descriptor(nullptr, 1, &c), kErrInval);
    EXPECT_EQ(api.peer_cfg_from_descriptor(two, 1, nullptr), kErrInval);
    EXPECT_EQ(c, nullptr);
}

TEST_F(CfgTest, ConnCfgRefusesEmptyQueuesAndNegativeTimeouts) {
    ASSERT_EQ(api.conn_cfg_new(&cfg), 0);
    EXPECT_EQ(api.conn_cfg_set_sq_size(cfg, 0), kErrInval);
    EXPECT_EQ(api.conn_cfg_set_rq_size(cfg, 0), kErrInval);
    EXPECT_EQ(api.conn_cfg_set_cq_size(cfg, 0), kErrInval);
    EXPECT_EQ(api.conn_cfg_set_timeout(cfg, -1), kErrInval);
    EXPECT_EQ(api.conn_cfg_set_timeout(cfg, 0), 0);
    EXPECT_EQ(api.conn_cfg_set_sq_size(nullptr, 1), kErrInval);
    ASSERT_EQ(api.conn_cfg_delete(&cfg), 0);
    EXPECT_EQ(cfg, nullptr);
}

TEST_F(CfgTest, ConnCfgDefaultsReachTheDevice) {
    // librpma's defaults: queues of 10, a one-second timeout.
    ASSERT_NO_FATAL_FAILURE(open());
    ASSERT_EQ(fake::qp_attrs().size(), 1u);
    EXPECT_EQ(fake::qp_attrs()[0].cap.max_send_wr, 10u);
    EXPECT_EQ(fake::qp_attrs()[0].cap.max_recv_wr, 10u);
    EXPECT_EQ(fake::cm_args().cqe, 10);
    EXPECT_EQ(fake::cm_args().resolve_addr_timeout, 1000);
    EXPECT_EQ(fake::cm_args().resolve_route_timeout, 1000);
}

TEST_F(CfgTest, PeerDeleteFreesTheProtectionDomain) {
    ASSERT_EQ(api.utils_get_ibv_context("127.0.0.1", kContextRemote, &ctx), 0);
    ASSERT_EQ(api.peer_new(ctx, &peer), 0);
    EXPECT_EQ(fake::live(), 1) << fake::live_report();
    ASSERT_EQ(api.peer_delete(&peer), 0);
    EXPECT_EQ(peer, nullptr);
    EXPECT_EQ(fake::count("dealloc_pd"), 1u);
    EXPECT_EQ(fake::live(), 0) << fake::live_report();
    EXPECT_EQ(api.peer_delete(&peer), 0);  // NULL: nothing to do
    EXPECT_EQ(api.peer_delete(nullptr), kErrInval);
}

} // namespace
} // namespace rpm::rdma::verbs::test
