#include "replication/quorum.hpp"

#include <gtest/gtest.h>

namespace rpm::replication {
namespace {

TEST(Quorum, NeededMembersPerPolicy) {
    EXPECT_EQ(*needed_members(Durability::all(), 4), 4u);
    EXPECT_EQ(*needed_members(Durability::majority(), 4), 3u);
    EXPECT_EQ(*needed_members(Durability::majority(), 3), 2u);
    EXPECT_EQ(*needed_members(Durability::majority(), 1), 1u);
    EXPECT_EQ(*needed_members(Durability::k_of_n(2), 3), 2u);
    EXPECT_EQ(needed_members(Durability::k_of_n(0), 3).error(), errc::invalid_argument);
    EXPECT_EQ(needed_members(Durability::k_of_n(4), 3).error(), errc::invalid_argument);
    EXPECT_EQ(needed_members(Durability::majority(false), 0).error(), errc::invalid_argument);
}

TEST(Quorum, KthFrontierIsTheLsnEnoughMembersReached) {
    EXPECT_EQ(kth_frontier({5, 9, 7}, 1), 9u);
    EXPECT_EQ(kth_frontier({5, 9, 7}, 2), 7u);
    EXPECT_EQ(kth_frontier({5, 9, 7}, 3), 5u);
    EXPECT_EQ(kth_frontier({5, 9}, 3), 0u);  // too few members: nothing is durable enough
    EXPECT_EQ(kth_frontier({}, 1), 0u);
}

TEST(Quorum, ReadQuorumIntersectsEveryWriteQuorum) {
    for (unsigned members = 1; members <= 7; ++members) {
        for (unsigned needed = 1; needed <= members; ++needed) {
            // Any `needed` members and any read quorum share one member.
            EXPECT_GT(read_quorum(members, needed) + needed, members) << members << "/" << needed;
            EXPECT_LE(read_quorum(members, needed), members);
        }
    }
    EXPECT_EQ(read_quorum(4, 3), 2u);
    EXPECT_EQ(read_quorum(4, 1), 4u);
}

TEST(Quorum, DurabilityNamesRoundTrip) {
    for (const char* s : {"all+local", "majority-local", "2-of-n+local", "1-of-n-local"}) {
        auto d = parse_durability(s);
        ASSERT_TRUE(d) << s;
        EXPECT_EQ(to_string(*d), s);
    }
    EXPECT_TRUE(parse_durability("3")->include_local);
    EXPECT_EQ(parse_durability("").error(), errc::invalid_argument);
    EXPECT_EQ(parse_durability("majority+remote").error(), errc::invalid_argument);
    EXPECT_EQ(parse_durability("-1").error(), errc::invalid_argument);
}

} // namespace
} // namespace rpm::replication
