// LineSet: what a member missed, in lines, with bounded memory.
#include "replication/line_set.hpp"

#include <gtest/gtest.h>

#include <random>

namespace rpm::replication {
namespace {

TEST(LineSetTest, MarksTheLinesAWriteTouches) {
    LineSet s;
    EXPECT_TRUE(s.empty());
    s.add(70, 8);  // inside line 1
    EXPECT_EQ(s.spans(), (std::vector<Span>{{64, 64}}));
    s.add(120, 16);  // lines 1 and 2
    EXPECT_EQ(s.spans(), (std::vector<Span>{{64, 128}}));
    s.add(4096, 0);  // nothing
    EXPECT_EQ(s.bytes(), 128u);
    s.clear();
    EXPECT_TRUE(s.empty());
}

TEST(LineSetTest, LongRunsCrossWordsAndChunksAsOneSpan) {
    LineSet s;
    // 4096 lines per chunk of bits: this run crosses two chunk boundaries.
    const std::uint64_t from = 4096 * 64 - 100, length = 2 * 4096 * 64 + 300;
    s.add(from, length);
    const auto spans = s.spans();
    ASSERT_EQ(spans.size(), 1u);
    EXPECT_EQ(spans[0].offset, from / 64 * 64);
    EXPECT_EQ(spans[0].offset + spans[0].length, (from + length + 63) / 64 * 64);
    EXPECT_EQ(s.bytes(), spans[0].length);
}

TEST(LineSetTest, ScatteredSmallWritesCostTheirLinesNotTheSpanBetweenThem) {
    // The kv store's case: 100,000 8-byte index stores over a 256 MiB index
    // and a log appended in between. A 4096-range IntervalSet sent about
    // the whole index; the lines are 64 bytes per store.
    LineSet s;
    IntervalSet old;
    std::mt19937_64 rng(7);
    std::uint64_t log = 512ull << 20;
    for (int i = 0; i < 100000; ++i) {
        const std::uint64_t slot = rng() % (32ull << 20);
        s.add(4096 + slot * 8, 8);
        old.add(4096 + slot * 8, 8);
        s.add(log, 90);
        old.add(log, 90);
        log += 90;
    }
    const std::uint64_t written_lines_max = 100000 * 64 + 100000 * 90 + 64;
    EXPECT_LE(s.bytes(), written_lines_max);
    EXPECT_GT(old.bytes(), 100 * s.bytes() / 10);  // the old way: 10x more at least
    EXPECT_LE(s.footprint(), std::size_t{8} << 20);
}

TEST(LineSetTest, PastItsBudgetLinesGrowAndEverythingStaysCovered) {
    LineSet s(/*budget_bytes=*/16 * 512);  // 16 chunks of bits
    std::vector<Span> written;
    for (std::uint64_t i = 0; i < 64; ++i) {
        written.push_back({i * (1u << 20) + 3, 5});
        s.add(written.back().offset, written.back().length);
    }
    EXPECT_LE(s.footprint(), 16u * 512);
    EXPECT_GT(s.line_bytes(), 64u);
    // Every written byte still lies in a span.
    const auto spans = s.spans();
    for (const auto& w : written) {
        bool in = false;
        for (const auto& sp : spans) in |= sp.offset <= w.offset && w.offset + w.length <= sp.offset + sp.length;
        EXPECT_TRUE(in) << w.offset;
    }
}

TEST(LineSetTest, TakesAnIntervalSet) {
    IntervalSet r;
    r.add(0, 1);
    r.add(1000, 100);
    LineSet s;
    s.add(r);
    EXPECT_EQ(s.spans(), (std::vector<Span>{{0, 64}, {960, 192}}));
}

} // namespace
} // namespace rpm::replication
