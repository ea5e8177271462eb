// InlineMutex: exclusion under contention, try_lock, and a sleeping waiter
// woken by unlock. Also run under TSan (tools/test), which checks that
// each critical section happens-before the next through the lock alone.
#include "core/inline_mutex.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

namespace rpm {
namespace {

TEST(InlineMutex, ExcludesUnderContention) {
    InlineMutex mu;
    // Plain (not atomic): only the lock orders the threads' updates, so a
    // lock that let two in would lose increments (and TSan would say so).
    std::uint64_t counter = 0;
    constexpr int kThreads = 4, kEach = 20000;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&] {
            for (int i = 0; i < kEach; ++i) {
                std::lock_guard lock(mu);
                const std::uint64_t seen = counter;
                if (i % 64 == 0) std::this_thread::yield();  // hold it long enough for others to sleep on it
                counter = seen + 1;
            }
        });
    for (auto& t : threads) t.join();
    EXPECT_EQ(counter, std::uint64_t{kThreads} * kEach);
}

TEST(InlineMutex, TryLockFailsWhileHeldAndSucceedsAfter) {
    InlineMutex mu;
    ASSERT_TRUE(mu.try_lock());
    bool other = true;
    std::thread([&] { other = mu.try_lock(); }).join();
    EXPECT_FALSE(other);
    mu.unlock();
    std::thread([&] {
        other = mu.try_lock();
        if (other) mu.unlock();
    }).join();
    EXPECT_TRUE(other);
}

TEST(InlineMutex, UnlockWakesASleepingWaiter) {
    InlineMutex mu;
    mu.lock();
    std::atomic<bool> got{false};
    std::thread waiter([&] {
        mu.lock();  // sleeps: the lock stays held for a while
        got = true;
        mu.unlock();
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_FALSE(got.load());
    mu.unlock();
    waiter.join();  // would hang (ctest's timeout) if the unlock woke nobody
    EXPECT_TRUE(got.load());
    // Free again, uncontended.
    EXPECT_TRUE(mu.try_lock());
    mu.unlock();
}

} // namespace
} // namespace rpm
