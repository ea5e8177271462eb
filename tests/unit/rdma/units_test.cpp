// The transport's pieces without a fabric: the operation queue's ordering
// and resource rules (bounce entries from an MrPool), and control-frame
// parsing.
#include "transport/rdma/buffers.hpp"
#include "transport/rdma/frames.hpp"
#include "transport/rdma/op_queue.hpp"

#include <rpm/mr_pool.hpp>

#include <gtest/gtest.h>

#include <memory>

namespace rpm::rdma {
namespace {

// A pool whose "registration" is only counted: `entries` of 4 KiB, all
// registered up front, none ever added (budget == initial).
struct NullRegistrar final : MrRegistrar {
    Result<void*> register_memory(std::span<std::byte> mem) override { return static_cast<void*>(mem.data()); }
    void deregister_memory(void*, std::span<std::byte>) noexcept override {}
    [[nodiscard]] std::string device() const override { return "null"; }
};

MrPool fixed_pool(std::uint32_t entries) {
    MrPoolOptions o;
    o.buffer_size = 4096;
    o.budget = entries;
    o.initial = entries;
    o.floor = entries;
    o.l1_entries = entries;
    auto p = MrPool::create(std::make_unique<NullRegistrar>(), o);
    EXPECT_TRUE(p) << p.error().message();
    return std::move(*p);
}

std::vector<Op> take_finished(OpQueue& q) {
    std::vector<Op> out;
    q.take_finished([&](Op& op) { out.push_back(std::move(op)); });
    return out;
}

Op op_of(OpKind k, std::uint64_t len = 0) {
    Op op;
    op.kind = k;
    op.length = len;
    return op;
}

TEST(RdmaOpQueue, PostsInOrderAndHoldsBackEverythingBehindAWaitingOp) {
    auto pool = fixed_pool(1);
    auto user = pool.create_user();
    ASSERT_TRUE(user);
    OpQueue q(/*credits=*/8, /*slots=*/1);
    q.use_bounce(&*user);
    std::vector<std::uint64_t> posted;
    std::vector<MrBuffer*> entries;
    auto post = [&](Op& op) {
        posted.push_back(op.seq);
        entries.push_back(op.bounce);
        return std::error_code{};
    };
    q.push(op_of(OpKind::write, 1024));  // takes the only bounce entry
    q.push(op_of(OpKind::read, 64));     // must wait for one
    q.push(op_of(OpKind::flush));        // needs none, but must not overtake
    q.pump(post);
    EXPECT_EQ(posted, (std::vector<std::uint64_t>{1}));
    EXPECT_TRUE(q.starved());
    EXPECT_EQ(pool.stats().none_now, 1u);
    q.settle(*q.find(1), {});
    q.retire_wr(*q.find(1));
    auto done = take_finished(q);  // gives the entry back
    ASSERT_EQ(done.size(), 1u);
    EXPECT_EQ(done[0].bounce, nullptr);
    q.pump(post);
    EXPECT_FALSE(q.starved());
    EXPECT_EQ(posted, (std::vector<std::uint64_t>{1, 2, 3}));
    ASSERT_EQ(entries.size(), 3u);
    EXPECT_NE(entries[0], nullptr);
    EXPECT_EQ(entries[1], entries[0]);  // the same entry, back from the pool
    EXPECT_EQ(entries[2], nullptr);     // a flush holds none
    EXPECT_EQ(q.bounce_held(), 1u);
}

TEST(RdmaOpQueue, EachWriteOrReadHoldsItsOwnEntry) {
    auto pool = fixed_pool(3);
    auto user = pool.create_user();
    ASSERT_TRUE(user);
    OpQueue q(8, 1);
    q.use_bounce(&*user);
    std::vector<MrBuffer*> entries;
    for (int i = 0; i < 3; ++i) q.push(op_of(i == 1 ? OpKind::read : OpKind::write, 4096));
    q.pump([&](Op& op) {
        entries.push_back(op.bounce);
        return std::error_code{};
    });
    ASSERT_EQ(entries.size(), 3u);
    EXPECT_NE(entries[0], entries[1]);
    EXPECT_NE(entries[1], entries[2]);
    EXPECT_NE(entries[0], entries[2]);
    EXPECT_EQ(pool.stats().in_use, 3u);
    for (std::uint64_t s = 1; s <= 3; ++s) {
        q.settle(*q.find(s), {});
        q.retire_wr(*q.find(s));
    }
    EXPECT_EQ(take_finished(q).size(), 3u);
    EXPECT_EQ(pool.stats().in_use, 0u);
}

TEST(RdmaOpQueue, CreditsBoundTheWorkRequestsInFlight) {
    OpQueue q(2, 1);
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

// A request goes unsignaled (with credits to spare): its reply finishes it,
// but its send-queue credit comes back only with a later completion.
TEST(RdmaOpQueue, AnUnsignaledRequestFinishesWithItsReplyAndItsCreditWaitsForACompletion) {
    OpQueue q(8, 2);
    auto post = [](Op&) { return std::error_code{}; };
    q.push(op_of(OpKind::request));
    q.push(op_of(OpKind::atomic_write));
    q.pump(post);
    Op* req = q.find(1);
    ASSERT_TRUE(req->unsignaled);
    EXPECT_FALSE(q.find(2)->unsignaled);
    EXPECT_EQ(q.credits(), 6u);
    q.settle(*req, {});  // the reply
    EXPECT_TRUE(req->finished);
    q.retire_unsignaled_before(1, /*completion=*/false);
    EXPECT_EQ(take_finished(q).size(), 1u);
    EXPECT_EQ(q.credits(), 6u);  // the send queue may still hold it
    Op* atomic = q.find(2);
    q.retire_wr(*atomic);
    q.retire_unsignaled_before(2);
    EXPECT_EQ(q.credits(), 8u);
    q.settle(*atomic, {});
    EXPECT_EQ(take_finished(q).size(), 1u);
}

// A direct persist's send went unsignaled: its two credits wait, in
// posting order, for the completion of something posted after it, as a
// queued request's do; and only while fewer than signal_every_ wait.
TEST(RdmaOpQueue, ADirectOperationsDeferredCreditsComeBackWithALaterCompletion) {
    OpQueue q(8, 2);  // signal_every_ = 4
    auto post = [](Op&) { return std::error_code{}; };
    q.push(op_of(OpKind::request));  // seq 1: unsignaled, one credit waits
    q.pump(post);
    ASSERT_TRUE(q.find(1)->unsignaled);
    q.settle(*q.find(1), {});  // its reply
    EXPECT_EQ(take_finished(q).size(), 1u);
    EXPECT_TRUE(q.may_go_unsignaled(2));  // 1 + 2 < 4
    OpQueue::DirectHold hold;
    ASSERT_TRUE(q.take_direct(2, false, true, hold));
    q.defer_direct(hold);
    EXPECT_EQ(hold.credits, 0u);
    EXPECT_FALSE(q.may_go_unsignaled(2)) << "the next direct persist must go signaled";
    EXPECT_TRUE(q.may_go_unsignaled(0));
    q.end_direct(hold, false);  // its Response: the slot comes back, the credits do not
    EXPECT_EQ(q.credits(), 5u);
    EXPECT_EQ(q.slots().free_count(), 2u);
    // A completion of what came before it (seq 1's, had it been signaled)
    // gives back nothing posted after that.
    q.retire_unsignaled_before(1);
    EXPECT_EQ(q.credits(), 5u);
    // A later op's completion (or a later direct one's: its before_seq is
    // 2) gives back all three.
    q.push(op_of(OpKind::atomic_write));  // seq 2
    q.pump(post);
    Op* later = q.find(2);
    q.retire_wr(*later);
    q.retire_unsignaled_before(2);
    EXPECT_EQ(q.credits(), 8u);
    EXPECT_TRUE(q.may_go_unsignaled(2));
}

TEST(RdmaOpQueue, CallbacksComeOutInPostingOrderWhateverOrderCompletionsArrive) {
    auto pool = fixed_pool(1);
    auto user = pool.create_user();
    ASSERT_TRUE(user);
    OpQueue q(3, 2);  // three credits: every request is signaled (OpQueue::unsignaled)
    q.use_bounce(&*user);
    auto post = [](Op&) { return std::error_code{}; };
    q.push(op_of(OpKind::write, 8));
    q.push(op_of(OpKind::request));
    q.push(op_of(OpKind::atomic_write));
    q.pump(post);
    q.settle(*q.find(3), {});
    EXPECT_TRUE(take_finished(q).empty());
    Op* req = q.find(2);
    q.settle(*req, {});  // the reply before the send's own completion
    EXPECT_FALSE(req->finished);
    q.settle(*req, {});
    q.settle(*q.find(1), {});
    auto done = take_finished(q);
    ASSERT_EQ(done.size(), 3u);
    EXPECT_EQ(done[0].seq, 1u);
    EXPECT_EQ(done[1].seq, 2u);
    EXPECT_EQ(done[2].seq, 3u);
}

TEST(RdmaOpQueue, AFailedPostFailsOnlyThatOpAndGivesItsResourcesBack) {
    auto pool = fixed_pool(1);
    auto user = pool.create_user();
    ASSERT_TRUE(user);
    OpQueue q(1, 1);
    q.use_bounce(&*user);
    auto post = [](Op& op) { return op.seq <= 2 ? std::error_code(errc::io_error) : std::error_code{}; };
    q.push(op_of(OpKind::request));
    q.push(op_of(OpKind::write, 16));
    q.push(op_of(OpKind::write, 16));  // posts with the entry the failed write gave back
    q.pump(post);
    EXPECT_EQ(q.credits(), 0u);  // the third one holds it
    auto done = take_finished(q);
    ASSERT_EQ(done.size(), 2u);
    EXPECT_EQ(done[0].ec, errc::io_error);
    EXPECT_EQ(done[1].ec, errc::io_error);
    EXPECT_TRUE(q.find(3)->posted);
    EXPECT_NE(q.find(3)->bounce, nullptr);
    EXPECT_EQ(pool.stats().in_use, 1u);
}

TEST(RdmaOpQueue, FailAllKeepsEntriesOfUncompletedWorkRequestsAside) {
    auto pool = fixed_pool(2);
    auto user = pool.create_user();
    ASSERT_TRUE(user);
    OpQueue q(1, 1);
    q.use_bounce(&*user);
    q.push(op_of(OpKind::write, 16));
    q.push(op_of(OpKind::write, 16));  // no credit: stays queued, holds no entry
    q.pump([](Op&) { return std::error_code{}; });
    q.fail_all(errc::io_error);
    auto done = take_finished(q);
    ASSERT_EQ(done.size(), 2u);
    for (const auto& op : done) EXPECT_EQ(op.ec, errc::io_error);
    EXPECT_EQ(q.credits(), 1u);
    // The posted write never completed: the RNIC may still read its entry
    // until the queue pair is gone, so it does not go back yet.
    EXPECT_EQ(q.bounce_held(), 1u);
    EXPECT_EQ(pool.stats().in_use, 1u);
    q.release_buffers();
    EXPECT_EQ(q.bounce_held(), 0u);
    EXPECT_EQ(pool.stats().in_use, 0u);
}

TEST(RdmaOpQueue, ErrorsAndEmptyOpsFinishWhenQueued) {
    OpQueue q(1, 1);
    Op bad = op_of(OpKind::atomic_write);
    bad.ec = errc::invalid_argument;
    q.push(std::move(bad));
    q.push(op_of(OpKind::none));
    auto done = take_finished(q);
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
    std::vector<std::byte> ok;
    proto::encode(ok, 4, proto::Response{});
    auto p2 = parse_frame(ok, 4096);
    ASSERT_TRUE(p2);
    EXPECT_FALSE(response_status(p2->first, p2->second));
}

} // namespace
} // namespace rpm::rdma
