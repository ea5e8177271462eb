// The transport's pieces without a fabric: the bounce ring, the operation
// queue's ordering and resource rules, and control-frame parsing.
#include "transport/rdma/buffers.hpp"
#include "transport/rdma/frames.hpp"
#include "transport/rdma/op_queue.hpp"

#include <gtest/gtest.h>

namespace rpm::rdma {
namespace {

TEST(RdmaBounceRing, ReservesAlignedAndReleasesInOrder) {
    BounceRing ring(1024);
    auto a = ring.reserve(100);
    auto b = ring.reserve(100);
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->offset, 0u);
    EXPECT_EQ(b->offset, 128u);  // 64-byte aligned
    EXPECT_EQ(ring.in_use(), 256u);
    ring.release(a->end);
    EXPECT_EQ(ring.in_use(), 128u);
    ring.release(b->end);
    EXPECT_EQ(ring.in_use(), 0u);
}

TEST(RdmaBounceRing, RefusesWhenFullAndNeverSplitsAReservation) {
    BounceRing ring(1024);
    auto a = ring.reserve(640);
    ASSERT_TRUE(a);
    EXPECT_FALSE(ring.reserve(512));  // only 384 free
    auto b = ring.reserve(256);
    ASSERT_TRUE(b);
    EXPECT_EQ(b->offset, 640u);
    ring.release(a->end);
    // 640 free at the start, 128 at the end: a 512-byte reservation skips the tail.
    auto c = ring.reserve(512);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->offset, 0u);
    // Free now: [512, 640) only; the skipped tail counts until b is released.
    auto d = ring.reserve(64);
    ASSERT_TRUE(d);
    EXPECT_EQ(d->offset, 512u);
    EXPECT_FALSE(ring.reserve(128));
    ring.release(b->end);
    ring.release(c->end);
    ring.release(d->end);
    auto whole = ring.reserve(1024);  // an empty ring starts over at 0
    ASSERT_TRUE(whole);
    EXPECT_EQ(whole->offset, 0u);
    EXPECT_FALSE(ring.reserve(0));
    EXPECT_FALSE(BounceRing(64).reserve(65));
}

Op op_of(OpKind k, std::uint64_t len = 0) {
    Op op;
    op.kind = k;
    op.length = len;
    return op;
}

TEST(RdmaOpQueue, PostsInOrderAndHoldsBackEverythingBehindAWaitingOp) {
    OpQueue q(/*credits=*/8, /*bounce=*/1024, /*slots=*/1);
    std::vector<std::uint64_t> posted;
    auto post = [&](Op& op) {
        posted.push_back(op.seq);
        return std::error_code{};
    };
    q.push(op_of(OpKind::write, 1024));  // fills the bounce buffer
    q.push(op_of(OpKind::write, 64));    // must wait for space
    q.push(op_of(OpKind::flush));        // needs no space, but must not overtake
    q.pump(post);
    EXPECT_EQ(posted, (std::vector<std::uint64_t>{1}));
    q.settle(*q.find(1), {});
    q.retire_wr(*q.find(1));
    auto done = q.take_finished();  // releases the bounce space
    ASSERT_EQ(done.size(), 1u);
    q.pump(post);
    EXPECT_EQ(posted, (std::vector<std::uint64_t>{1, 2, 3}));
}

TEST(RdmaOpQueue, CreditsBoundTheWorkRequestsInFlight) {
    OpQueue q(2, 1024, 1);
    int posts = 0;
    auto post = [&](Op&) {
        ++posts;
        return std::error_code{};
    };
    for (int i = 0; i < 4; ++i) q.push(op_of(OpKind::atomic_write));
    q.pump(post);
    EXPECT_EQ(posts, 2);
    EXPECT_EQ(q.credits(), 0u);
    q.retire_wr(*q.find(1));
    q.pump(post);
    EXPECT_EQ(posts, 3);
}

TEST(RdmaOpQueue, CallbacksComeOutInPostingOrderWhateverOrderCompletionsArrive) {
    OpQueue q(8, 1024, 2);
    auto post = [](Op&) { return std::error_code{}; };
    q.push(op_of(OpKind::write, 8));
    q.push(op_of(OpKind::request));
    q.push(op_of(OpKind::atomic_write));
    q.pump(post);
    q.settle(*q.find(3), {});
    EXPECT_TRUE(q.take_finished().empty());
    Op* req = q.find(2);
    q.settle(*req, {});  // the reply before the send's own completion
    EXPECT_FALSE(req->finished);
    q.settle(*req, {});
    q.settle(*q.find(1), {});
    auto done = q.take_finished();
    ASSERT_EQ(done.size(), 3u);
    EXPECT_EQ(done[0].seq, 1u);
    EXPECT_EQ(done[1].seq, 2u);
    EXPECT_EQ(done[2].seq, 3u);
}

TEST(RdmaOpQueue, AFailedPostFailsOnlyThatOpAndGivesItsResourcesBack) {
    OpQueue q(1, 1024, 1);
    auto post = [](Op& op) { return op.seq == 1 ? std::error_code(errc::io_error) : std::error_code{}; };
    q.push(op_of(OpKind::request));
    q.push(op_of(OpKind::request));
    q.pump(post);
    EXPECT_EQ(q.credits(), 0u);  // the second one holds it
    auto done = q.take_finished();
    ASSERT_EQ(done.size(), 1u);
    EXPECT_EQ(done[0].ec, errc::io_error);
    EXPECT_TRUE(q.find(2)->posted);
}

TEST(RdmaOpQueue, FailAllFinishesPostedAndQueuedOpsWithTheError) {
    OpQueue q(1, 1024, 1);
    q.push(op_of(OpKind::write, 16));
    q.push(op_of(OpKind::write, 16));  // no credit: stays queued
    q.pump([](Op&) { return std::error_code{}; });
    q.fail_all(errc::io_error);
    auto done = q.take_finished();
    ASSERT_EQ(done.size(), 2u);
    for (const auto& op : done) EXPECT_EQ(op.ec, errc::io_error);
    EXPECT_EQ(q.credits(), 1u);
    EXPECT_EQ(q.ring().in_use(), 0u);
}

TEST(RdmaOpQueue, ErrorsAndEmptyOpsFinishWhenQueued) {
    OpQueue q(1, 1024, 1);
    Op bad = op_of(OpKind::atomic_write);
    bad.ec = errc::invalid_argument;
    q.push(std::move(bad));
    q.push(op_of(OpKind::none));
    auto done = q.take_finished();
    ASSERT_EQ(done.size(), 2u);
    EXPECT_EQ(done[0].ec, errc::invalid_argument);
    EXPECT_FALSE(done[1].ec);
}

std::vector<std::byte> frame_of(std::uint32_t rid) {
    std::vector<std::byte> f;
    proto::encode(f, rid, proto::Response{0, "ok", {}});
    return f;
}

TEST(RdmaFrames, AMessageIsExactlyOneFrame) {
    auto f = frame_of(7);
    auto parsed = parse_frame(f, 4096);
    ASSERT_TRUE(parsed) << parsed.error().message();
    EXPECT_EQ(parsed->first.request_id, 7u);
    EXPECT_EQ(parsed->first.type, proto::Type::response);
    auto longer = f;
    longer.push_back(std::byte{0});
    EXPECT_FALSE(parse_frame(longer, 4096));
    EXPECT_FALSE(parse_frame(std::span(f).first(10), 4096));
    EXPECT_FALSE(parse_frame(f, 20));  // larger than the slot allows
}

TEST(RdmaFrames, ResponsesCarryRpmErrorCodes) {
    auto f = error_frame(3, Error(errc::permission_denied, "no"));
    auto parsed = parse_frame(f, 4096);
    ASSERT_TRUE(parsed);
    EXPECT_EQ(response_status(parsed->first, parsed->second), errc::permission_denied);
    auto e = unexpected_reply(parsed->first, parsed->second, "Region");
    EXPECT_EQ(e.code(), errc::permission_denied);
    EXPECT_EQ(e.detail(), "no");
    auto ok = response_frame(4, {});
    auto p2 = parse_frame(ok, 4096);
    ASSERT_TRUE(p2);
    EXPECT_FALSE(response_status(p2->first, p2->second));
}

} // namespace
} // namespace rpm::rdma
