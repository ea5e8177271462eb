// The background thread: replenishing, the budget, idle reclaim, failures.
#include "tests/unit/mr_pool/fake_registrar.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using rpm::MrBuffer;
using rpm::MrPoolOptions;
using rpm_test::eventually;
using rpm_test::FakeState;
using rpm_test::fake_pool;
using rpm_test::quiet_options;

TEST(MrPoolTest, MissReturnsNullAtOnceWhenEmptyAtBudget) {
    std::shared_ptr<FakeState> fake;
    MrPoolOptions o = quiet_options(2, 2);
    o.low_water = 4;  // the thread would register if the budget let it
    auto pool = fake_pool(fake, o);
    ASSERT_TRUE(pool);
    auto user = pool->create_user(2);
    ASSERT_TRUE(user);
    MrBuffer* a = user->get();
    MrBuffer* b = user->get();
    ASSERT_TRUE(a && b);
    EXPECT_EQ(user->get(), nullptr);
    EXPECT_EQ(user->get(), nullptr);
    EXPECT_EQ(pool->stats().none_now, 2U);
    std::this_thread::sleep_for(20ms);  // rounds woken by the misses
    EXPECT_EQ(fake->register_count(), 2U);
    EXPECT_EQ(pool->stats().registered, 2U);
    user->put(a);
    user->put(b);
}

TEST(MrPoolTest, ReplenishesBelowLowWaterOffTheCallersThread) {
    std::shared_ptr<FakeState> fake;
    MrPoolOptions o = quiet_options(32, 0);
    o.low_water = 4;
    o.replenish_batch = 4;
    auto pool = fake_pool(fake, o);
    ASSERT_TRUE(pool);
    auto user = pool->create_user(1);  // may find nothing yet
    ASSERT_TRUE(user);
    std::vector<MrBuffer*> held;
    ASSERT_TRUE(eventually([&] {
        if (MrBuffer* b = user->get()) held.push_back(b);
        return held.size() >= 6;
    }));
    const auto s = pool->stats();
    EXPECT_GE(s.registered, 6U);
    EXPECT_LE(s.registered, 32U);
    EXPECT_EQ(s.stalls_avoided, 6U);  // every entry came from the thread
    for (MrBuffer* b : held) user->put(b);
    for (int i = 0; i < 6; ++i) user->put(user->get());
    EXPECT_EQ(pool->stats().stalls_avoided, 6U);  // counted once per entry
    for (const auto& id : fake->threads()) EXPECT_NE(id, std::this_thread::get_id());
    EXPECT_TRUE(eventually([&] { return pool->stats().free_global >= 4; }));
}

TEST(MrPoolTest, StallsAvoidedCountsOnlyTheFirstGet) {
    std::shared_ptr<FakeState> fake;
    MrPoolOptions o = quiet_options(8, 0);
    o.low_water = 2;
    o.replenish_batch = 2;
    auto pool = fake_pool(fake, o);
    ASSERT_TRUE(pool);
    ASSERT_TRUE(eventually([&] { return pool->stats().free_global >= 2; }));
    auto user = pool->create_user(2);
    ASSERT_TRUE(user);
    for (int i = 0; i < 10; ++i) user->put(user->get());  // the same L1 entry
    EXPECT_EQ(pool->stats().stalls_avoided, 1U);
    EXPECT_EQ(pool->stats().l1_hits, 10U);
}

TEST(MrPoolTest, BudgetIsNeverExceededUnderChurnOfUsers) {
    std::shared_ptr<FakeState> fake;
    MrPoolOptions o = quiet_options(24, 4);
    o.floor = 4;
    o.low_water = 8;
    o.replenish_batch = 8;
    o.idle_time = 5ms;
    o.monitor_interval = 200us;
    {
        auto pool = fake_pool(fake, o);
        ASSERT_TRUE(pool);
        std::atomic<std::uint32_t> seen_max{0};
        auto churn = [&](unsigned seed) {
            for (unsigned i = 0; i < 150; ++i) {
                auto user = pool->create_user(1 + (seed + i) % 3);
                if (!user) return;
                std::vector<MrBuffer*> held;
                for (unsigned k = 0; k < 1 + (seed * 7 + i) % 8; ++k)
                    if (MrBuffer* b = user->get()) held.push_back(b);
                const std::uint32_t r = pool->stats().registered;
                std::uint32_t m = seen_max.load();
                while (r > m && !seen_max.compare_exchange_weak(m, r)) {}
                for (MrBuffer* b : held) user->put(b);
                if (i % 16 == 0) std::this_thread::sleep_for(1ms);
            }
        };
        std::vector<std::thread> threads;
        for (unsigned t = 0; t < 4; ++t) threads.emplace_back(churn, t);
        for (auto& t : threads) t.join();
        EXPECT_LE(seen_max.load(), 24U);
        EXPECT_GT(fake->register_count(), 4U);  // the thread did register
        const auto s = pool->stats();
        EXPECT_EQ(s.in_use, 0U);
        EXPECT_EQ(s.users, 0U);
    }
    EXPECT_LE(fake->peak(), 24U);
    EXPECT_EQ(fake->live_count(), 0U);
    EXPECT_EQ(fake->bad_count(), 0U);
}

TEST(MrPoolTest, IdleL2EntriesGoBackToGlobal) {
    std::shared_ptr<FakeState> fake;
    MrPoolOptions o = quiet_options(16, 8);  // floor = budget: nothing deregistered
    o.idle_time = 20ms;
    auto pool = fake_pool(fake, o);
    ASSERT_TRUE(pool);
    auto user = pool->create_user(1);
    ASSERT_TRUE(user);
    MrBuffer* x = user->get();
    MrBuffer* g1 = user->get();
    MrBuffer* g2 = user->get();
    ASSERT_TRUE(x && g1 && g2);
    user->put(x);
    user->put(g1);
    user->put(g2);
    ASSERT_LE(pool->stats().l2_reclaims, 0U);
    // Wait on the count, not on the buckets being empty: the thread counts
    // a bucket's entries after it has put them in the global pool, so an
    // empty bucket may still have its entries on the way.
    ASSERT_TRUE(eventually([&] { return pool->stats().l2_reclaims >= 2; }));
    const auto s = pool->stats();
    EXPECT_EQ(s.l2_reclaims, 2U);
    EXPECT_EQ(s.free_l2, 0U);
    EXPECT_EQ(s.free_global, 7U);
    EXPECT_EQ(s.registered, 8U);
    EXPECT_EQ(user->l1_free(), 1U);  // L1 is never aged
}

TEST(MrPoolTest, IdleGlobalEntriesAreDeregisteredDownToTheFloorOnly) {
    std::shared_ptr<FakeState> fake;
    MrPoolOptions o = quiet_options(16, 10);
    o.floor = 4;
    o.replenish_batch = 2;
    o.idle_time = 20ms;
    auto pool = fake_pool(fake, o);
    ASSERT_TRUE(pool);
    auto user = pool->create_user(2);  // its two L1 entries count as registered
    ASSERT_TRUE(user);
    // The thread counts the entries it deregistered after the registry has
    // dropped them: wait for both, then for more idle periods.
    ASSERT_TRUE(eventually([&] {
        const auto now = pool->stats();
        return now.registered <= 4 && now.idle_deregistered >= 6;
    }));
    std::this_thread::sleep_for(100ms);  // many more idle periods
    const auto s = pool->stats();
    EXPECT_EQ(s.registered, 4U);
    EXPECT_EQ(s.idle_deregistered, 6U);
    EXPECT_EQ(s.deregistrations, 6U);
    EXPECT_EQ(s.free_global, 2U);
    EXPECT_EQ(fake->live_count(), 4U);
    EXPECT_EQ(user->l1_free(), 2U);
}

TEST(MrPoolTest, RegistrationFailureIsCountedAndRetried) {
    auto fake = std::make_shared<FakeState>();
    fake->fail_next = 3;
    MrPoolOptions o = quiet_options(16, 0);
    o.low_water = 2;
    o.replenish_batch = 1;
    auto pool = rpm::MrPool::create(std::make_unique<rpm_test::FakeRegistrar>(fake), o);
    ASSERT_TRUE(pool);
    ASSERT_TRUE(eventually([&] {
        const auto s = pool->stats();
        return s.registration_failures >= 3 && s.registered >= 2;
    }));
    EXPECT_EQ(pool->stats().registration_failures, 3U);
}

// A failing registrar is retried once per monitor_interval, not on every
// miss that wakes the thread.
TEST(MrPoolTest, FailingRegistrationIsNotRetriedInABusyLoop) {
    auto fake = std::make_shared<FakeState>();
    fake->fail_always = true;
    MrPoolOptions o = quiet_options(16, 0);
    o.low_water = 2;
    o.monitor_interval = 10ms;
    auto pool = rpm::MrPool::create(std::make_unique<rpm_test::FakeRegistrar>(fake), o);
    ASSERT_TRUE(pool);
    auto user = pool->create_user(1);
    ASSERT_TRUE(user);
    const auto end = std::chrono::steady_clock::now() + 100ms;
    std::uint64_t misses = 0;
    while (std::chrono::steady_clock::now() < end) {
        if (user->get() == nullptr) ++misses;
        std::this_thread::yield();
    }
    const auto s = pool->stats();
    EXPECT_EQ(s.none_now, misses);
    EXPECT_GE(s.registration_failures, 1U);
    EXPECT_LE(s.registration_failures, 40U);  // about 11 expected; a busy loop makes thousands
    fake->fail_always = false;
    EXPECT_TRUE(eventually([&] { return pool->stats().registered >= 2; }));
}

}  // namespace
