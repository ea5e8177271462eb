// A quiet pool's background thread backs off (Monitor, "quiet"), and what
// brings it back: an entry reaching a shared level (poke), stamped with the
// time it got there rather than that of the thread's last round.
#include "tests/unit/mr_pool/fake_registrar.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace {

using namespace std::chrono_literals;
using rpm::MrBuffer;
using rpm::MrPool;
using rpm::MrPoolOptions;
using rpm_test::eventually;
using rpm_test::FakeState;
using rpm_test::fake_pool;
using rpm_test::quiet_options;
using Clock = std::chrono::steady_clock;

// Returns once a round has run (polling its count), so that the thread has
// just begun its next wait. False after `limit`.
bool next_round(const MrPool& pool, std::chrono::milliseconds limit = 3s) {
    const auto before = pool.stats().monitor_rounds;
    const auto end = Clock::now() + limit;
    while (Clock::now() < end) {
        if (pool.stats().monitor_rounds != before) return true;
        std::this_thread::sleep_for(200us);
    }
    return false;
}

// True when `pred` holds within `limit`.
bool within(std::chrono::milliseconds limit, const std::function<bool()>& pred) {
    const auto end = Clock::now() + limit;
    while (Clock::now() < end) {
        if (pred()) return true;
        std::this_thread::sleep_for(1ms);
    }
    return pred();
}

// L1 of one entry: the second put sends an entry to the user's L2 bucket.
void put_one_to_l2(rpm::MrPoolUser& user) {
    MrBuffer* x = user.get();
    MrBuffer* y = user.get();
    ASSERT_TRUE(x && y);
    user.put(x);
    user.put(y);
}

TEST(MrPoolQuiet, AQuietPoolsThreadBacksOff) {
    std::shared_ptr<FakeState> fake;
    auto pool = fake_pool(fake, quiet_options());  // 500 µs interval, nothing to do
    ASSERT_TRUE(pool);
    std::this_thread::sleep_for(400ms);
    // At 500 µs: some 800 rounds. Doubling from there: about ten.
    EXPECT_LT(pool->stats().monitor_rounds, 40U);
}

TEST(MrPoolQuiet, AnEntryReachingL2WakesABackedOffThread) {
    std::shared_ptr<FakeState> fake;
    MrPoolOptions o = quiet_options();
    o.idle_time = 0ms;  // an L2 entry is due at the first round that looks
    auto pool = fake_pool(fake, o);
    ASSERT_TRUE(pool);
    auto user = pool->create_user(1);
    ASSERT_TRUE(user);
    std::this_thread::sleep_for(300ms);
    // A round now begins the wait after the one of 256 ms: 512 ms at least.
    ASSERT_TRUE(next_round(*pool));
    ASSERT_EQ(pool->stats().free_l2, 0U);
    put_one_to_l2(*user);
    EXPECT_TRUE(within(400ms, [&] { return pool->stats().l2_reclaims == 1; }));
    EXPECT_EQ(pool->stats().free_l2, 0U);
}

TEST(MrPoolQuiet, AnEntryIsStampedWithTheTimeOfItsPutNotTheLastRounds) {
    std::shared_ptr<FakeState> fake;
    MrPoolOptions o = quiet_options();
    o.idle_time = 250ms;
    auto pool = fake_pool(fake, o);
    ASSERT_TRUE(pool);
    auto user = pool->create_user(1);
    ASSERT_TRUE(user);
    std::this_thread::sleep_for(300ms);
    ASSERT_TRUE(next_round(*pool));  // a wait of 512 ms begins: the time published now goes stale
    std::this_thread::sleep_for(400ms);
    put_one_to_l2(*user);
    // Stamped with the last round's time, 400 ms old, it would count as
    // idle (250 ms) at once, and the round the poke runs would move it.
    std::this_thread::sleep_for(50ms);
    EXPECT_EQ(pool->stats().l2_reclaims, 0U);
    EXPECT_TRUE(eventually([&] { return pool->stats().l2_reclaims == 1; }));
}

TEST(MrPoolQuiet, APoolWithWorkDueKeepsItsInterval) {
    std::shared_ptr<FakeState> fake;
    MrPoolOptions o = quiet_options();
    o.floor = 0;  // free global entries above the floor: idle deregistration comes due
    auto pool = fake_pool(fake, o);
    ASSERT_TRUE(pool);
    std::this_thread::sleep_for(200ms);
    // 400 at 500 µs; backing off, about 8.
    EXPECT_GT(pool->stats().monitor_rounds, 40U);
}

} // namespace
