// MrPool::add and MrPool::remove.
#include "tests/unit/mr_pool/fake_registrar.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

namespace {

using rpm::errc;
using rpm::MrBuffer;
using rpm_test::FakeState;
using rpm_test::fake_pool;
using rpm_test::quiet_options;

struct Memory {
    explicit Memory(std::size_t n) : p(static_cast<std::byte*>(std::aligned_alloc(4096, n))), size(n) {}
    ~Memory() { std::free(p); }
    Memory(const Memory&) = delete;
    Memory& operator=(const Memory&) = delete;
    std::span<std::byte> span() const { return {p, size}; }
    std::byte* p;
    std::size_t size;
};

// Gets every entry the user can reach, then puts them back.
std::set<std::uint32_t> drain_ids(rpm::MrPoolUser& user) {
    std::vector<MrBuffer*> held;
    while (MrBuffer* b = user.get()) held.push_back(b);
    std::set<std::uint32_t> ids;
    for (MrBuffer* b : held) {
        ids.insert(b->id());
        user.put(b);
    }
    return ids;
}

TEST(MrPoolTest, AddRegistersCallerMemoryAsConsecutiveEntries) {
    std::shared_ptr<FakeState> fake;
    Memory mem(3 * 4096 + 4096);
    {
        auto pool = fake_pool(fake, quiet_options(16, 4));
        ASSERT_TRUE(pool);
        auto first = pool->add(mem.span().first(3 * 4096 + 100));  // the tail is too short for a 4th
        ASSERT_TRUE(first) << first.error().message();
        EXPECT_EQ(*first, 4U);
        auto s = pool->stats();
        EXPECT_EQ(s.registered, 7U);
        EXPECT_EQ(s.free_global, 7U);
        auto user = pool->create_user(1);
        ASSERT_TRUE(user);
        const auto ids = drain_ids(*user);
        for (std::uint32_t id : {4U, 5U, 6U}) EXPECT_EQ(ids.count(id), 1U) << id;
        std::vector<MrBuffer*> held;
        while (MrBuffer* b = user->get()) held.push_back(b);
        for (MrBuffer* b : held) {
            if (b->id() >= 4) {
                EXPECT_EQ(b->data(), mem.p + (b->id() - 4) * 4096);
                EXPECT_EQ(b->size(), 4096U);
            }
            user->put(b);
        }
    }
    EXPECT_EQ(fake->live_count(), 0U);
    std::memset(mem.p, 0xab, mem.size);  // still ours: the pool did not free it
}

TEST(MrPoolTest, AddRefusesBadMemoryAndThePastTheBudget) {
    std::shared_ptr<FakeState> fake;
    auto pool = fake_pool(fake, quiet_options(6, 4));
    ASSERT_TRUE(pool);
    Memory mem(4 * 4096);
    auto unaligned = pool->add(mem.span().subspan(64, 4096));
    ASSERT_FALSE(unaligned);
    EXPECT_EQ(unaligned.error(), errc::invalid_argument);
    auto short_one = pool->add(mem.span().first(4095));
    ASSERT_FALSE(short_one);
    EXPECT_EQ(short_one.error(), errc::invalid_argument);
    auto over = pool->add(mem.span().first(3 * 4096));
    ASSERT_FALSE(over);
    EXPECT_EQ(over.error(), errc::mr_budget_exhausted);
    fake->fail_at = 5;  // the second of two
    auto failed = pool->add(mem.span().first(2 * 4096));
    ASSERT_FALSE(failed);
    EXPECT_EQ(failed.error(), errc::rdma_unavailable);
    EXPECT_EQ(pool->stats().registered, 4U);
    EXPECT_EQ(fake->live_count(), 4U);
    auto fits = pool->add(mem.span().first(2 * 4096));
    ASSERT_TRUE(fits);
    EXPECT_EQ(pool->stats().registered, 6U);
}

TEST(MrPoolTest, AddedEntriesAreNotDeregisteredForIdleness) {
    std::shared_ptr<FakeState> fake;
    auto o = quiet_options(16, 2);
    o.floor = 0;
    o.idle_time = std::chrono::milliseconds(1);
    Memory mem(2 * 4096);
    auto pool = fake_pool(fake, o);
    ASSERT_TRUE(pool);
    ASSERT_TRUE(pool->add(mem.span()));
    ASSERT_TRUE(rpm_test::eventually([&] { return pool->stats().idle_deregistered == 2; }));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const auto s = pool->stats();
    EXPECT_EQ(s.idle_deregistered, 2U);
    EXPECT_EQ(s.registered, 2U);
    EXPECT_TRUE(pool->remove(2));
    EXPECT_TRUE(pool->remove(3));
    EXPECT_EQ(pool->stats().registered, 0U);
}

TEST(MrPoolTest, RemoveOfAFreeEntryDeregistersItNow) {
    std::shared_ptr<FakeState> fake;
    auto pool = fake_pool(fake, quiet_options(16, 6));
    ASSERT_TRUE(pool);
    auto user = pool->create_user(1);
    ASSERT_TRUE(user);
    MrBuffer* x = user->get();
    MrBuffer* y = user->get();
    void* y_handle = y->handle();
    const std::uint32_t y_id = y->id();
    user->put(x);
    user->put(y);  // L1 full: y is free in the bucket
    ASSERT_EQ(pool->stats().free_l2, 1U);
    ASSERT_TRUE(pool->remove(y_id));
    EXPECT_FALSE(fake->is_live(y_handle));
    auto s = pool->stats();
    EXPECT_EQ(s.free_l2, 0U);
    EXPECT_EQ(s.registered, 5U);
    EXPECT_EQ(s.deregistrations, 1U);
    // A free entry of the global pool: id 0 is still there.
    ASSERT_TRUE(pool->remove(0));
    s = pool->stats();
    EXPECT_EQ(s.registered, 4U);
    EXPECT_EQ(s.free_global, 3U);
    const auto ids = drain_ids(*user);
    EXPECT_EQ(ids.size(), 4U);
    EXPECT_EQ(ids.count(y_id), 0U);
    EXPECT_EQ(ids.count(0U), 0U);
}

// Catches a put() that forgot the retiring check.
TEST(MrPoolTest, RemoveOfAnEntryOutDeregistersItWhenPutBack) {
    std::shared_ptr<FakeState> fake;
    auto pool = fake_pool(fake, quiet_options(16, 6));
    ASSERT_TRUE(pool);
    auto user = pool->create_user(2);
    ASSERT_TRUE(user);
    MrBuffer* b = user->get();
    const std::uint32_t id = b->id();
    void* handle = b->handle();
    ASSERT_TRUE(pool->remove(id));
    EXPECT_TRUE(fake->is_live(handle));  // still in use
    EXPECT_EQ(pool->stats().registered, 6U);
    user->put(b);
    EXPECT_FALSE(fake->is_live(handle));
    const auto s = pool->stats();
    EXPECT_EQ(s.registered, 5U);
    EXPECT_EQ(s.in_use, 0U);
    EXPECT_EQ(user->l1_free(), 1U);
    EXPECT_EQ(drain_ids(*user).count(id), 0U);
}

// Catches a get() from L1 that forgot the retiring check.
TEST(MrPoolTest, RemovedL1EntryIsNeverHandedOutAgain) {
    std::shared_ptr<FakeState> fake;
    auto pool = fake_pool(fake, quiet_options(16, 6));
    ASSERT_TRUE(pool);
    auto user = pool->create_user(2);
    ASSERT_TRUE(user);
    MrBuffer* a = user->get();
    MrBuffer* b = user->get();
    user->put(a);
    user->put(b);  // L1 = [a, b]: b is next
    const std::uint32_t id = b->id();
    void* handle = b->handle();
    ASSERT_TRUE(pool->remove(id));
    EXPECT_TRUE(fake->is_live(handle));  // cached in L1: deregistered when found
    MrBuffer* next = user->get();
    EXPECT_EQ(next, a);
    EXPECT_FALSE(fake->is_live(handle));
    EXPECT_EQ(pool->stats().registered, 5U);
    user->put(next);
    const auto ids = drain_ids(*user);
    EXPECT_EQ(ids.size(), 5U);
    EXPECT_EQ(ids.count(id), 0U);
    EXPECT_EQ(fake->bad_count(), 0U);
}

TEST(MrPoolTest, RemoveOfAnUnknownOrRemovedIdIsInvalid) {
    std::shared_ptr<FakeState> fake;
    auto pool = fake_pool(fake, quiet_options(16, 3));
    ASSERT_TRUE(pool);
    auto unknown = pool->remove(3);
    ASSERT_FALSE(unknown);
    EXPECT_EQ(unknown.error(), errc::invalid_argument);
    ASSERT_TRUE(pool->remove(1));
    auto twice = pool->remove(1);
    ASSERT_FALSE(twice);
    EXPECT_EQ(twice.error(), errc::invalid_argument);
    EXPECT_EQ(pool->stats().deregistrations, 1U);
    EXPECT_EQ(fake->bad_count(), 0U);
}

TEST(MrPoolTest, RemoveAfterIdleDeregistrationIsInvalid) {
    std::shared_ptr<FakeState> fake;
    auto o = quiet_options(16, 3);
    o.floor = 0;
    o.idle_time = std::chrono::milliseconds(1);
    auto pool = fake_pool(fake, o);
    ASSERT_TRUE(pool);
    ASSERT_TRUE(rpm_test::eventually([&] { return pool->stats().registered == 0; }));
    auto stale = pool->remove(2);
    ASSERT_FALSE(stale);
    EXPECT_EQ(stale.error(), errc::invalid_argument);
    EXPECT_EQ(fake->bad_count(), 0U);
}

}  // namespace
