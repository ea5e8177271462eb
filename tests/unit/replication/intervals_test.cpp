#include "replication/intervals.hpp"

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

TEST(IntervalSet, PastItsLimitTheSmallestGapsCloseFirst) {
    IntervalSet s(0, 4);
    // Four close together (gaps 9, 9, 19), one far away (gap 10000).
    for (std::uint64_t at : {0, 10, 20, 40}) s.add(at, 1);
    s.add(10041, 1);
    // 5 ranges > 4: down to 2, closing the three smallest gaps.
    EXPECT_EQ(s.spans(), (std::vector<Span>{{0, 41}, {10041, 1}}));
    EXPECT_EQ(s.bytes(), 42u);
}

TEST(IntervalSet, ScatteredWritesAndATailAreNotCopiedAsOneSpan) {
    // A member away while a KV store wrote 20,000 scattered 8-byte index
    // slots in [0, 1 MiB) and appended a log tail at [64 MiB, 65 MiB): the
    // old log in between (63 MiB) must not be part of what it is sent.
    // Each put: its record appended to the log (52 B), then its slot.
    IntervalSet s;
    std::uint64_t x = 12345;
    const std::uint64_t log = 64u << 20;
    for (std::uint64_t i = 0; i < 20000; ++i) {
        s.add(log + i * 52, 52);
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        s.add((x >> 20) % (1u << 20) / 8 * 8, 8);
    }
    EXPECT_LE(s.ranges(), 4096u);
    EXPECT_LE(s.bytes(), (1u << 20) + 20000u * 52);  // at most the index area and the tail
    const auto spans = s.spans();
    EXPECT_EQ(spans.back().offset, log);
    EXPECT_LT(spans[spans.size() - 2].offset + spans[spans.size() - 2].length, 1u << 20);
}

TEST(IntervalSet, ALimitOfOneStillCoversEverything) {
    IntervalSet s(0, 1);
    s.add(0, 1);
    s.add(100, 1);
    EXPECT_EQ(s.spans(), (std::vector<Span>{{0, 101}}));
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
