#include "replication/detail/intervals.hpp"

#include <gtest/gtest.h>

namespace rpm::replication {
namespace {

TEST(IntervalSet, MergesOverlappingAndAdjacentRanges) {
    IntervalSet s;
    s.add(10, 10);
    s.add(20, 5);   // adjacent
    s.add(12, 3);   // inside
    s.add(100, 1);
    EXPECT_EQ(s.spans(), (std::vector<Span>{{10, 15}, {100, 1}}));
    EXPECT_EQ(s.bytes(), 16u);
    s.add(0, 200);  // swallows both
    EXPECT_EQ(s.spans(), (std::vector<Span>{{0, 200}}));
}

TEST(IntervalSet, GapMergesNearbyRanges) {
    IntervalSet s(64);
    s.add(0, 8);
    s.add(70, 8);   // 62 bytes apart: merged
    s.add(300, 8);  // far: separate
    EXPECT_EQ(s.spans(), (std::vector<Span>{{0, 78}, {300, 8}}));
}

TEST(IntervalSet, CollapsesPastItsLimitIntoOneCoveringRange) {
    IntervalSet s(0, 4);
    for (std::uint64_t i = 0; i < 5; ++i) s.add(i * 100, 1);
    EXPECT_EQ(s.spans(), (std::vector<Span>{{0, 401}}));
}

TEST(IntervalSet, EmptyAddsNothingAndSetsCombine) {
    IntervalSet a, b;
    a.add(5, 0);
    EXPECT_TRUE(a.empty());
    a.add(0, 4);
    b.add(4, 4);
    b.add(50, 2);
    a.add(b);
    EXPECT_EQ(a.spans(), (std::vector<Span>{{0, 8}, {50, 2}}));
    a.clear();
    EXPECT_TRUE(a.empty());
}

} // namespace
} // namespace rpm::replication
