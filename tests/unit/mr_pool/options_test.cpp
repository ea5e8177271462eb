// MrPool::create: option checks, initial registration, teardown.
#include "tests/unit/mr_pool/fake_registrar.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <string>

namespace {

using rpm::errc;
using rpm::MrPoolOptions;
using rpm_test::FakeState;
using rpm_test::fake_pool;
using rpm_test::quiet_options;

struct BadOption {
    const char* name;
    std::function<void(MrPoolOptions&)> spoil;
};

TEST(MrPoolTest, EachBadOptionIsInvalidArgumentNamingIt) {
    const BadOption cases[] = {
        {"buffer_size", [](MrPoolOptions& o) { o.buffer_size = 0; }},
        {"l2_buckets", [](MrPoolOptions& o) { o.l2_buckets = 3; }},
        {"l2_buckets", [](MrPoolOptions& o) { o.l2_buckets = 9; }},
        {"budget", [](MrPoolOptions& o) { o.budget = 0; o.initial = 0; o.floor = 0; }},
        {"initial", [](MrPoolOptions& o) { o.initial = o.budget + 1; }},
        {"floor", [](MrPoolOptions& o) { o.floor = o.budget + 1; }},
        {"l1_entries", [](MrPoolOptions& o) { o.l1_entries = 0; }},
        {"l2_entries", [](MrPoolOptions& o) { o.l2_entries = 0; }},
        {"monitor_interval", [](MrPoolOptions& o) { o.monitor_interval = std::chrono::microseconds(0); }},
    };
    for (const auto& c : cases) {
        MrPoolOptions o = quiet_options();
        c.spoil(o);
        std::shared_ptr<FakeState> fake;
        auto pool = fake_pool(fake, o);
        ASSERT_FALSE(pool) << c.name;
        EXPECT_EQ(pool.error(), errc::invalid_argument) << c.name;
        EXPECT_NE(pool.error().detail().find(c.name), std::string::npos) << pool.error().detail();
        EXPECT_EQ(fake->register_count(), 0U) << c.name;
    }
}

TEST(MrPoolTest, BoundaryOptionsAreAccepted) {
    for (std::uint32_t buckets : {4U, 8U}) {
        MrPoolOptions o = quiet_options();
        o.l2_buckets = buckets;
        o.initial = o.budget;
        std::shared_ptr<FakeState> fake;
        auto pool = fake_pool(fake, o);
        ASSERT_TRUE(pool) << pool.error().message();
        EXPECT_EQ(pool->stats().registered, o.budget);
    }
}

TEST(MrPoolTest, CreateRegistersInitialEntriesOfRoundedSize) {
    MrPoolOptions o = quiet_options(16, 5);
    o.buffer_size = 5000;
    std::shared_ptr<FakeState> fake;
    auto pool = fake_pool(fake, o);
    ASSERT_TRUE(pool) << pool.error().message();
    const auto s = pool->stats();
    EXPECT_EQ(s.registered, 5U);
    EXPECT_EQ(s.registrations, 5U);
    EXPECT_EQ(s.free_global, 5U);
    EXPECT_EQ(s.buffer_size, 8192U);
    EXPECT_EQ(s.budget, 16U);
    EXPECT_EQ(s.device, "fake0");
    EXPECT_EQ(pool->options().buffer_size, 8192U);
    EXPECT_EQ(fake->live_count(), 5U);
    EXPECT_FALSE(fake->unaligned_seen.load());
    auto user = pool->create_user();
    ASSERT_TRUE(user);
    rpm::MrBuffer* b = user->get();
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(b->size(), 8192U);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b->data()) % 4096, 0U);
    EXPECT_TRUE(fake->is_live(b->handle()));
    b->bytes()[8191] = std::byte{1};  // the whole entry is usable
    user->put(b);
}

TEST(MrPoolTest, CreateFailureReturnsTheErrorAndDeregistersTheRest) {
    auto fake = std::make_shared<FakeState>();
    fake->fail_at = 2;
    auto pool = rpm::MrPool::create(std::make_unique<rpm_test::FakeRegistrar>(fake), quiet_options(16, 5));
    ASSERT_FALSE(pool);
    EXPECT_EQ(pool.error(), errc::rdma_unavailable);
    EXPECT_EQ(fake->register_count(), 2U);
    EXPECT_EQ(fake->deregister_count(), 2U);
    EXPECT_EQ(fake->live_count(), 0U);
}

TEST(MrPoolTest, CreateUserWithL1AboveTheBudgetIsInvalid) {
    std::shared_ptr<FakeState> fake;
    auto pool = fake_pool(fake, quiet_options(16, 4));
    ASSERT_TRUE(pool);
    auto user = pool->create_user(17);
    ASSERT_FALSE(user);
    EXPECT_EQ(user.error(), errc::invalid_argument);
    auto fine = pool->create_user(16);
    ASSERT_TRUE(fine);
    EXPECT_EQ(fine->l1_size(), 16U);
    EXPECT_EQ(fine->l1_free(), 4U);  // filled as far as the global pool goes
    auto dflt = pool->create_user();
    ASSERT_TRUE(dflt);
    EXPECT_EQ(dflt->l1_size(), 2U);  // options().l1_entries
    EXPECT_EQ(pool->stats().users, 2U);
}

// The default L1 size is held to the budget as an explicit one is: a pool
// of 4 entries whose default L1 is 8 gives its users an L1 of 4.
TEST(MrPoolTest, DefaultL1AboveTheBudgetIsClampedToIt) {
    std::shared_ptr<FakeState> fake;
    auto o = quiet_options(4, 4);
    o.l1_entries = 8;
    auto pool = fake_pool(fake, o);
    ASSERT_TRUE(pool) << pool.error().message();
    auto user = pool->create_user();
    ASSERT_TRUE(user) << user.error().message();
    EXPECT_EQ(user->l1_size(), 4U);
}

TEST(MrPoolTest, GrowRegistersUpToTheBudgetAndNoFurther) {
    std::shared_ptr<FakeState> fake;
    auto pool = fake_pool(fake, quiet_options(10, 4));
    ASSERT_TRUE(pool);
    ASSERT_TRUE(pool->grow(6));
    EXPECT_EQ(pool->stats().registered, 10U);
    auto over = pool->grow(1);
    ASSERT_FALSE(over);
    EXPECT_EQ(over.error(), errc::mr_budget_exhausted);
    EXPECT_EQ(pool->stats().registered, 10U);
    EXPECT_EQ(fake->register_count(), 10U);
}

TEST(MrPoolTest, GrowFailureRegistersNothing) {
    std::shared_ptr<FakeState> fake;
    auto pool = fake_pool(fake, quiet_options(10, 2));
    ASSERT_TRUE(pool);
    fake->fail_at = 4;  // the third of grow's four
    auto r = pool->grow(4);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::rdma_unavailable);
    const auto s = pool->stats();
    EXPECT_EQ(s.registered, 2U);
    EXPECT_EQ(s.registration_failures, 1U);
    EXPECT_EQ(fake->live_count(), 2U);
    ASSERT_TRUE(pool->grow(8));  // the failed attempt left no reservation behind
    EXPECT_EQ(pool->stats().registered, 10U);
}

TEST(MrPoolTest, DestructionDeregistersEverythingEvenEntriesStillOut) {
    std::shared_ptr<FakeState> fake;
    {
        auto pool = fake_pool(fake, quiet_options(16, 6));
        ASSERT_TRUE(pool);
        auto user = pool->create_user();
        ASSERT_TRUE(user);
        ASSERT_NE(user->get(), nullptr);  // never put back: documented misuse
        ASSERT_NE(user->get(), nullptr);
        EXPECT_EQ(pool->stats().in_use, 2U);
    }
    EXPECT_EQ(fake->live_count(), 0U);
    EXPECT_EQ(fake->deregister_count(), 6U);
    EXPECT_EQ(fake->bad_count(), 0U);
}

TEST(MrPoolTest, UsersOutliveThePoolObject) {
    std::shared_ptr<FakeState> fake;
    std::optional<rpm::MrPoolUser> user;
    {
        auto pool = fake_pool(fake, quiet_options(16, 6));
        ASSERT_TRUE(pool);
        auto u = pool->create_user();
        ASSERT_TRUE(u);
        user.emplace(std::move(*u));
    }
    EXPECT_EQ(fake->live_count(), 6U);  // the core lives on in the user
    for (int i = 0; i < 4; ++i) {
        rpm::MrBuffer* b = user->get();
        ASSERT_NE(b, nullptr);
        user->put(b);
    }
    user.reset();
    EXPECT_EQ(fake->live_count(), 0U);
    EXPECT_EQ(fake->bad_count(), 0U);
}

TEST(MrPoolTest, MovedUserKeepsItsEntries) {
    std::shared_ptr<FakeState> fake;
    auto pool = fake_pool(fake, quiet_options(16, 6));
    ASSERT_TRUE(pool);
    auto a = pool->create_user();
    auto b = pool->create_user();
    ASSERT_TRUE(a && b);
    rpm::MrPoolUser moved(std::move(*a));
    EXPECT_EQ(moved.l1_free(), 2U);
    *b = std::move(moved);  // b's own L1 goes back to the pool
    EXPECT_EQ(b->l1_free(), 2U);
    const auto s = pool->stats();
    EXPECT_EQ(s.users, 1U);
    EXPECT_EQ(s.free_global, 4U);
}

}  // namespace
