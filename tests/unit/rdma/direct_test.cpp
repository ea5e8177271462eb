// A read or write on an idle connection goes direct (client_direct.cpp):
// posted at once, signaled, with its own tag, outside the op queue, when the
// queue holds nothing unfinished (a synchronous call's, a callback's). The
// work request it posts, field by field; posting order against what other
// threads queue meanwhile; a failed post; a connection lost under it; every
// completion mode. Persists: direct_persist_test.cpp.
#include "support.hpp"

#include <atomic>
#include <functional>
#include <thread>

namespace rpm::rdma::test {
namespace {

class Direct : public ModeTest {
protected:
    void SetUp() override {
        ModeTest::SetUp();
        // The device's bounce pool fills in the background: until it has
        // an entry, a call's operation queues and waits for one.
        ASSERT_TRUE(eventually([&] { return client_pools(*h_)->bounce().stats().free_global > 0; }));
    }
    Result<void> sync_read(std::uint64_t at, std::span<std::byte> out, std::chrono::milliseconds timeout = 5s) {
        return t_->call([&](client::Done d) { t_->read(g_, at, out, std::move(d)); }, timeout);
    }
    Result<void> sync_write(std::uint64_t at, std::span<const std::byte> data) {
        return t_->call([&](client::Done d) { t_->write(g_, at, data, std::move(d)); }, 5s);
    }
    std::uint32_t bounce_in_use() const { return client_pools(*h_)->bounce().stats().in_use; }
    // A read (`read`, with a 60 s timeout) on another thread, the connection
    // lost while it is on the wire: it must fail with io_error at once, not
    // at its timeout.
    void expect_read_fails_when_lost(const std::function<Result<void>(std::span<std::byte>)>& read) {
        h_->fabric.hold_client_completions(true);
        std::vector<std::byte> out(8);
        const auto reads_before = h_->fabric.reads().size();
        std::atomic<bool> returned{false};
        Result<void> r;
        std::thread caller([&] {
            r = read(out);
            returned = true;
        });
        // Not ASSERT: the caller must be joined whatever happens.
        EXPECT_TRUE(eventually([&] { return h_->fabric.reads().size() > reads_before; }));
        h_->fabric.drop_all();
        const bool in_time = eventually([&] { return returned.load(); }, 20s);
        h_->fabric.hold_client_completions(false);
        caller.join();
        EXPECT_TRUE(in_time) << "the call waited for its timeout, not for the connection's failure";
        EXPECT_EQ(code_of(r), errc::io_error);
        // The read's error says what went: the connection, not a timeout.
        EXPECT_TRUE(detail_has(r, "read over rdma://" + std::string(kHost) + ":"));
        EXPECT_TRUE(detail_has(r, ": the connection failed: "));
        EXPECT_TRUE(detail_lacks(r, "timeout"));
    }
};

TEST_P(Direct, ASynchronousWriteIsOneSignaledWorkRequestPostedAtOnce) {
    const auto data = bytes_of("direct write");
    const auto before = h_->fabric.writes().size();
    ASSERT_TRUE(ok(sync_write(4096, data)));
    const auto writes = h_->fabric.writes();
    ASSERT_EQ(writes.size(), before + 1);
    const auto& w = writes.back();
    EXPECT_EQ(w.ctx, direct_ctx()) << "the call's write went through the op queue";
    // Signaled, and rung by the post itself (no chain to join).
    EXPECT_EQ(w.flags, kCompletionAlways);
    EXPECT_EQ(w.dst_offset, 4096u);
    EXPECT_EQ(w.len, data.size());
    EXPECT_EQ(w.src_offset, 0u);
    EXPECT_TRUE(is_bounce_entry(*h_, w.src));
    EXPECT_EQ(w.data, data);
    EXPECT_TRUE(std::equal(data.begin(), data.end(), remote_->bytes().begin() + 4096));
    EXPECT_EQ(bounce_in_use(), 0u) << "the entry was not given back";
}

TEST_P(Direct, ASynchronousReadIsOneSignaledWorkRequestAndCopiesOut) {
    const auto want = bytes_of("remote bytes");
    std::copy(want.begin(), want.end(), remote_->bytes().begin() + 512);
    std::vector<std::byte> got(want.size());
    ASSERT_TRUE(ok(sync_read(512, got)));
    EXPECT_EQ(got, want);
    const auto reads = h_->fabric.reads();
    ASSERT_FALSE(reads.empty());
    const auto& r = reads.back();
    EXPECT_EQ(r.ctx, direct_ctx()) << "the call's read went through the op queue";
    EXPECT_EQ(r.flags, kCompletionAlways);
    EXPECT_EQ(r.src_offset, 512u);
    EXPECT_EQ(r.len, want.size());
    EXPECT_EQ(r.dst_offset, 0u);
    EXPECT_TRUE(is_bounce_entry(*h_, r.dst));
    EXPECT_EQ(bounce_in_use(), 0u) << "the entry was not given back";
}

TEST_P(Direct, RegisteredMemoryIsReadIntoWithoutABounceEntry) {
    std::vector<std::byte> app(1 << 12);
    auto reg = t_->register_memory(app);
    ASSERT_TRUE(reg) << reg.error().message();
    const auto want = bytes_of("zero copy");
    std::copy(want.begin(), want.end(), remote_->bytes().begin() + 64);
    ASSERT_TRUE(ok(sync_read(64, std::span(app).subspan(100, want.size()))));
    EXPECT_TRUE(std::equal(want.begin(), want.end(), app.begin() + 100));
    const auto r = h_->fabric.reads().back();
    EXPECT_EQ(r.ctx, direct_ctx());
    EXPECT_EQ(r.dst->ptr, app.data()) << "not read into the application's registration";
    EXPECT_EQ(r.dst_offset, 100u);
}

// One direct operation at a time, and only on an empty queue: what the
// start posts after it queues behind it, and so do the chunks of a large one.
TEST_P(Direct, TheCallsSecondOperationAndChunkedOnesQueue) {
    const auto a = bytes_of("first"), b = bytes_of("second");
    ASSERT_TRUE(ok(t_->call(
        [&](client::Done d) {
            t_->write(g_, 0, a, nullptr);
            t_->write(g_, 64, b, std::move(d));
        },
        5s)));
    auto writes = h_->fabric.writes();
    ASSERT_GE(writes.size(), 2u);
    EXPECT_EQ(writes[writes.size() - 2].ctx, direct_ctx());
    EXPECT_NE(writes.back().ctx, direct_ctx()) << "a second operation of one call went direct";
    EXPECT_TRUE(std::equal(b.begin(), b.end(), remote_->bytes().begin() + 64));
    std::vector<std::byte> big(kMaxChunk + 10, std::byte{7});
    ASSERT_TRUE(ok(sync_write(1 << 16, big)));
    writes = h_->fabric.writes();
    EXPECT_NE(writes.back().ctx, direct_ctx()) << "a write of two chunks went direct";
    EXPECT_EQ(remote_->bytes()[(1 << 16) + kMaxChunk + 9], std::byte{7});
}

// Another thread's operations, queued while the call's own is on the wire,
// are posted behind it and have their callbacks run after its.
TEST_P(Direct, OperationsQueuedMeanwhileFinishAfterIt) {
    h_->fabric.hold_client_completions(true);
    std::mutex mu;
    std::vector<int> order;
    std::vector<std::byte> out(8);
    const auto reads_before = h_->fabric.reads().size();
    std::thread caller([&] {
        const auto r = t_->call(
            [&](client::Done d) {
                t_->read(g_, 0, out, [&, d = std::move(d)](Result<void> e) {
                    {
                        std::lock_guard lock(mu);
                        order.push_back(1);
                    }
                    d(std::move(e));
                });
            },
            5s);
        EXPECT_TRUE(ok(r));
    });
    ASSERT_TRUE(eventually([&] { return h_->fabric.reads().size() > reads_before; }));
    Waiter w;
    const auto data = bytes_of("queued");
    t_->write(g_, 128, data, [&, d = w.done()](Result<void> e) {
        {
            std::lock_guard lock(mu);
            order.push_back(2);
        }
        d(std::move(e));
    });
    ASSERT_TRUE(eventually([&] { return h_->fabric.writes().size() > 0 && h_->fabric.writes().back().data == data; }))
        << "the queued write was not posted while the direct read was on the wire";
    h_->fabric.hold_client_completions(false);
    h_->fabric.release_held();
    caller.join();
    EXPECT_FALSE(w.get());
    std::lock_guard lock(mu);
    EXPECT_EQ(order, (std::vector<int>{1, 2})) << "callbacks out of posting order";
}

// Not only synchronous calls: a callback-API read on an idle connection goes
// direct, and so does the next operation a callback issues (queue depth 1,
// as rpm-bench drives it), the callbacks on the thread that polls.
TEST_P(Direct, CallbackOperationsGoDirectToo) {
    const auto want = bytes_of("callback read");
    std::copy(want.begin(), want.end(), remote_->bytes().begin() + 256);
    std::vector<std::byte> got(want.size());
    const auto data = bytes_of("issued by a callback");
    Waiter w;
    t_->read(g_, 256, got, [&, d = w.done()](Result<void> e) {
        if (!e.has_value()) return d(std::move(e));
        t_->write(g_, 1024, data, d);
    });
    ASSERT_FALSE(w.get());
    EXPECT_EQ(got, want);
    EXPECT_EQ(h_->fabric.reads().back().ctx, direct_ctx()) << "the callback API's read went through the queue";
    const auto w2 = h_->fabric.writes().back();
    EXPECT_EQ(w2.ctx, direct_ctx()) << "the write a callback issued went through the queue";
    EXPECT_EQ(w2.flags, kCompletionAlways);
    EXPECT_TRUE(std::equal(data.begin(), data.end(), remote_->bytes().begin() + 1024));
    EXPECT_EQ(bounce_in_use(), 0u);
}

// A callback-API operation whose post fails gets its callback (on the
// polling thread, which the failure wakes), and the connection stays.
TEST_P(Direct, AFailedPostOfACallbackOperationCallsBack) {
    h_->fabric.fail_next("rpma_write", kErrInval);
    Waiter w;
    t_->write(g_, 0, bytes_of("refused"), w.done());
    const auto ec = w.get();
    EXPECT_TRUE(ec) << "a failed post was reported as success";
    EXPECT_NE(ec, std::make_error_code(std::errc::timed_out)) << "its callback never ran";
    EXPECT_EQ(bounce_in_use(), 0u) << "the failed post kept its entry";
    Waiter again;
    t_->write(g_, 0, bytes_of("accepted"), again.done());
    EXPECT_FALSE(again.get()) << "the connection did not survive a failed post";
}

// The same from a callback the I/O thread runs: it delivers no second
// round for a direct post (ClientConn::deliver_round), so the failed
// post's own wake-up (direct_post_failed_locked) must bring its callback.
TEST_P(Direct, AFailedPostOfAnOperationACallbackIssuedCallsBack) {
    h_->fabric.hold_client_completions(true);
    const auto writes = h_->fabric.writes().size();
    Waiter first, second;
    const auto rec = bytes_of("refused");
    t_->write(g_, 0, bytes_of("first"), [&, d = first.done()](Result<void> r) {
        d(std::move(r));
        t_->write(g_, 0, rec, second.done());
    });
    ASSERT_TRUE(eventually([&] { return h_->fabric.writes().size() > writes; }));
    h_->fabric.fail_next("rpma_write", kErrInval);
    h_->fabric.hold_client_completions(false);
    h_->fabric.release_held();
    EXPECT_FALSE(first.get());
    const auto ec = second.get();
    EXPECT_TRUE(ec) << "a failed post was reported as success";
    EXPECT_NE(ec, std::make_error_code(std::errc::timed_out)) << "its callback never ran";
    EXPECT_EQ(bounce_in_use(), 0u) << "the failed post kept its entry";
}

// A post that fails fails the call, as in the queue; the connection stays.
TEST_P(Direct, AFailedPostFailsTheCallNotTheConnection) {
    h_->fabric.fail_next("rpma_read", kErrInval);
    std::vector<std::byte> out(8);
    EXPECT_FALSE(sync_read(0, out).has_value()) << "a failed post was reported as success";
    EXPECT_EQ(bounce_in_use(), 0u) << "the failed post kept its entry";
    EXPECT_TRUE(ok(sync_read(0, out))) << "the connection did not survive a failed post";
}

// Lost while its read is on the wire: the call fails at once, not at its
// timeout, and the entry the device may still write stays out of the pool
// until the queue pair is gone.
TEST_P(Direct, AConnectionLostUnderIt) {
    expect_read_fails_when_lost([&](std::span<std::byte> out) { return sync_read(0, out, 60s); });
    EXPECT_EQ(bounce_in_use(), 1u) << "the entry of a read still on the wire went back to the pool";
    const auto pools = client_pools(*h_);  // outlives the connection now
    t_.reset();
    EXPECT_EQ(pools->bounce().stats().in_use, 0u) << "the entry was not given back with the queue pair";
}

// A completion already in the queue when the connection's loss is seen is
// the operation's outcome: polled with the event (or by on_event), it is
// handled before the failure. In event mode both wake the I/O thread at
// once; handling the failure first would fail a read that completed.
TEST_P(Direct, ACompletionQueuedBeforeTheLossCounts) {
    const auto want = bytes_of("read before the loss");
    std::copy(want.begin(), want.end(), remote_->bytes().begin() + 512);
    h_->fabric.hold_client_completions(true);
    std::vector<std::byte> got(want.size());
    const auto reads_before = h_->fabric.reads().size();
    Waiter w;
    t_->read(g_, 512, got, w.done());
    ASSERT_TRUE(eventually([&] { return h_->fabric.reads().size() > reads_before; }));
    h_->fabric.release_held_then_drop_all();
    h_->fabric.hold_client_completions(false);
    EXPECT_FALSE(w.get()) << "the loss failed a read whose completion was already in the queue";
    EXPECT_EQ(got, want);
}

// The public synchronous read and write (RemoteRegion, through
// Transport::read_now / write_now): direct, the call's outcome set by the
// operation itself, with no callback (ClientConn::transfer_now).
TEST_P(Direct, ANowReadAndWriteGoDirectWithoutACallback) {
    const auto data = bytes_of("written now");
    ASSERT_TRUE(ok(t_->write_now(g_, 2048, data, 5s)));
    const auto w = h_->fabric.writes().back();
    EXPECT_EQ(w.ctx, direct_ctx()) << "the write went through the op queue";
    EXPECT_EQ(w.flags, kCompletionAlways);
    EXPECT_EQ(w.dst_offset, 2048u);
    EXPECT_EQ(w.data, data);
    EXPECT_TRUE(std::equal(data.begin(), data.end(), remote_->bytes().begin() + 2048));
    std::vector<std::byte> got(data.size());
    ASSERT_TRUE(ok(t_->read_now(g_, 2048, got, 5s)));
    EXPECT_EQ(got, data);
    const auto r = h_->fabric.reads().back();
    EXPECT_EQ(r.ctx, direct_ctx()) << "the read went through the op queue";
    EXPECT_EQ(r.src_offset, 2048u);
    EXPECT_EQ(r.len, data.size());
    EXPECT_EQ(bounce_in_use(), 0u) << "an entry was not given back";
    // Again: the second call's outcome is its own, not the first's.
    const auto more = bytes_of("and again");
    ASSERT_TRUE(ok(t_->write_now(g_, 4096, more, 5s)));
    std::vector<std::byte> got2(more.size());
    ASSERT_TRUE(ok(t_->read_now(g_, 4096, got2, 5s)));
    EXPECT_EQ(got2, more);
}

TEST_P(Direct, ANowCallsFailedPostFailsItNotTheConnection) {
    h_->fabric.fail_next("rpma_read", kErrInval);
    std::vector<std::byte> out(8);
    EXPECT_FALSE(t_->read_now(g_, 0, out, 5s).has_value()) << "a failed post was reported as success";
    EXPECT_EQ(bounce_in_use(), 0u) << "the failed post kept its entry";
    EXPECT_TRUE(ok(t_->read_now(g_, 0, out, 5s))) << "the connection did not survive a failed post";
}

// Another thread's operation on the wire: the call's read queues behind it,
// takes a callback as any queued operation, and returns the remote bytes
// after that operation's callback has run.
TEST_P(Direct, ANowReadBehindAnotherThreadsOperationQueues) {
    const auto want = bytes_of("behind a write");
    std::copy(want.begin(), want.end(), remote_->bytes().begin() + 640);
    h_->fabric.hold_client_completions(true);
    const auto writes_before = h_->fabric.writes().size();
    std::atomic<bool> write_done{false};
    Waiter w;
    t_->write(g_, 8192, bytes_of("first"), [&, d = w.done()](Result<void> e) {
        write_done = true;
        d(std::move(e));
    });
    ASSERT_TRUE(eventually([&] { return h_->fabric.writes().size() > writes_before; }));
    const auto reads_before = h_->fabric.reads().size();
    std::vector<std::byte> got(want.size());
    Result<void> r;
    bool saw_write_done = false;
    std::thread caller([&] {
        r = t_->read_now(g_, 640, got, 5s);
        saw_write_done = write_done.load();
    });
    // Not ASSERT: the caller must be joined whatever happens.
    const bool posted = eventually([&] { return h_->fabric.reads().size() > reads_before; });
    EXPECT_TRUE(posted) << "the call's read was never posted";
    if (posted) {
        EXPECT_NE(h_->fabric.reads().back().ctx, direct_ctx()) << "a read went direct past an operation on the wire";
    }
    h_->fabric.hold_client_completions(false);
    h_->fabric.release_held();
    caller.join();
    EXPECT_TRUE(ok(r));
    EXPECT_EQ(got, want);
    EXPECT_TRUE(saw_write_done) << "the read returned before the write posted ahead of it had called back";
    EXPECT_FALSE(w.get());
}

// No completion: the call ends at its timeout with io_error and closes the
// connection (Transport::call's contract); lost under it, it fails at once.
TEST_P(Direct, ANowReadEndsAtItsTimeoutOrTheConnectionsLoss) {
    h_->fabric.hold_client_completions(true);
    std::vector<std::byte> out(8);
    const auto t0 = std::chrono::steady_clock::now();
    const auto r = t_->read_now(g_, 0, out, 200ms);
    EXPECT_EQ(code_of(r), errc::io_error);
    const auto waited = std::chrono::steady_clock::now() - t0;
    EXPECT_GE(waited, 150ms) << "it gave up before its timeout";
    EXPECT_LT(waited, 20s) << "it did not give up at its timeout";
    EXPECT_TRUE(detail_has(r, "no answer within the timeout (200 ms)"));
    EXPECT_FALSE(t_->read_now(g_, 0, out, 5s).has_value()) << "the connection was not closed by the timeout";
    h_->fabric.hold_client_completions(false);
}

TEST_P(Direct, ANowReadLostUnderItFailsAtOnce) {
    expect_read_fails_when_lost([&](std::span<std::byte> out) { return t_->read_now(g_, 0, out, 60s); });
    EXPECT_EQ(bounce_in_use(), 1u) << "the entry of a read still on the wire went back to the pool";
}

INSTANTIATE_TEST_SUITE_P(Modes, Direct,
                         ::testing::Values(CompletionMode::busy, CompletionMode::adaptive, CompletionMode::event),
                         [](const ::testing::TestParamInfo<CompletionMode>& p) { return std::string(to_string(p.param)); });

} // namespace
} // namespace rpm::rdma::test
