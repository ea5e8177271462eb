// Native IBTA FLUSH through the verbs layer: the queue pair made for it,
// the registration's access, and the FLUSH work request field by field
// (opcode, placement type, selectivity level, remote address, length,
// rkey, signaled flag) in one chain with the writes it makes durable,
// posted through the extended post API under one doorbell. And a build
// whose rdma-core has no ibv_wr_flush (Debian 12's v44), where none of it
// exists and the layer behaves as before.
#include "fixture.hpp"

#include "platform/rdma_caps.hpp"

#include <cstdlib>

namespace rpm::rdma::verbs::test {
namespace {

using NativeFlushTest = VerbsTest;

constexpr std::uint64_t kFlushCap = platform::kDeviceFlushPersistent;  // bit 39
constexpr int kFlushDefer = kCompletionAlways | kDeferDoorbell;
constexpr int kFlushQuiet = kCompletionOnError | kDeferDoorbell;
constexpr std::uint64_t kFlushChainOps = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_SEND;

// Exactly one doorbell so far, through the extended post API, of `len` work requests.
::testing::AssertionResult one_extended_chain(std::size_t len) {
    if (auto r = posted(1, len); !r) return r;
    if (!fake::sends()[0].extended) return ::testing::AssertionFailure() << "posted by ibv_post_send";
    return ::testing::AssertionSuccess();
}

void expect_flush(const fake::SendWr& w, std::uint64_t wr_id, unsigned flags, std::uint64_t addr,
                  std::uint64_t len) {
    EXPECT_EQ(w.opcode, kWrFlush);
    EXPECT_EQ(w.wr_id, wr_id);
    EXPECT_EQ(w.send_flags, flags);
    EXPECT_EQ(w.num_sge, 0);
    EXPECT_TRUE(w.sge.empty());
    EXPECT_EQ(w.remote_addr, addr);
    EXPECT_EQ(w.rkey, kRemoteRkey);
    EXPECT_EQ(w.flush_len, len);
    EXPECT_EQ(w.flush_type, kFlushPersistentType);  // IBV_FLUSH_PERSISTENT: durable, not only visible
    EXPECT_EQ(w.flush_level, kFlushRange);          // IBV_FLUSH_RANGE: the range, not the whole MR
}

TEST_F(NativeFlushTest, TheQueuePairIsMadeForFlushWhereTheDeviceReportsIt) {
    ASSERT_NO_FATAL_FAILURE(open({.cap_flags = kFlushCap}));
    ASSERT_EQ(fake::qp_attrs().size(), 1u);
    const auto& a = fake::qp_attrs()[0];
    EXPECT_NE(a.comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS, 0u);
    // FLUSH, and every opcode a chain holding one may carry (rxe installs
    // only the ibv_wr_* functions named here).
    EXPECT_EQ(a.send_ops_flags, kQpExWithFlush | kFlushChainOps);
    bool native = false;
    ASSERT_EQ(api.conn_native_flush(conn, &native), 0);
    EXPECT_TRUE(native);
    AtomicWriteKind kind{};
    ASSERT_EQ(api.conn_atomic_write_kind(conn, &kind), 0);
    EXPECT_EQ(kind, AtomicWriteKind::fenced_write);  // the device reports no atomic write
}

TEST_F(NativeFlushTest, AQueuePairRefusedWithFlushIsMadeWithoutAndHasNone) {
    // A provider that will not take FLUSH in a queue pair: with and without
    // inline data refused, then as on a device without FLUSH.
    fake::fail_next("create_qp_ex", EOPNOTSUPP, 2);
    ASSERT_NO_FATAL_FAILURE(open({.cap_flags = kFlushCap}));
    const auto& a = fake::qp_attrs();
    ASSERT_EQ(a.size(), 3u);
    EXPECT_EQ(a[0].send_ops_flags, kQpExWithFlush | kFlushChainOps);
    EXPECT_EQ(a[0].cap.max_inline_data, 64u);
    EXPECT_EQ(a[1].send_ops_flags, kQpExWithFlush | kFlushChainOps);
    EXPECT_EQ(a[1].cap.max_inline_data, 0u);
    EXPECT_EQ(a[2].comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS, 0u);
    bool native = true;
    ASSERT_EQ(api.conn_native_flush(conn, &native), 0);
    EXPECT_FALSE(native);
    EXPECT_EQ(api.flush_native(conn, remote, 0, 8, kFlushPersistent, kFlushDefer, tag(1)), kErrNoSupp);
}

// A responder executes a FLUSH only where its queue pair's access flags
// admit it; rdma_cm sets them without FLUSH, so they are added once the
// connection is established.
TEST_F(NativeFlushTest, OnceEstablishedTheQueuePairAdmitsFlushAsAResponder) {
    ASSERT_NO_FATAL_FAILURE(open({.cap_flags = kFlushCap}));
    const ibv_qp* qp = obj<ConnObj>(conn)->id->qp;
    const unsigned before = fake::qp_access(qp);
    EXPECT_EQ(before & (kAccessFlushGlobal | kAccessFlushPersistent), 0u);
    fake::queue_cm_event(conn_fd(), RDMA_CM_EVENT_ESTABLISHED);
    ConnEvent ev = kConnUndefined;
    ASSERT_EQ(api.conn_next_event(conn, &ev), 0);
    EXPECT_EQ(ev, kConnEstablished);
    EXPECT_EQ(fake::qp_access(qp), before | kAccessFlushGlobal | kAccessFlushPersistent);
    EXPECT_EQ(fake::count("modify_qp"), 1u);
    // Once: a second ESTABLISHED (none comes on a real device) changes nothing.
    fake::queue_cm_event(conn_fd(), RDMA_CM_EVENT_ESTABLISHED);
    ASSERT_EQ(api.conn_next_event(conn, &ev), 0);
    EXPECT_EQ(fake::count("modify_qp"), 1u);
}

TEST_F(NativeFlushTest, AQueuePairThatWillNotAdmitFlushLeavesTheConnectionWithout) {
    ASSERT_NO_FATAL_FAILURE(open({.cap_flags = kFlushCap}));
    fake::fail_next("modify_qp", EINVAL);
    fake::queue_cm_event(conn_fd(), RDMA_CM_EVENT_ESTABLISHED);
    ConnEvent ev = kConnUndefined;
    ASSERT_EQ(api.conn_next_event(conn, &ev), 0);
    EXPECT_EQ(ev, kConnEstablished);  // the connection stays up
    bool native = true;
    ASSERT_EQ(api.conn_native_flush(conn, &native), 0);
    EXPECT_FALSE(native);
    EXPECT_EQ(api.flush_native(conn, remote, 0, 8, kFlushPersistent, kFlushDefer, tag(1)), kErrNoSupp);
}

TEST_F(NativeFlushTest, WithoutFlushTheAccessFlagsAreLeftToRdmaCm) {
    ASSERT_NO_FATAL_FAILURE(open());
    fake::queue_cm_event(conn_fd(), RDMA_CM_EVENT_ESTABLISHED);
    ConnEvent ev = kConnUndefined;
    ASSERT_EQ(api.conn_next_event(conn, &ev), 0);
    EXPECT_EQ(fake::count("modify_qp"), 0u);
    EXPECT_EQ(fake::count("query_qp"), 0u);
}

TEST_F(NativeFlushTest, WithAtomicWriteTooBothAreNamed) {
    ASSERT_NO_FATAL_FAILURE(open({.cap_flags = kFlushCap | kAtomicWriteCap}));
    EXPECT_EQ(fake::qp_attrs().back().send_ops_flags, kQpExWithFlush | kFlushChainOps | IBV_QP_EX_WITH_ATOMIC_WRITE);
}

TEST_F(NativeFlushTest, APersistIsItsWritesAndOneFlushInOneChainOnlyTheFlushSignaled) {
    ASSERT_NO_FATAL_FAILURE(open({.cap_flags = kFlushCap}));
    // A persist of 300 bytes at 4096 in two writes, as the client queues it.
    ASSERT_EQ(api.write(conn, remote, 4096, mr, 0, 200, kFlushQuiet, tag(1)), 0);
    ASSERT_EQ(api.write(conn, remote, 4296, mr, 200, 100, kFlushQuiet, tag(2)), 0);
    ASSERT_EQ(api.flush_native(conn, remote, 4096, 300, kFlushPersistent, kFlushDefer, tag(3)), 0);
    EXPECT_TRUE(posted(0, 0)) << "a deferred request rang the doorbell";
    ASSERT_EQ(api.ring(conn), 0);
    ASSERT_TRUE(one_extended_chain(3));
    EXPECT_EQ(fake::count("post_send"), 0u);
    const auto& c = fake::sends()[0].chain;
    expect_wr(c[0], {1, IBV_WR_RDMA_WRITE, 0, 1, local_sge(0, 200), kRemoteAddr + 4096, kRemoteRkey});
    expect_wr(c[1], {2, IBV_WR_RDMA_WRITE, 0, 1, local_sge(200, 100), kRemoteAddr + 4296, kRemoteRkey});
    expect_flush(c[2], 3, kSig, kRemoteAddr + 4096, 300);
    ASSERT_EQ(api.ring(conn), 0);  // nothing left: no empty doorbell
    EXPECT_TRUE(one_extended_chain(3));
}

TEST_F(NativeFlushTest, InlineWritesKeepTheirBytesInTheExtendedChain) {
    ASSERT_NO_FATAL_FAILURE(open({.cap_flags = kFlushCap}));
    for (std::size_t i = 0; i < 16; ++i) buf[64 + i] = static_cast<char>('A' + i);
    ASSERT_EQ(api.write(conn, remote, 8, mr, 64, 16, kFlushQuiet, tag(1)), 0);
    ASSERT_EQ(api.flush_native(conn, remote, 8, 16, kFlushPersistent, kCompletionOnError, tag(2)), 0);
    ASSERT_TRUE(one_extended_chain(2));  // posted at once: no kDeferDoorbell on the FLUSH
    const auto& c = fake::sends()[0].chain;
    expect_wr(c[0], {1, IBV_WR_RDMA_WRITE, kInline, 1, local_sge(64, 16), kRemoteAddr + 8, kRemoteRkey});
    EXPECT_EQ(c[0].inline_data, std::vector<char>(buf.data() + 64, buf.data() + 80));
    expect_flush(c[1], 2, 0, kRemoteAddr + 8, 16);  // kCompletionOnError: unsignaled
}

TEST_F(NativeFlushTest, AChainWithoutFlushStillGoesByPostSend) {
    ASSERT_NO_FATAL_FAILURE(open({.cap_flags = kFlushCap}));
    ASSERT_EQ(api.write(conn, remote, 0, mr, 0, 100, kFlushDefer, tag(1)), 0);
    ASSERT_EQ(api.ring(conn), 0);
    ASSERT_EQ(api.flush_native(conn, remote, 0, 100, kFlushPersistent, kFlushDefer, tag(2)), 0);
    ASSERT_EQ(api.ring(conn), 0);
    ASSERT_TRUE(posted(2, 1));
    EXPECT_FALSE(fake::sends()[0].extended);
    EXPECT_TRUE(fake::sends()[1].extended);
    expect_flush(fake::sends()[1].chain[0], 2, kSig, kRemoteAddr, 100);
}

TEST_F(NativeFlushTest, AFencedAtomicWriteBehindAFlushKeepsItsFenceInTheExtendedChain) {
    ASSERT_NO_FATAL_FAILURE(open({.cap_flags = kFlushCap}));
    char value[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    ASSERT_EQ(api.flush_native(conn, remote, 0, 64, kFlushPersistent, kFlushDefer, tag(1)), 0);
    ASSERT_EQ(api.atomic_write(conn, remote, 64, value, kCompletionAlways, tag(2)), 0);
    ASSERT_TRUE(one_extended_chain(2));
    const auto& c = fake::sends()[0].chain;
    expect_flush(c[0], 1, kSig, kRemoteAddr, 64);
    EXPECT_EQ(c[1].opcode, IBV_WR_RDMA_WRITE);
    EXPECT_EQ(c[1].send_flags, kSig | kInline | kFence);
    EXPECT_EQ(c[1].inline_data, std::vector<char>(value, value + 8));
}

TEST_F(NativeFlushTest, RefusedInputNeverReachesTheDevice) {
    ASSERT_NO_FATAL_FAILURE(open({.cap_flags = kFlushCap}));
    EXPECT_EQ(api.flush_native(conn, remote, 0, 0, kFlushPersistent, kFlushDefer, tag(1)), kErrInval);  // empty
    EXPECT_EQ(api.flush_native(conn, remote, kRemoteSize - 8, 16, kFlushPersistent, kFlushDefer, tag(1)), kErrInval);
    EXPECT_EQ(api.flush_native(conn, remote, kRemoteSize + 8, 8, kFlushPersistent, kFlushDefer, tag(1)), kErrInval);
    EXPECT_EQ(api.flush_native(conn, remote, 0, 8, kFlushPersistent, 0, tag(1)), kErrInval);  // no completion flag
    EXPECT_EQ(api.flush_native(nullptr, remote, 0, 8, kFlushPersistent, kFlushDefer, tag(1)), kErrInval);
    EXPECT_EQ(api.flush_native(conn, nullptr, 0, 8, kFlushPersistent, kFlushDefer, tag(1)), kErrInval);
    ASSERT_EQ(api.ring(conn), 0);
    EXPECT_TRUE(posted(0, 0));
}

TEST_F(NativeFlushTest, ARegionNotRegisteredForPersistentFlushIsRefused) {
    // The server registers memory that is not PM without persistent flush.
    ASSERT_NO_FATAL_FAILURE(open({.cap_flags = kFlushCap, .remote_usage = kUsageWriteDst | kUsageReadSrc |
                                                                          kUsageFlushVisibility}));
    EXPECT_EQ(api.flush_native(conn, remote, 0, 8, kFlushPersistent, kFlushDefer, tag(1)), kErrNoSupp);
    ASSERT_EQ(api.ring(conn), 0);
    EXPECT_TRUE(posted(0, 0));
}

TEST_F(NativeFlushTest, WithoutTheDevicesFlushThereIsNone) {
    ASSERT_NO_FATAL_FAILURE(open());
    EXPECT_EQ(fake::qp_attrs().back().comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS, 0u);
    bool native = true;
    ASSERT_EQ(api.conn_native_flush(conn, &native), 0);
    EXPECT_FALSE(native);
    EXPECT_EQ(api.flush_native(conn, remote, 0, 8, kFlushPersistent, kFlushDefer, tag(1)), kErrNoSupp);
    ASSERT_EQ(api.ring(conn), 0);
    EXPECT_TRUE(posted(0, 0));
}

TEST_F(NativeFlushTest, ABuildWithoutIbvWrFlushHasNoneWhateverTheDeviceSays) {
    // Debian 12's rdma-core 44: real_verbs() has no post_chain_ex.
    api = make_api<&fake_verbs_without_flush>();
    ASSERT_NO_FATAL_FAILURE(open({.cap_flags = kFlushCap | kAtomicWriteCap}));
    EXPECT_EQ(fake::qp_attrs().back().send_ops_flags, IBV_QP_EX_WITH_ATOMIC_WRITE);  // as before
    bool native = true;
    ASSERT_EQ(api.conn_native_flush(conn, &native), 0);
    EXPECT_FALSE(native);
    EXPECT_EQ(api.flush_native(conn, remote, 0, 8, kFlushPersistent, kFlushDefer, tag(1)), kErrNoSupp);
    LocalMr* m = nullptr;
    ASSERT_EQ(api.mr_reg(peer, buf.data(), 512, kUsageWriteDst | kUsageReadSrc | kUsageFlushPersistent, &m), 0);
    EXPECT_EQ(fake::registrations().back().access & (kAccessFlushGlobal | kAccessFlushPersistent), 0);
    int usage = -1;
    ASSERT_EQ(api.mr_get_native_flush(m, &usage), 0);
    EXPECT_EQ(usage, 0);
    ASSERT_EQ(api.mr_dereg(&m), 0);
    EXPECT_EQ(fake::count("post_chain_ex"), 0u);
}

TEST_F(NativeFlushTest, AFailedChainIsDroppedAndNamesTheCall) {
    ASSERT_NO_FATAL_FAILURE(open({.cap_flags = kFlushCap}));
    ASSERT_EQ(api.write(conn, remote, 0, mr, 0, 100, kFlushQuiet, tag(1)), 0);
    ASSERT_EQ(api.flush_native(conn, remote, 0, 100, kFlushPersistent, kFlushDefer, tag(2)), 0);
    fake::fail_next("post_chain_ex", ENOMEM);
    const int ret = api.ring(conn);
    EXPECT_EQ(ret, kErrNoMem);
    EXPECT_NE(error_name(ret).find("ibv_wr_complete (a chain with FLUSH)"), std::string::npos) << error_name(ret);
    ASSERT_EQ(fake::sends().size(), 1u);
    EXPECT_EQ(fake::sends()[0].result, ENOMEM);
    // The chain is gone; the next goes alone, by post_send again.
    ASSERT_EQ(api.write(conn, remote, 0, mr, 0, 100, kFlushDefer, tag(3)), 0);
    ASSERT_EQ(api.ring(conn), 0);
    ASSERT_TRUE(posted(2, 1));
    EXPECT_FALSE(fake::sends()[1].extended);
}

// Registrations: PM memory (persistent-flush usage) on a device with FLUSH.

using NativeFlushMrTest = VerbsTest;

constexpr int kPmRegion = kUsageWriteDst | kUsageReadSrc | kUsageFlushVisibility | kUsageFlushPersistent;
constexpr int kPmRegionAccess = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ;

TEST_F(NativeFlushMrTest, PersistentFlushUsageTakesTheFlushAccess) {
    ASSERT_NO_FATAL_FAILURE(open({.cap_flags = kFlushCap}));
    LocalMr* m = nullptr;
    ASSERT_EQ(api.mr_reg(peer, buf.data(), 1024, kPmRegion, &m), 0);
    EXPECT_EQ(fake::registrations().back().access, kPmRegionAccess | kAccessFlushPersistent | kAccessFlushGlobal);
    int usage = 0;
    ASSERT_EQ(api.mr_get_native_flush(m, &usage), 0);
    EXPECT_EQ(usage, kUsageFlushPersistent);
    ASSERT_EQ(api.mr_dereg(&m), 0);
    // Memory registered without persistent flush (not PM) asks for no FLUSH access.
    ASSERT_EQ(api.mr_reg(peer, buf.data(), 1024, kPmRegion & ~kUsageFlushPersistent, &m), 0);
    EXPECT_EQ(fake::registrations().back().access, kPmRegionAccess);
    ASSERT_EQ(api.mr_get_native_flush(m, &usage), 0);
    EXPECT_EQ(usage, 0);
    ASSERT_EQ(api.mr_dereg(&m), 0);
}

TEST_F(NativeFlushMrTest, MemoryTheDeviceRefusesIsRegisteredWithoutNativeFlush) {
    ASSERT_NO_FATAL_FAILURE(open({.cap_flags = kFlushCap}));
    fake::config().refuse_flush_persistent = true;  // rxe: not every page is persistent memory
    const std::size_t tries = fake::count("reg_mr");
    LocalMr* m = nullptr;
    ASSERT_EQ(api.mr_reg(peer, buf.data(), 1024, kPmRegion, &m), 0);
    EXPECT_EQ(fake::count("reg_mr"), tries + 2);  // with the FLUSH access, then as before
    EXPECT_EQ(fake::registrations().back().access, kPmRegionAccess);
    int usage = -1;
    ASSERT_EQ(api.mr_get_native_flush(m, &usage), 0);
    EXPECT_EQ(usage, 0);
    ASSERT_EQ(api.mr_dereg(&m), 0);
}

TEST_F(NativeFlushMrTest, ThePlantedFaultLeavesPersistentOutButClaimsIt) {
    // RPM_FAULT=flush-global-only: the lab's control that a FLUSH the
    // memory does not admit fails on the wire.
    ASSERT_NO_FATAL_FAILURE(open({.cap_flags = kFlushCap}));
    ::setenv("RPM_FAULT", "flush-global-only", 1);
    LocalMr* m = nullptr;
    const int ret = api.mr_reg(peer, buf.data(), 1024, kPmRegion, &m);
    ::unsetenv("RPM_FAULT");
    ASSERT_EQ(ret, 0);
    EXPECT_EQ(fake::registrations().back().access, kPmRegionAccess | kAccessFlushGlobal);
    int usage = 0;
    ASSERT_EQ(api.mr_get_native_flush(m, &usage), 0);
    EXPECT_EQ(usage, kUsageFlushPersistent);
    ASSERT_EQ(api.mr_dereg(&m), 0);
}

} // namespace
} // namespace rpm::rdma::verbs::test
