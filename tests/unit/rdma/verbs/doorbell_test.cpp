// Doorbells (kDeferDoorbell queues, ring() posts the chain in one
// ibv_post_send), posting failures, and the input the data path refuses
// before anything reaches the device.
#include "fixture.hpp"

#include <cstdint>
#include <string>

namespace rpm::rdma::verbs::test {
namespace {

using DoorbellTest = VerbsTest;
using BadInputTest = VerbsTest;

constexpr int kDefer = kCompletionAlways | kDeferDoorbell;

TEST_F(DoorbellTest, DeferredRequestsWaitForRingThenGoAsOneChainInOrder) {
    ASSERT_NO_FATAL_FAILURE(open());
    const auto fb = flush_buffer();
    ASSERT_EQ(api.write(conn, remote, 0, mr, 0, 100, kCompletionOnError | kDeferDoorbell, tag(1)), 0);
    ASSERT_EQ(api.write(conn, remote, 100, mr, 100, 16, kDefer, tag(2)), 0);
    ASSERT_EQ(api.read(conn, mr, 2048, remote, 300, 64, kDefer, tag(3)), 0);
    ASSERT_EQ(api.send(conn, mr, 1024, 24, kDefer, tag(4)), 0);
    ASSERT_EQ(api.flush(conn, remote, 96, 20, kFlushPersistent, kDefer, tag(5)), 0);
    EXPECT_TRUE(posted(0, 0)) << "a deferred request rang the doorbell";

    ASSERT_EQ(api.ring(conn), 0);
    ASSERT_TRUE(posted(1, 5));
    const auto& c = fake::sends()[0].chain;
    expect_wr(c[0], {1, IBV_WR_RDMA_WRITE, 0, 1, local_sge(0, 100), kRemoteAddr, kRemoteRkey});
    expect_wr(c[1], {2, IBV_WR_RDMA_WRITE, kSig | kInline, 1, local_sge(100, 16), kRemoteAddr + 100, kRemoteRkey});
    expect_wr(c[2], {3, IBV_WR_RDMA_READ, kSig, 1, local_sge(2048, 64), kRemoteAddr + 300, kRemoteRkey});
    expect_wr(c[3], {4, IBV_WR_SEND, kSig | kInline, 1, local_sge(1024, 24), 0, 0});
    expect_wr(c[4], {5, IBV_WR_RDMA_READ, kSig, 1, {reinterpret_cast<std::uintptr_t>(fb.addr), 8, fb.lkey},
                     kRemoteAddr + 96, kRemoteRkey});

    ASSERT_EQ(api.ring(conn), 0);  // nothing left: no empty doorbell
    EXPECT_TRUE(posted(1, 5));
}

TEST_F(DoorbellTest, AnImmediateRequestTakesThePendingOnesAlongInOneCall) {
    ASSERT_NO_FATAL_FAILURE(open());
    ASSERT_EQ(api.write(conn, remote, 0, mr, 0, 200, kDefer, tag(1)), 0);
    ASSERT_EQ(api.write(conn, remote, 200, mr, 200, 200, kDefer, tag(2)), 0);
    EXPECT_TRUE(posted(0, 0));
    ASSERT_EQ(api.send(conn, mr, 3000, 100, kCompletionAlways, tag(3)), 0);
    ASSERT_TRUE(posted(1, 3));
    const auto& c = fake::sends()[0].chain;
    expect_wr(c[0], {1, IBV_WR_RDMA_WRITE, kSig, 1, local_sge(0, 200), kRemoteAddr, kRemoteRkey});
    expect_wr(c[1], {2, IBV_WR_RDMA_WRITE, kSig, 1, local_sge(200, 200), kRemoteAddr + 200, kRemoteRkey});
    expect_wr(c[2], {3, IBV_WR_SEND, kSig, 1, local_sge(3000, 100), 0, 0});
}

TEST_F(DoorbellTest, EachDoorbellStartsAFreshChain) {
    ASSERT_NO_FATAL_FAILURE(open());
    ASSERT_EQ(api.write(conn, remote, 0, mr, 0, 100, kDefer, tag(1)), 0);
    ASSERT_EQ(api.ring(conn), 0);
    ASSERT_EQ(api.read(conn, mr, 0, remote, 8, 100, kDefer, tag(2)), 0);
    ASSERT_EQ(api.ring(conn), 0);
    ASSERT_TRUE(posted(2, 1));
    expect_wr(fake::sends()[0].chain[0], {1, IBV_WR_RDMA_WRITE, kSig, 1, local_sge(0, 100), kRemoteAddr, kRemoteRkey});
    expect_wr(fake::sends()[1].chain[0],
              {2, IBV_WR_RDMA_READ, kSig, 1, local_sge(0, 100), kRemoteAddr + 8, kRemoteRkey});
}

TEST_F(DoorbellTest, ANativeAtomicWriteRingsThePendingChainFirst) {
    ASSERT_NO_FATAL_FAILURE(open({.cap_flags = kAtomicWriteCap}));
    ASSERT_EQ(api.write(conn, remote, 0, mr, 0, 100, kDefer, tag(1)), 0);
    ASSERT_EQ(api.read(conn, mr, 0, remote, 512, 100, kDefer, tag(2)), 0);
    fake::clear_calls();
    const char value[8] = {1, 1, 2, 3, 5, 8, 13, 21};
    // Even deferred: the extended post API cannot join a chain.
    ASSERT_EQ(api.atomic_write(conn, remote, 8, value, kDefer, tag(3)), 0);
    ASSERT_TRUE(posted(1, 2));
    expect_wr(fake::sends()[0].chain[0], {1, IBV_WR_RDMA_WRITE, kSig, 1, local_sge(0, 100), kRemoteAddr, kRemoteRkey});
    expect_wr(fake::sends()[0].chain[1],
              {2, IBV_WR_RDMA_READ, kSig, 1, local_sge(0, 100), kRemoteAddr + 512, kRemoteRkey});
    ASSERT_EQ(fake::atomic_writes().size(), 1u);
    EXPECT_EQ(fake::atomic_writes()[0].wr_id, 3u);
    EXPECT_EQ(fake::atomic_writes()[0].remote_addr, kRemoteAddr + 8);
    const long send_at = fake::index_of("post_send");
    ASSERT_GE(send_at, 0);
    EXPECT_GT(fake::index_of("post_atomic_write"), send_at) << "the atomic write overtook the chain before it";
    ASSERT_EQ(api.ring(conn), 0);
    EXPECT_TRUE(posted(1, 2));
}

TEST_F(DoorbellTest, ANativeAtomicWriteAloneRingsNothingElse) {
    ASSERT_NO_FATAL_FAILURE(open({.cap_flags = kAtomicWriteCap}));
    const char value[8] = {};
    ASSERT_EQ(api.atomic_write(conn, remote, 0, value, kCompletionAlways, tag(1)), 0);
    EXPECT_TRUE(posted(0, 0));
    EXPECT_EQ(fake::atomic_writes().size(), 1u);
}

TEST_F(DoorbellTest, AFencedAtomicWriteEndsThePendingChain) {
    ASSERT_NO_FATAL_FAILURE(open());
    ASSERT_EQ(api.write(conn, remote, 0, mr, 0, 100, kDefer, tag(1)), 0);
    const char value[8] = {7};
    ASSERT_EQ(api.atomic_write(conn, remote, 64, value, kDefer, tag(2)), 0);
    ASSERT_TRUE(posted(1, 2));
    expect_wr(fake::sends()[0].chain[0], {1, IBV_WR_RDMA_WRITE, kSig, 1, local_sge(0, 100), kRemoteAddr, kRemoteRkey});
    expect_wr(fake::sends()[0].chain[1], {2, IBV_WR_RDMA_WRITE, kSig | kInline | kFence, 1,
                                          {reinterpret_cast<std::uintptr_t>(value), 8, 0}, kRemoteAddr + 64,
                                          kRemoteRkey});
    EXPECT_TRUE(fake::atomic_writes().empty());
}

TEST_F(DoorbellTest, AFailedPostReportsNoMemoryAndDropsTheChain) {
    ASSERT_NO_FATAL_FAILURE(open());
    ASSERT_EQ(api.write(conn, remote, 0, mr, 0, 100, kDefer, tag(1)), 0);
    fake::fail_next("post_send", ENOMEM);
    const int ret = api.write(conn, remote, 100, mr, 100, 100, kCompletionAlways, tag(2));
    EXPECT_EQ(ret, kErrNoMem);
    const std::string why = error_name(ret);  // reading clears the reason: once
    EXPECT_NE(why.find("ibv_post_send"), std::string::npos) << why;
    ASSERT_TRUE(posted(1, 2));
    EXPECT_EQ(fake::sends()[0].result, ENOMEM);
    ASSERT_EQ(api.ring(conn), 0);  // the failed chain is not posted again
    EXPECT_TRUE(posted(1, 2));

    fake::fail_next("post_send", EINVAL);
    EXPECT_EQ(api.send(conn, mr, 0, 8, kCompletionAlways, tag(3)), kErrProvider);
}

TEST_F(DoorbellTest, FailedReceiveAndNativeAtomicWriteAreReported) {
    ASSERT_NO_FATAL_FAILURE(open({.cap_flags = kAtomicWriteCap}));
    fake::fail_next("post_recv", EINVAL);
    EXPECT_EQ(api.recv(conn, mr, 0, 64, tag(1)), kErrProvider);
    EXPECT_TRUE(fake::recvs().empty());
    fake::fail_next("post_atomic_write", EIO);
    const char value[8] = {};
    const int ret = api.atomic_write(conn, remote, 0, value, kCompletionAlways, tag(2));
    EXPECT_EQ(ret, kErrProvider);
    const std::string why = error_name(ret);  // reading clears the reason: once
    EXPECT_NE(why.find("atomic write"), std::string::npos) << why;
}

TEST_F(BadInputTest, OutOfRangeOffsetsAndLengthsPostNothing) {
    ASSERT_NO_FATAL_FAILURE(open());
    const char value[8] = {};
    constexpr std::size_t kMax = SIZE_MAX;
    struct Case {
        const char* what;
        int ret;
    };
    const Case cases[] = {
        {"write past the remote end", api.write(conn, remote, kRemoteSize - 10, mr, 0, 11, kDefer, tag(1))},
        {"write starting past the remote end", api.write(conn, remote, kRemoteSize + 1, mr, 0, 0, kDefer, tag(1))},
        {"write with wrapping dst_off", api.write(conn, remote, kMax, mr, 0, 2, kDefer, tag(1))},
        {"write past the local end", api.write(conn, remote, 0, mr, kBuf - 4, 5, kDefer, tag(1))},
        {"write with wrapping src_off", api.write(conn, remote, 0, mr, kMax, 1, kDefer, tag(1))},
        {"read past the remote end", api.read(conn, mr, 0, remote, kRemoteSize - 1, 2, kDefer, tag(1))},
        {"read past the local end", api.read(conn, mr, kBuf, remote, 0, 1, kDefer, tag(1))},
        {"send past the local end", api.send(conn, mr, kBuf - 1, 2, kDefer, tag(1))},
        {"send starting past the local end", api.send(conn, mr, kBuf + 1, 0, kDefer, tag(1))},
        {"recv past the local end", api.recv(conn, mr, kBuf - 8, 9, tag(1))},
        {"recv with wrapping offset", api.recv(conn, mr, kMax, 2, tag(1))},
        {"flush whose 8 bytes pass the end", api.flush(conn, remote, kRemoteSize - 4, 4, kFlushPersistent, kDefer,
                                                       tag(1))},
        {"flush past the end", api.flush(conn, remote, kRemoteSize, 0, kFlushPersistent, kDefer, tag(1))},
        {"atomic write past the end", api.atomic_write(conn, remote, kRemoteSize, value, kDefer, tag(1))},
    };
    for (const auto& c : cases) EXPECT_EQ(c.ret, kErrInval) << c.what;
    ASSERT_EQ(api.ring(conn), 0);
    EXPECT_TRUE(posted(0, 0));
    EXPECT_TRUE(fake::recvs().empty());
}

TEST_F(BadInputTest, RangesEndingExactlyAtTheEndAreTaken) {
    ASSERT_NO_FATAL_FAILURE(open());
    const char value[8] = {};
    EXPECT_EQ(api.write(conn, remote, kRemoteSize - 100, mr, kBuf - 100, 100, kDefer, tag(1)), 0);
    EXPECT_EQ(api.read(conn, mr, kBuf - 100, remote, kRemoteSize - 100, 100, kDefer, tag(2)), 0);
    EXPECT_EQ(api.flush(conn, remote, kRemoteSize - 8, 8, kFlushPersistent, kDefer, tag(3)), 0);
    EXPECT_EQ(api.atomic_write(conn, remote, kRemoteSize - 8, value, kDefer, tag(4)), 0);
    EXPECT_TRUE(posted(1, 4));
}

TEST_F(BadInputTest, LengthsBeyondThirtyTwoBitsAreRefused) {
    ASSERT_NO_FATAL_FAILURE(open());
    // An sge length is 32 bits: a 4 GiB transfer must not be truncated. The
    // fake registers without touching the memory, so the sizes are free.
    constexpr std::size_t kBig = std::size_t{1} << 33;
    LocalMr* big = nullptr;
    ASSERT_EQ(api.mr_reg(peer, buf.data(), kBig, kLocalUsage, &big), 0);
    RemoteMr* far = nullptr;
    const auto d = descriptor(kRemoteAddr, kBig, kRemoteRkey, kRemoteUsage);
    ASSERT_EQ(api.mr_remote_from_descriptor(d.data(), d.size(), &far), 0);
    constexpr std::size_t kLen = (std::size_t{1} << 32) + 1;
    EXPECT_EQ(api.write(conn, far, 0, big, 0, kLen, kCompletionAlways, tag(1)), kErrInval);
    EXPECT_EQ(api.read(conn, big, 0, far, 0, kLen, kCompletionAlways, tag(2)), kErrInval);
    EXPECT_EQ(api.send(conn, big, 0, kLen, kCompletionAlways, tag(3)), kErrInval);
    EXPECT_EQ(api.recv(conn, big, 0, kLen, tag(4)), kErrInval);
    EXPECT_TRUE(posted(0, 0));
    EXPECT_TRUE(fake::recvs().empty());
    EXPECT_EQ(api.mr_remote_delete(&far), 0);
    EXPECT_EQ(api.mr_dereg(&big), 0);
}

TEST_F(BadInputTest, AtomicWriteMustBeEightByteAligned) {
    ASSERT_NO_FATAL_FAILURE(open());
    const char value[8] = {};
    EXPECT_EQ(api.atomic_write(conn, remote, 4, value, kCompletionAlways, tag(1)), kErrInval);
    EXPECT_EQ(api.atomic_write(conn, remote, 12, value, kCompletionAlways, tag(1)), kErrInval);
    // The address counts, not the offset: a region starting 4 bytes off.
    RemoteMr* odd = nullptr;
    const auto d = descriptor(kRemoteAddr + 4, 64, kRemoteRkey, kRemoteUsage);
    ASSERT_EQ(api.mr_remote_from_descriptor(d.data(), d.size(), &odd), 0);
    EXPECT_EQ(api.atomic_write(conn, odd, 0, value, kCompletionAlways, tag(2)), kErrInval);
    EXPECT_TRUE(posted(0, 0));
    EXPECT_EQ(api.atomic_write(conn, odd, 4, value, kCompletionAlways, tag(3)), 0);
    ASSERT_TRUE(posted(1, 1));
    EXPECT_EQ(fake::sends()[0].chain[0].remote_addr, kRemoteAddr + 8);
    EXPECT_EQ(api.mr_remote_delete(&odd), 0);
}

TEST_F(BadInputTest, FlagsWithoutACompletionModeOrWithUnknownBitsAreRefused) {
    ASSERT_NO_FATAL_FAILURE(open());
    const char value[8] = {};
    for (const int f : {0, kDeferDoorbell, 1 << 1, (1 << 1) | kDeferDoorbell, kCompletionAlways | (1 << 3),
                        kCompletionOnError | (1 << 30), -1}) {
        SCOPED_TRACE("flags " + std::to_string(f));
        EXPECT_EQ(api.write(conn, remote, 0, mr, 0, 8, f, tag(1)), kErrInval);
        EXPECT_EQ(api.read(conn, mr, 0, remote, 0, 8, f, tag(1)), kErrInval);
        EXPECT_EQ(api.send(conn, mr, 0, 8, f, tag(1)), kErrInval);
        EXPECT_EQ(api.flush(conn, remote, 0, 8, kFlushPersistent, f, tag(1)), kErrInval);
        EXPECT_EQ(api.atomic_write(conn, remote, 0, value, f, tag(1)), kErrInval);
    }
    ASSERT_EQ(api.ring(conn), 0);
    EXPECT_TRUE(posted(0, 0));
}

TEST_F(BadInputTest, NullHandlesAreRefused) {
    ASSERT_NO_FATAL_FAILURE(open());
    const char value[8] = {};
    EXPECT_EQ(api.write(nullptr, remote, 0, mr, 0, 8, kCompletionAlways, tag(1)), kErrInval);
    EXPECT_EQ(api.write(conn, nullptr, 0, mr, 0, 8, kCompletionAlways, tag(1)), kErrInval);
    EXPECT_EQ(api.write(conn, remote, 0, nullptr, 0, 8, kCompletionAlways, tag(1)), kErrInval);
    EXPECT_EQ(api.read(conn, nullptr, 0, remote, 0, 8, kCompletionAlways, tag(1)), kErrInval);
    EXPECT_EQ(api.send(conn, nullptr, 0, 8, kCompletionAlways, tag(1)), kErrInval);
    EXPECT_EQ(api.recv(conn, nullptr, 0, 8, tag(1)), kErrInval);
    EXPECT_EQ(api.flush(conn, nullptr, 0, 8, kFlushPersistent, kCompletionAlways, tag(1)), kErrInval);
    EXPECT_EQ(api.atomic_write(conn, remote, 0, nullptr, kCompletionAlways, tag(1)), kErrInval);
    EXPECT_EQ(api.atomic_write(nullptr, remote, 0, value, kCompletionAlways, tag(1)), kErrInval);
    EXPECT_EQ(api.ring(nullptr), kErrInval);
    EXPECT_TRUE(posted(0, 0));
}

} // namespace
} // namespace rpm::rdma::verbs::test
