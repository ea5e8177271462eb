// CallbackQueue: completions run on the thread that watches its fd, as an
// application's own event loop would (poll() here). Over tcp:// here,
// rdma:// in the lab (common/server_fixture.hpp).
#include "common/server_fixture.hpp"

#include <rpm/callback_queue.hpp>

#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

namespace {
using namespace rpm;
using rpm::test::bytes_of;
using rpm::test::ok;
using CallbackQueueTest = rpm::test::ServerTest;

// Waits, as an event loop would, until the queue's fd polls readable.
bool readable_within(const CallbackQueue& q, int ms) {
    pollfd p{q.fd(), POLLIN, 0};
    return ::poll(&p, 1, ms) == 1 && (p.revents & POLLIN);
}

// Persists completed through the queue: each callback runs on this thread,
// in issue order, inside run_ready(), and may make a synchronous call of
// the same connection (refused with would_deadlock on its I/O thread).
TEST_F(CallbackQueueTest, CallbacksRunOnTheLoopsThreadInOrderAndMayCallSynchronously) {
    auto q = CallbackQueue::create();
    ASSERT_TRUE(q) << q.error().message();
    auto c = connect();
    ASSERT_TRUE(c) << c.error().message();
    auto r = c->open_region("kv");
    ASSERT_TRUE(r) << r.error().message();
    const auto me = std::this_thread::get_id();
    std::vector<int> order;
    std::vector<Result<void>> sync_in_callback;
    bool all_here = true;
    constexpr int kOps = 16;
    const std::string rec = "queued record";
    for (int i = 0; i < kOps; ++i) {
        r->persist(4096 + 64 * i, bytes_of(rec), q->wrap([&, i](Result<void> done) {
            all_here = all_here && std::this_thread::get_id() == me;
            order.push_back(done ? i : -1);
            if (i == kOps - 1) sync_in_callback.push_back(r->persist(8192, std::string_view("from the loop")));
        }));
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (order.size() < kOps && std::chrono::steady_clock::now() < deadline)
        if (readable_within(*q, 1000)) q->run_ready();
    ASSERT_EQ(order.size(), std::size_t{kOps}) << "not every callback came through the queue";
    for (int i = 0; i < kOps; ++i) EXPECT_EQ(order[i], i) << "out of order or failed";
    EXPECT_TRUE(all_here) << "a callback ran on another thread";
    ASSERT_EQ(sync_in_callback.size(), 1u);
    EXPECT_TRUE(ok(sync_in_callback[0]));
    EXPECT_EQ(q->pending(), 0u);
    EXPECT_FALSE(readable_within(*q, 0)) << "fd still readable with nothing queued";
}

// Without a connection: a callback run by another thread is queued, the fd
// turns readable, and it runs only in run_ready(); an exception from one
// leaves the ones behind it queued and the fd readable.
TEST(CallbackQueue, QueuesAcrossThreadsAndKeepsTheRestWhenOneThrows) {
    auto q = CallbackQueue::create();
    ASSERT_TRUE(q) << q.error().message();
    EXPECT_FALSE(readable_within(*q, 0));
    int ran = 0;
    auto first = q->wrap([&](Result<void>) { throw std::runtime_error("first"); });
    auto second = q->wrap([&](Result<void> r) { ran += !r && r.error() == errc::io_error ? 1 : 100; });
    auto got = q->wrap_recv([&](Result<std::size_t> n) { ran += n && *n == 7 ? 10 : 1000; });
    std::thread([&] {
        first({});
        second(Error(errc::io_error, "test"));
        got(std::size_t{7});
    }).join();
    EXPECT_EQ(ran, 0) << "a callback ran on the completing thread";
    EXPECT_EQ(q->pending(), 3u);
    EXPECT_TRUE(readable_within(*q, 0));
    EXPECT_THROW(q->run_ready(), std::runtime_error);
    EXPECT_EQ(q->pending(), 2u);
    EXPECT_TRUE(readable_within(*q, 0)) << "the callbacks left behind must keep the fd readable";
    EXPECT_EQ(q->run_ready(), 2u);
    EXPECT_EQ(ran, 11);
    EXPECT_FALSE(readable_within(*q, 0));
}

} // namespace
