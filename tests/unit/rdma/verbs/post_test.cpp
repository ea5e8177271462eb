// Every data-path call's work request, field by field: opcode, flags,
// scatter/gather entry, remote address and key, and wr_id (the caller's
// context, which comes back in the completion).
#include "fixture.hpp"


namespace rpm::rdma::verbs::test {
namespace {

using PostTest = VerbsTest;

std::vector<char> bytes(const char* p, std::size_t n) { return {p, p + n}; }

TEST_F(PostTest, SignaledWriteCarriesEveryField) {
    ASSERT_NO_FATAL_FAILURE(open());
    ASSERT_EQ(api.write(conn, remote, 256, mr, 128, 100, kCompletionAlways, tag(0x11)), 0);
    ASSERT_TRUE(posted(1, 1));
    // 100 bytes: above the 64 granted, so the device reads them by DMA.
    expect_wr(fake::sends()[0].chain[0],
              {0x11, IBV_WR_RDMA_WRITE, kSig, 1, local_sge(128, 100), kRemoteAddr + 256, kRemoteRkey});
}

TEST_F(PostTest, CompletionOnErrorWriteIsUnsignaled) {
    ASSERT_NO_FATAL_FAILURE(open());
    ASSERT_EQ(api.write(conn, remote, 0, mr, 0, 200, kCompletionOnError, tag(0x12)), 0);
    ASSERT_TRUE(posted(1, 1));
    expect_wr(fake::sends()[0].chain[0],
              {0x12, IBV_WR_RDMA_WRITE, 0, 1, local_sge(0, 200), kRemoteAddr, kRemoteRkey});
}

TEST_F(PostTest, WriteGoesInlineUpToTheGrantedSizeOnly) {
    // Asked for 64, granted 32: the grant decides.
    ASSERT_NO_FATAL_FAILURE(open({.granted_inline = 32}));
    for (std::size_t i = 0; i < kBuf; ++i) buf[i] = static_cast<char>(i * 7);
    ASSERT_EQ(api.write(conn, remote, 8, mr, 40, 32, kCompletionAlways, tag(1)), 0);
    ASSERT_EQ(api.write(conn, remote, 8, mr, 40, 33, kCompletionAlways, tag(2)), 0);
    ASSERT_TRUE(posted(2, 1));
    const auto& in = fake::sends()[0].chain[0];
    expect_wr(in, {1, IBV_WR_RDMA_WRITE, kSig | kInline, 1, local_sge(40, 32), kRemoteAddr + 8, kRemoteRkey});
    EXPECT_EQ(in.inline_data, bytes(buf.data() + 40, 32));
    expect_wr(fake::sends()[1].chain[0],
              {2, IBV_WR_RDMA_WRITE, kSig, 1, local_sge(40, 33), kRemoteAddr + 8, kRemoteRkey});
}

TEST_F(PostTest, WriteGoesInlineUpToALargerGrant) {
    ASSERT_NO_FATAL_FAILURE(open({.granted_inline = 128}));
    ASSERT_EQ(api.write(conn, remote, 0, mr, 0, 128, kCompletionOnError, tag(3)), 0);
    ASSERT_TRUE(posted(1, 1));
    expect_wr(fake::sends()[0].chain[0],
              {3, IBV_WR_RDMA_WRITE, kInline, 1, local_sge(0, 128), kRemoteAddr, kRemoteRkey});
}

TEST_F(PostTest, EmptyWriteHasNoScatterEntry) {
    ASSERT_NO_FATAL_FAILURE(open());
    ASSERT_EQ(api.write(conn, remote, 64, mr, 0, 0, kCompletionAlways, tag(4)), 0);
    ASSERT_TRUE(posted(1, 1));
    expect_wr(fake::sends()[0].chain[0], {4, IBV_WR_RDMA_WRITE, kSig, 0, {}, kRemoteAddr + 64, kRemoteRkey});
}

TEST_F(PostTest, ReadCarriesEveryFieldAndIsNeverInline) {
    ASSERT_NO_FATAL_FAILURE(open());
    ASSERT_EQ(api.read(conn, mr, 64, remote, 4096, 512, kCompletionAlways, tag(0x22)), 0);
    ASSERT_EQ(api.read(conn, mr, 8, remote, 16, 16, kCompletionOnError, tag(0x23)), 0);
    ASSERT_TRUE(posted(2, 1));
    expect_wr(fake::sends()[0].chain[0],
              {0x22, IBV_WR_RDMA_READ, kSig, 1, local_sge(64, 512), kRemoteAddr + 4096, kRemoteRkey});
    expect_wr(fake::sends()[1].chain[0],
              {0x23, IBV_WR_RDMA_READ, 0, 1, local_sge(8, 16), kRemoteAddr + 16, kRemoteRkey});
}

TEST_F(PostTest, SmallSendGoesInline) {
    ASSERT_NO_FATAL_FAILURE(open());
    for (std::size_t i = 0; i < 48; ++i) buf[512 + i] = static_cast<char>('a' + i % 26);  // a control frame
    ASSERT_EQ(api.send(conn, mr, 512, 48, kCompletionAlways, tag(0x33)), 0);
    ASSERT_TRUE(posted(1, 1));
    const auto& w = fake::sends()[0].chain[0];
    expect_wr(w, {0x33, IBV_WR_SEND, kSig | kInline, 1, local_sge(512, 48), 0, 0});
    EXPECT_EQ(w.inline_data, bytes(buf.data() + 512, 48));
}

TEST_F(PostTest, LargeSendGoesFromRegisteredMemory) {
    ASSERT_NO_FATAL_FAILURE(open());
    ASSERT_EQ(api.send(conn, mr, 1024, 1000, kCompletionOnError, tag(0x34)), 0);
    ASSERT_EQ(api.send(conn, mr, 0, 65, kCompletionAlways, tag(0x35)), 0);
    ASSERT_TRUE(posted(2, 1));
    expect_wr(fake::sends()[0].chain[0], {0x34, IBV_WR_SEND, 0, 1, local_sge(1024, 1000), 0, 0});
    expect_wr(fake::sends()[1].chain[0], {0x35, IBV_WR_SEND, kSig, 1, local_sge(0, 65), 0, 0});
}

TEST_F(PostTest, PersistentFlushIsAnEightByteReadIntoTheFlushBuffer) {
    ASSERT_NO_FATAL_FAILURE(open());
    const auto fb = flush_buffer();
    EXPECT_EQ(fb.access & IBV_ACCESS_LOCAL_WRITE, IBV_ACCESS_LOCAL_WRITE);  // the read lands there
    // The length does not matter: one read orders every earlier write.
    ASSERT_EQ(api.flush(conn, remote, 512, 4096, kFlushPersistent, kCompletionAlways, tag(0x44)), 0);
    ASSERT_TRUE(posted(1, 1));
    expect_wr(fake::sends()[0].chain[0], {0x44, IBV_WR_RDMA_READ, kSig, 1,
                                          {reinterpret_cast<std::uintptr_t>(fb.addr), 8, fb.lkey},
                                          kRemoteAddr + 512, kRemoteRkey});
}

TEST_F(PostTest, VisibilityFlushIsTheSameRead) {
    ASSERT_NO_FATAL_FAILURE(open({.direct = false}));  // visibility needs no direct write
    const auto fb = flush_buffer();
    ASSERT_EQ(api.flush(conn, remote, kRemoteSize - 8, 8, kFlushVisibility, kCompletionOnError, tag(0x45)), 0);
    ASSERT_TRUE(posted(1, 1));
    expect_wr(fake::sends()[0].chain[0], {0x45, IBV_WR_RDMA_READ, 0, 1,
                                          {reinterpret_cast<std::uintptr_t>(fb.addr), 8, fb.lkey},
                                          kRemoteAddr + kRemoteSize - 8, kRemoteRkey});
}

TEST_F(PostTest, PersistentFlushNeedsThePeerToDeclareDirectWrite) {
    ASSERT_NO_FATAL_FAILURE(open({.direct = false}));
    EXPECT_EQ(api.flush(conn, remote, 0, 8, kFlushPersistent, kCompletionAlways, tag(1)), kErrNoSupp);
    EXPECT_TRUE(posted(0, 0));
}

TEST_F(PostTest, PersistentFlushNeedsAnAppliedPeerCfg) {
    ASSERT_NO_FATAL_FAILURE(open({.apply_peer_cfg = false}));
    EXPECT_EQ(api.flush(conn, remote, 0, 8, kFlushPersistent, kCompletionAlways, tag(1)), kErrNoSupp);
    EXPECT_EQ(api.ring(conn), 0);
    EXPECT_TRUE(posted(0, 0));
}

TEST_F(PostTest, FlushNeedsTheRemoteUsageForItsType) {
    ASSERT_NO_FATAL_FAILURE(open({.remote_usage = kUsageWriteDst | kUsageFlushVisibility}));
    EXPECT_EQ(api.flush(conn, remote, 0, 8, kFlushPersistent, kCompletionAlways, tag(1)), kErrNoSupp);
    EXPECT_TRUE(posted(0, 0));
    EXPECT_EQ(api.flush(conn, remote, 0, 8, kFlushVisibility, kCompletionAlways, tag(2)), 0);
    EXPECT_TRUE(posted(1, 1));

    RemoteMr* plain = nullptr;
    const auto d = descriptor(kRemoteAddr, kRemoteSize, kRemoteRkey, kUsageWriteDst | kUsageReadSrc);
    ASSERT_EQ(api.mr_remote_from_descriptor(d.data(), d.size(), &plain), 0);
    EXPECT_EQ(api.flush(conn, plain, 0, 8, kFlushVisibility, kCompletionAlways, tag(3)), kErrNoSupp);
    EXPECT_EQ(api.flush(conn, plain, 0, 8, kFlushPersistent, kCompletionAlways, tag(4)), kErrNoSupp);
    EXPECT_TRUE(posted(1, 1));
    EXPECT_EQ(api.mr_remote_delete(&plain), 0);
}

TEST_F(PostTest, AtomicWriteWithoutTheDeviceCapIsAFencedInlineWrite) {
    ASSERT_NO_FATAL_FAILURE(open());
    ASSERT_EQ(fake::qp_attrs().size(), 1u);
    EXPECT_EQ(fake::qp_attrs()[0].comp_mask, unsigned{IBV_QP_INIT_ATTR_PD});  // no extended send ops
    AtomicWriteKind kind{};
    ASSERT_EQ(api.conn_atomic_write_kind(conn, &kind), 0);
    EXPECT_EQ(kind, AtomicWriteKind::fenced_write);

    char value[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    ASSERT_EQ(api.atomic_write(conn, remote, 16, value, kCompletionAlways, tag(0x55)), 0);
    ASSERT_TRUE(posted(1, 1));
    const auto& w = fake::sends()[0].chain[0];
    expect_wr(w, {0x55, IBV_WR_RDMA_WRITE, kSig | kInline | kFence, 1,
                  {reinterpret_cast<std::uintptr_t>(value), 8, 0}, kRemoteAddr + 16, kRemoteRkey});
    EXPECT_EQ(w.inline_data, bytes(value, 8));
    EXPECT_TRUE(fake::atomic_writes().empty());

    ASSERT_EQ(api.atomic_write(conn, remote, 24, value, kCompletionOnError, tag(0x56)), 0);
    ASSERT_TRUE(posted(2, 1));
    EXPECT_EQ(fake::sends()[1].chain[0].send_flags, kInline | kFence);
}

TEST_F(PostTest, AtomicWriteWithTheDeviceCapIsNative) {
    ASSERT_NO_FATAL_FAILURE(open({.cap_flags = kAtomicWriteCap}));
    ASSERT_EQ(fake::qp_attrs().size(), 1u);
    const auto& a = fake::qp_attrs()[0];
    EXPECT_NE(a.comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS, 0u);
    EXPECT_NE(a.comp_mask & IBV_QP_INIT_ATTR_PD, 0u);
    EXPECT_NE(a.send_ops_flags & IBV_QP_EX_WITH_ATOMIC_WRITE, 0u);
    AtomicWriteKind kind{};
    ASSERT_EQ(api.conn_atomic_write_kind(conn, &kind), 0);
    EXPECT_EQ(kind, AtomicWriteKind::native);

    char value[8] = {9, 8, 7, 6, 5, 4, 3, 2};
    ASSERT_EQ(api.atomic_write(conn, remote, 32, value, kCompletionAlways, tag(0x57)), 0);
    ASSERT_EQ(api.atomic_write(conn, remote, 40, value, kCompletionOnError, tag(0x58)), 0);
    EXPECT_TRUE(posted(0, 0));
    ASSERT_EQ(fake::atomic_writes().size(), 2u);
    const auto& w = fake::atomic_writes()[0];
    EXPECT_EQ(w.wr_id, 0x57u);
    EXPECT_EQ(w.wr_flags, kSig);
    EXPECT_EQ(w.rkey, kRemoteRkey);
    EXPECT_EQ(w.remote_addr, kRemoteAddr + 32);
    EXPECT_EQ(bytes(w.value.data(), 8), bytes(value, 8));
    EXPECT_EQ(fake::atomic_writes()[1].wr_flags, 0u);
    EXPECT_EQ(fake::atomic_writes()[1].remote_addr, kRemoteAddr + 40);
}

TEST_F(PostTest, FencedAtomicWriteNeedsInlineData) {
    ASSERT_NO_FATAL_FAILURE(open({.granted_inline = 4}));
    char value[8] = {};
    EXPECT_EQ(api.atomic_write(conn, remote, 0, value, kCompletionAlways, tag(1)), kErrNoSupp);
    EXPECT_TRUE(posted(0, 0));
    EXPECT_TRUE(fake::atomic_writes().empty());
}

TEST_F(PostTest, RecvCarriesEveryField) {
    ASSERT_NO_FATAL_FAILURE(open());
    ASSERT_EQ(api.recv(conn, mr, 1024, 256, tag(0x66)), 0);
    ASSERT_NO_FATAL_FAILURE(expect_one_recv(0x66, local_sge(1024, 256)));
    EXPECT_TRUE(posted(0, 0));  // receives never ring the send queue's doorbell
}

} // namespace
} // namespace rpm::rdma::verbs::test
