// Synchronous calls poll the completion queue on the caller's thread
// (client_drive.cpp), in every completion mode; the I/O thread, parked
// meanwhile, comes back for whatever outlives a call or arrives without one.
#include "support.hpp"

#include <atomic>
#include <thread>

namespace rpm::rdma::test {
namespace {

class Drive : public ModeTest {
protected:
    void tune(ServerOptions& o) override {
        o.on_message = [this](std::uint64_t s, std::span<const std::byte>) { session_ = s; };
    }
    // A synchronous write through call(): its status, and the thread its callback ran on.
    std::pair<Result<void>, std::thread::id> sync_write(std::uint64_t at, std::span<const std::byte> data,
                                                        std::chrono::milliseconds timeout = 5s) {
        // Shared: after a timeout the callback runs later, on another thread.
        auto ran = std::make_shared<std::atomic<std::thread::id>>();
        auto r = t_->call(
            [&](client::Done d) {
                t_->write(g_, at, data, [ran, d = std::move(d)](Result<void> e) {
                    ran->store(std::this_thread::get_id());
                    d(std::move(e));
                });
            },
            timeout);
        return {std::move(r), ran->load()};
    }
    // A synchronous call during which the I/O thread parks; nothing is left
    // over, so it stays parked after the call.
    void park_io_thread() {
        const auto& conn = dynamic_cast<const RdmaClient&>(*t_).conn();
        const auto data = bytes_of("park");
        ASSERT_TRUE(ok(t_->call(
            [&](client::Done d) {
                EXPECT_TRUE(eventually([&] { return conn.io_thread_parked(); })) << "the I/O thread did not park";
                t_->write(g_, 0, data, std::move(d));
            },
            5s)));
        EXPECT_TRUE(conn.io_thread_parked());
    }
    std::atomic<std::uint64_t> session_{0};
};

TEST_P(Drive, ACallsCallbackRunsOnTheCallingThread) {
    const auto data = bytes_of("driven");
    for (int i = 0; i < 20; ++i) {
        const auto [r, ran] = sync_write(static_cast<std::uint64_t>(i) * 8, data);
        ASSERT_TRUE(ok(r)) << i;
        EXPECT_EQ(ran, std::this_thread::get_id()) << "call " << i << " was completed by another thread";
    }
    EXPECT_EQ(std::memcmp(h_->targets["pm"]->bytes().data() + 152, data.data(), data.size()), 0);
}

TEST_P(Drive, AnAsynchronousOperationAfterACallCompletesWithoutAnother) {
    park_io_thread();
    // Only the submission can wake the parked I/O thread, whether the write
    // goes direct (client_direct.cpp) or, behind an operation on the wire,
    // through the queue.
    Waiter w;
    t_->write(g_, 64, bytes_of("later"), w.done());
    EXPECT_FALSE(w.get(5s)) << "an asynchronous write after a synchronous call never completed";
    EXPECT_EQ(h_->fabric.writes().back().ctx, direct_ctx());
    park_io_thread();
    DirectHeld held(*h_, *t_, g_);
    Waiter queued;
    t_->write(g_, 128, bytes_of("queued"), queued.done());
    EXPECT_FALSE(held.release());
    EXPECT_FALSE(queued.get(5s)) << "a queued write after a synchronous call never completed";
    EXPECT_NE(h_->fabric.writes().back().ctx, direct_ctx());
}

TEST_P(Drive, ARecvAfterACallGetsTheServersMessage) {
    const auto ping = bytes_of("ping");
    ASSERT_TRUE(ok(t_->call([&](client::Done d) { t_->send(ping, std::move(d)); }, 5s)));
    ASSERT_TRUE(eventually([&] { return session_.load() != 0; }));
    park_io_thread();
    // Only the recv() can wake the parked I/O thread to watch for the message.
    std::vector<std::byte> in(16);
    auto got = std::make_shared<std::promise<Result<std::size_t>>>();
    t_->recv(in, [got](Result<std::size_t> r) { got->set_value(std::move(r)); });
    const auto pong = bytes_of("pong");
    ASSERT_TRUE(h_->listener->send(session_, pong));
    auto f = got->get_future();
    ASSERT_EQ(f.wait_for(5s), std::future_status::ready) << "a recv() after a synchronous call was never served";
    const auto n = f.get();
    ASSERT_TRUE(ok(n));
    EXPECT_EQ(*n, pong.size());
}

// A synchronous read spins on the CQ for its own completion first
// (ClientConn::spin_own); a message that comes meanwhile has its recv()
// callback run by the call, on the calling thread, while the read is still
// on the wire, and the read then returns its bytes.
TEST_P(Drive, AMessageDuringASynchronousReadIsHandedOutByTheCall) {
    const auto ping = bytes_of("ping");
    ASSERT_TRUE(ok(t_->call([&](client::Done d) { t_->send(ping, std::move(d)); }, 5s)));
    ASSERT_TRUE(eventually([&] { return session_.load() != 0; }));
    const auto want = bytes_of("read back");
    std::copy(want.begin(), want.end(), remote_->bytes().begin() + 768);
    std::vector<std::byte> in(16);
    std::atomic<bool> got_message{false};
    std::atomic<std::thread::id> recv_ran{};
    t_->recv(in, [&](Result<std::size_t> r) {
        recv_ran = std::this_thread::get_id();
        got_message = r.has_value();
    });
    h_->fabric.hold_client_completions(true);
    // About 10 s of empty polls in the call's spin (in busy and adaptive
    // mode), so that the message comes during it.
    h_->fabric.empty_poll_delay = 10ms;
    const auto reads_before = h_->fabric.reads().size();
    std::vector<std::byte> got(want.size());
    Result<void> r;
    std::atomic<std::thread::id> caller_id{};
    std::thread caller([&] {
        caller_id = std::this_thread::get_id();
        r = t_->read_now(g_, 768, got, 10s);
    });
    // Not ASSERT: the caller must be joined whatever happens.
    EXPECT_TRUE(eventually([&] { return h_->fabric.reads().size() > reads_before; })) << "the read was never posted";
    EXPECT_TRUE(h_->listener->send(session_, bytes_of("pong")));
    EXPECT_TRUE(eventually([&] { return got_message.load(); }, 2s))
        << "the message waited for the read's completion (or was never handed out)";
    h_->fabric.empty_poll_delay = 0ms;
    h_->fabric.hold_client_completions(false);
    h_->fabric.release_held();
    caller.join();
    EXPECT_TRUE(ok(r));
    EXPECT_EQ(got, want);
    EXPECT_EQ(recv_ran.load(), caller_id.load()) << "the recv() callback did not run on the calling thread";
}

TEST_P(Drive, OtherThreadsOperationsDuringCallsAllComplete) {
    constexpr int kEach = 150;
    std::atomic<int> async_ok{0}, async_failed{0};
    // Lives until every write has completed: a write's span is read when it is posted.
    const auto async_data = bytes_of("async");
    std::thread other([&] {
        const auto& data = async_data;
        for (int i = 0; i < kEach; ++i)
            t_->write(g_, 4096 + static_cast<std::uint64_t>(i % 64) * 8, data,
                      [&](Result<void> r) { ++(r.has_value() ? async_ok : async_failed); });
    });
    const auto data = bytes_of("sync");
    for (int i = 0; i < kEach; ++i) ASSERT_TRUE(ok(sync_write(static_cast<std::uint64_t>(i % 64) * 8, data).first)) << i;
    other.join();
    EXPECT_TRUE(eventually([&] { return async_ok + async_failed == kEach; }))
        << async_ok << " + " << async_failed << " of " << kEach << " asynchronous writes completed";
    EXPECT_EQ(async_failed, 0);
}

// A callback chain at queue depth 1 (each read issued from the last one's
// callback) keeps the I/O thread spinning from one completion to the next
// (ClientConn::spin_in_flight, Own::next) without planning again; a
// synchronous call from another thread must still get its turn at once,
// not when the chain ends. The chain here ends only once the calls are
// done, or after 10 s.
TEST_P(Drive, SynchronousCallsGetTheirTurnDuringACallbackChain) {
    using Clock = std::chrono::steady_clock;
    const auto chain_end = Clock::now() + 10s;
    std::atomic<bool> calls_done{false}, chain_over{false};
    std::atomic<int> links{0};
    std::vector<std::byte> buf(8);
    std::function<void(Result<void>)> next = [&](Result<void> r) {
        if (!r.has_value() || calls_done || Clock::now() >= chain_end) {
            chain_over = true;
            return;
        }
        ++links;
        t_->read(g_, 0, buf, next);
    };
    t_->read(g_, 0, buf, next);
    ASSERT_TRUE(eventually([&] { return links.load() > 50; })) << "the chain did not run";
    const auto data = bytes_of("turn");
    const int links_before = links;
    for (int i = 0; i < 20; ++i) {
        const auto [r, ran] = sync_write(static_cast<std::uint64_t>(i) * 8 + 512, data);
        EXPECT_TRUE(ok(r)) << i;
        EXPECT_EQ(ran, std::this_thread::get_id()) << "call " << i << " was completed by another thread";
    }
    const bool chain_ran_on = !chain_over;
    calls_done = true;
    ASSERT_TRUE(eventually([&] { return chain_over.load(); }, 15s)) << "the chain never ended";
    EXPECT_TRUE(chain_ran_on) << "the synchronous calls waited for the callback chain to end ("
                              << links - links_before << " reads meanwhile)";
    EXPECT_EQ(std::memcmp(remote_->bytes().data() + 512, data.data(), data.size()), 0);
}

TEST_P(Drive, CallersOnSeveralThreadsTakeTurns) {
    constexpr int kEach = 100;
    std::atomic<int> failed{0};
    std::vector<std::thread> callers;
    for (int c = 0; c < 3; ++c)
        callers.emplace_back([&, c] {
            const auto data = bytes_of("caller " + std::to_string(c));
            for (int i = 0; i < kEach; ++i) {
                const auto [r, ran] = sync_write(static_cast<std::uint64_t>(c) * 4096, data);
                if (!r.has_value() || ran != std::this_thread::get_id()) ++failed;
            }
        });
    for (auto& c : callers) c.join();
    EXPECT_EQ(failed, 0);
    // And the I/O thread takes over again afterwards.
    Waiter w;
    t_->write(g_, 0, bytes_of("after"), w.done());
    EXPECT_FALSE(w.get(5s));
}

TEST_P(Drive, ACallThatTimesOutClosesTheConnection) {
    h_->fabric.hold_client_completions(true);
    const auto [r, ran] = sync_write(0, bytes_of("held"), 300ms);
    EXPECT_EQ(code_of(r), errc::io_error);
    EXPECT_TRUE(detail_has(r, "no answer within the timeout (300 ms)"));
    // The write's callback still runs, once, with the failure; later calls fail.
    h_->fabric.hold_client_completions(false);
    h_->fabric.release_held();
    const auto after = sync_write(8, bytes_of("after")).first;
    EXPECT_EQ(code_of(after), errc::io_error);
    // Failed by the closed connection, not by a timeout of its own.
    EXPECT_TRUE(detail_has(after, "the connection failed"));
}

// A thread that holds a connection's polling (the Replicator's committing
// thread) runs the callbacks of every operation, its own and others', in
// poll(); the I/O thread parks meanwhile and takes over after the hold.
TEST_P(Drive, AHolderPollsTheCompletionsOnItsThread) {
    const auto& conn = dynamic_cast<const RdmaClient&>(*t_).conn();
    // A hold gives up after 1 ms when the I/O thread does not let go of the
    // polling lock (it must not keep a committing thread): on a loaded
    // machine, with busy threads on both ends, that happens; ask again.
    std::unique_ptr<client::PollHold> hold;
    ASSERT_TRUE(eventually([&] { return (hold = t_->hold_polling()) != nullptr; }));
    EXPECT_TRUE(eventually([&] { return conn.io_thread_parked(); })) << "the I/O thread did not park";
    // One holder at a time: another thread is refused, and so is a nested
    // hold or a driving call's override here.
    std::unique_ptr<client::PollHold> other;
    std::thread([&] { other = t_->hold_polling(); }).join();
    EXPECT_FALSE(other);
    EXPECT_FALSE(t_->hold_polling());
    std::atomic<std::thread::id> ran{};
    std::atomic<int> done{0};
    for (int i = 0; i < 4; ++i)
        t_->write(g_, static_cast<std::uint64_t>(i) * 8, bytes_of("held"), [&](Result<void> r) {
            EXPECT_TRUE(ok(r));
            ran = std::this_thread::get_id();
            ++done;
        });
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    std::vector<int> fds;
    hold->fds(fds);
    EXPECT_EQ(fds.size(), 3u);
    while (done < 4 && std::chrono::steady_clock::now() < deadline) (void)hold->poll(true);
    EXPECT_EQ(done, 4);
    EXPECT_EQ(ran.load(), std::this_thread::get_id()) << "a callback ran on another thread during the hold";
    EXPECT_TRUE(conn.io_thread_parked());
    hold.reset();
    // After the hold, the I/O thread comes back for a later write.
    Waiter w;
    t_->write(g_, 64, bytes_of("after"), w.done());
    EXPECT_FALSE(w.get(5s));
}

// A committing thread never waits for another thread's synchronous call
// (which may last up to its timeout when the server stopped answering): it
// is refused the hold at once and waits elsewhere; once the call ends, the
// hold is granted again.
TEST_P(Drive, AHoldIsRefusedWhileAnotherThreadsCallWaits) {
    h_->fabric.hold_client_completions(true);
    std::atomic<bool> returned{false};
    std::thread caller([&] {
        (void)sync_write(0, bytes_of("stuck"), 2s);
        returned = true;
    });
    // The caller is inside its call once its write is posted.
    ASSERT_TRUE(eventually([&] { return !h_->fabric.writes().empty(); }));
    const auto t0 = std::chrono::steady_clock::now();
    auto hold = t_->hold_polling();
    EXPECT_FALSE(hold) << "the hold waited for, or took over, another thread's call";
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 500ms);
    EXPECT_FALSE(returned);
    h_->fabric.hold_client_completions(false);
    h_->fabric.release_held();
    caller.join();
    EXPECT_TRUE(t_->hold_polling()) << "no hold once the call ended";
}

INSTANTIATE_TEST_SUITE_P(Modes, Drive,
                         ::testing::Values(CompletionMode::adaptive, CompletionMode::busy, CompletionMode::event),
                         [](const ::testing::TestParamInfo<CompletionMode>& p) { return std::string(to_string(p.param)); });

} // namespace
} // namespace rpm::rdma::test
