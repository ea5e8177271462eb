// MrPoolUser: the order of the levels, the put rules, L2 buckets, trim and
// give-back.
#include "tests/unit/mr_pool/fake_registrar.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

namespace {

using rpm::MrBuffer;
using rpm::MrPoolUser;
using rpm_test::FakeState;
using rpm_test::fake_pool;
using rpm_test::quiet_options;

struct Hits {
    std::uint64_t l1, l2, global, none;
};

Hits hits(const rpm::MrPool& pool) {
    const auto s = pool.stats();
    return {s.l1_hits, s.l2_hits, s.global_hits, s.none_now};
}

#define EXPECT_HITS(pool, l1_, l2_, global_)       \
    do {                                           \
        const Hits h = hits(pool);                 \
        EXPECT_EQ(h.l1, l1_##U) << "l1 hits";      \
        EXPECT_EQ(h.l2, l2_##U) << "l2 hits";      \
        EXPECT_EQ(h.global, global_##U) << "global hits"; \
    } while (0)

TEST(MrPoolTest, GetTriesL1ThenL2ThenGlobal) {
    std::shared_ptr<FakeState> fake;
    auto pool = fake_pool(fake, quiet_options(16, 8));
    ASSERT_TRUE(pool);
    auto user = pool->create_user(1);
    ASSERT_TRUE(user);
    MrBuffer* x = user->get();
    ASSERT_NE(x, nullptr);
    EXPECT_HITS(*pool, 1, 0, 0);
    MrBuffer* y = user->get();
    ASSERT_NE(y, nullptr);
    EXPECT_HITS(*pool, 1, 0, 1);
    EXPECT_EQ(pool->stats().in_use, 2U);
    user->put(x);  // from L1: back to L1
    user->put(y);  // L1 full: to the bucket
    EXPECT_EQ(user->l1_free(), 1U);
    EXPECT_EQ(pool->stats().free_l2, 1U);
    MrBuffer* x2 = user->get();
    EXPECT_EQ(x2, x);
    EXPECT_HITS(*pool, 2, 0, 1);
    MrBuffer* y2 = user->get();
    EXPECT_EQ(y2, y);
    EXPECT_HITS(*pool, 2, 1, 1);
    MrBuffer* z = user->get();
    ASSERT_NE(z, nullptr);
    EXPECT_HITS(*pool, 2, 1, 2);
    EXPECT_EQ(pool->stats().in_use, 3U);
    for (MrBuffer* b : {x2, y2, z}) user->put(b);
    EXPECT_EQ(pool->stats().in_use, 0U);
}

// The L1 is the user's allotment: its entries free or out never number more
// than its size, so an entry from the global pool put back while the L1's
// own are out goes where other users can reach it (the seed's rule).
TEST(MrPoolTest, PutKeepsTheL1AtItsSizeCountingEntriesOut) {
    std::shared_ptr<FakeState> fake;
    auto pool = fake_pool(fake, quiet_options(16, 8));
    ASSERT_TRUE(pool);
    auto user = pool->create_user(2);
    ASSERT_TRUE(user);
    MrBuffer* a = user->get();
    MrBuffer* b = user->get();
    MrBuffer* c = user->get();  // from the global pool
    ASSERT_TRUE(a && b && c);
    EXPECT_HITS(*pool, 2, 0, 1);
    user->put(c);  // a and b are out: the L1 is complete, c goes to the bucket
    EXPECT_EQ(user->l1_free(), 0U);
    EXPECT_EQ(pool->stats().free_l2, 1U);
    user->put(a);
    user->put(b);
    EXPECT_EQ(user->l1_free(), 2U);
    EXPECT_EQ(user->get(), b);
    EXPECT_EQ(user->get(), a);
    EXPECT_EQ(user->get(), c);  // from the bucket
    EXPECT_HITS(*pool, 4, 1, 1);
    for (MrBuffer* e : {a, b, c}) user->put(e);
}

// A user that joined while the global pool was short starts with a partial
// L1; entries it takes from elsewhere fill it up to its size, no further.
TEST(MrPoolTest, PutTopsUpAnL1ThatStartedShort) {
    std::shared_ptr<FakeState> fake;
    auto pool = fake_pool(fake, quiet_options(16, 4));
    ASSERT_TRUE(pool);
    auto first = pool->create_user(3);  // takes 3 of the 4
    ASSERT_TRUE(first);
    auto user = pool->create_user(2);   // gets the last one
    ASSERT_TRUE(user);
    EXPECT_EQ(user->l1_free(), 1U);
    first->trim();                      // 3 back to the global pool
    MrBuffer* x = user->get();          // L1
    MrBuffer* y = user->get();          // global
    MrBuffer* z = user->get();          // global
    ASSERT_TRUE(x && y && z);
    user->put(y);  // the L1 holds 1 of 2: y joins it
    EXPECT_EQ(user->l1_free(), 1U);
    user->put(z);  // now 2 of 2 (x is out): z goes to the bucket
    EXPECT_EQ(user->l1_free(), 1U);
    EXPECT_EQ(pool->stats().free_l2, 1U);
    user->put(x);
    EXPECT_EQ(user->l1_free(), 2U);
}

TEST(MrPoolTest, PutSendsToTheBucketUntilFullThenToGlobal) {
    std::shared_ptr<FakeState> fake;
    auto pool = fake_pool(fake, quiet_options(16, 8));  // l2_entries 2
    ASSERT_TRUE(pool);
    auto user = pool->create_user(1);
    ASSERT_TRUE(user);
    MrBuffer* x = user->get();
    std::vector<MrBuffer*> g;
    for (int i = 0; i < 3; ++i) g.push_back(user->get());
    for (MrBuffer* b : g) ASSERT_NE(b, nullptr);
    EXPECT_EQ(pool->stats().free_global, 4U);
    user->put(x);
    user->put(g[0]);
    user->put(g[1]);
    auto s = pool->stats();
    EXPECT_EQ(s.free_l2, 2U);
    EXPECT_EQ(s.free_global, 4U);
    user->put(g[2]);
    s = pool->stats();
    EXPECT_EQ(s.free_l2, 2U);
    EXPECT_EQ(s.free_global, 5U);
    EXPECT_EQ(user->l1_free(), 1U);
}

TEST(MrPoolTest, NewUsersJoinTheLeastUsedBucket) {
    std::shared_ptr<FakeState> fake;
    auto pool = fake_pool(fake, quiet_options(64, 8));
    ASSERT_TRUE(pool);
    std::vector<std::optional<MrPoolUser>> users;
    for (int i = 0; i < 9; ++i) {
        auto u = pool->create_user(1);
        ASSERT_TRUE(u);
        EXPECT_EQ(u->bucket(), static_cast<std::uint32_t>(i % 4)) << "user " << i;
        users.emplace_back(std::move(*u));
    }
    EXPECT_EQ(pool->stats().users, 9U);
    users[1].reset();  // bucket 1
    users[5].reset();  // bucket 1
    users[2].reset();  // bucket 2: now 3, 0, 1, 2 users
    EXPECT_EQ(pool->stats().users, 6U);
    // 3,0,1,2 -> 1; 3,1,1,2 -> 1 (a tie goes to the lowest index); 3,2,1,2 -> 2; 3,2,2,2 -> 1
    const std::uint32_t expect[] = {1, 1, 2, 1};
    for (std::uint32_t want : expect) {
        auto u = pool->create_user(1);
        ASSERT_TRUE(u);
        EXPECT_EQ(u->bucket(), want);
        users.emplace_back(std::move(*u));
    }
}

TEST(MrPoolTest, UsersOfOneBucketShareIt) {
    std::shared_ptr<FakeState> fake;
    auto pool = fake_pool(fake, quiet_options(16, 8));
    ASSERT_TRUE(pool);
    std::vector<MrPoolUser> users;
    for (int i = 0; i < 5; ++i) users.push_back(pool->create_user(1).value());
    ASSERT_EQ(users[4].bucket(), users[0].bucket());
    ASSERT_EQ(pool->stats().free_global, 3U);
    MrBuffer* x = users[0].get();  // L1
    MrBuffer* y = users[0].get();  // global
    users[0].put(x);
    users[0].put(y);  // to bucket 0
    MrBuffer* other = users[1].get();  // L1 of a user of bucket 1
    MrBuffer* not_shared = users[1].get();  // bucket 1 is empty: global
    EXPECT_HITS(*pool, 2, 0, 2);
    MrBuffer* l1 = users[4].get();
    MrBuffer* shared = users[4].get();  // bucket 0: y
    EXPECT_EQ(shared, y);
    EXPECT_HITS(*pool, 3, 1, 2);
    users[1].put(other);
    users[1].put(not_shared);
    users[4].put(l1);
    users[4].put(shared);
}

TEST(MrPoolTest, TrimAndDestructionReturnL1ToGlobal) {
    std::shared_ptr<FakeState> fake;
    auto pool = fake_pool(fake, quiet_options(16, 8));
    ASSERT_TRUE(pool);
    auto a = pool->create_user(4);
    auto b = pool->create_user(3);
    ASSERT_TRUE(a && b);
    EXPECT_EQ(pool->stats().free_global, 1U);
    a->trim();
    EXPECT_EQ(a->l1_free(), 0U);
    EXPECT_EQ(pool->stats().free_global, 5U);
    b = pool->create_user(1);  // the old b leaves: its three go back
    ASSERT_TRUE(b);
    EXPECT_EQ(pool->stats().free_global, 7U);
    EXPECT_EQ(pool->stats().users, 2U);
    EXPECT_EQ(pool->stats().l1_trims, 0U);  // trim() is not a give-back
}

// The pool is at its budget and empty; a user holding all entries in its
// L1 gives half back on a put once another user has missed.
TEST(MrPoolTest, UsersGiveL1EntriesBackWhenThePoolRunsShort) {
    std::shared_ptr<FakeState> fake;
    auto pool = fake_pool(fake, quiet_options(4, 4));
    ASSERT_TRUE(pool);
    auto rich = pool->create_user(4);
    auto poor = pool->create_user(1);
    ASSERT_TRUE(rich && poor);
    ASSERT_EQ(rich->l1_free(), 4U);
    EXPECT_EQ(poor->get(), nullptr);
    EXPECT_EQ(pool->stats().none_now, 1U);
    ASSERT_TRUE(rpm_test::eventually([&] {
        rich->put(rich->get());
        return pool->stats().l1_trims > 0;
    }));
    EXPECT_EQ(pool->stats().l1_trims, 2U);
    EXPECT_EQ(rich->l1_free(), 2U);
    MrBuffer* b = poor->get();
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(pool->stats().global_hits, 1U);
    // The pool is still short for `poor` (its flag was raised with rich's):
    // an entry that did not come from L1 goes where others can reach it.
    poor->put(b);
    EXPECT_EQ(poor->l1_free(), 0U);
    const auto s = pool->stats();
    EXPECT_EQ(s.free_l2 + s.free_global, 2U);  // and two in rich's L1
    EXPECT_EQ(s.registered, 4U);
}

}  // namespace

// A get that finds its own bucket and the global pool empty takes a free
// entry from another bucket before calling it a miss.
TEST(MrPoolTest, GetTakesFromAnotherBucketBeforeAMiss) {
    std::shared_ptr<FakeState> fake;
    auto pool = fake_pool(fake, quiet_options(16, 6));
    ASSERT_TRUE(pool);
    auto one = pool->create_user(2);
    auto two = pool->create_user(2);
    ASSERT_TRUE(one && two);
    ASSERT_NE(one->bucket(), two->bucket());
    std::vector<MrBuffer*> held;
    for (int i = 0; i < 4; ++i) held.push_back(one->get());  // 2 from L1, 2 from global
    for (MrBuffer* b : held) ASSERT_NE(b, nullptr);
    one->put(held[2]);  // one's L1 is complete (its own are out): to its bucket
    one->put(held[3]);
    EXPECT_EQ(pool->stats().free_l2, 2U);
    MrBuffer* x = two->get();
    MrBuffer* y = two->get();
    MrBuffer* z = two->get();  // two's bucket and the global pool are empty
    MrBuffer* w = two->get();
    ASSERT_TRUE(x && y && z && w);
    EXPECT_EQ(two->get(), nullptr);
    EXPECT_EQ(pool->stats().none_now, 1U);
    for (MrBuffer* b : {x, y, z, w}) two->put(b);
    one->put(held[0]);
    one->put(held[1]);
}
