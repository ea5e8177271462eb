// SubAllocator: alignment, exhaustion, coalescing in every order, the
// fragmentation figure, double frees, and requests it must refuse.
#include "alloc_fixture.hpp"
#include "p2p/suballocator.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <random>
#include <vector>

namespace rpm::p2p::detail {
namespace {

using test::KiB;
using test::MiB;

// No two free extents touch (coalescing is complete) and the free bytes add up.
void expect_coalesced(const SubAllocator& a) {
    std::uint64_t sum = 0, prev_end = 0;
    bool first = true;
    for (const auto& [off, len] : a.free_extents()) {
        EXPECT_GT(len, 0u);
        if (!first) {
            EXPECT_GT(off, prev_end) << "adjacent free extents at " << off;
        }
        first = false;
        prev_end = off + len;
        sum += len;
    }
    EXPECT_EQ(sum, a.free_bytes());
}

TEST(P2pSubAllocator, EveryPowerOfTwoAlignmentHoldsForBasePlusOffset) {
    // The provider starts 4 KiB + 512 into its BAR: alignment is of the
    // BAR address, not of the offset.
    const std::uint64_t base = 4 * KiB + 512;
    SubAllocator a(base, 64 * MiB);
    ASSERT_TRUE(a.allocate(3, 1));  // knock the free space off any alignment
    for (std::uint64_t align = 1; align <= 2 * MiB; align <<= 1) {
        auto off = a.allocate(100, align);
        ASSERT_TRUE(off) << align << ": " << off.error().message();
        EXPECT_EQ((base + *off) % align, 0u) << "align " << align;
    }
    expect_coalesced(a);
}

TEST(P2pSubAllocator, AlignmentGapStaysFree) {
    SubAllocator a(0, 8 * MiB);
    ASSERT_EQ(*a.allocate(4 * KiB, 4 * KiB), 0u);
    auto off = a.allocate(1 * MiB, 2 * MiB);
    ASSERT_TRUE(off);
    EXPECT_EQ(*off, 2 * MiB);
    // [4 KiB, 2 MiB) is still there for a smaller buffer.
    auto small = a.allocate(1 * MiB, 4 * KiB);
    ASSERT_TRUE(small);
    EXPECT_EQ(*small, 4 * KiB);
    EXPECT_EQ(a.free_bytes(), 8 * MiB - 4 * KiB - 2 * MiB);
}

TEST(P2pSubAllocator, ExhaustionIsNoP2pMemoryAndSaysHowMuchIsFree) {
    SubAllocator a(0, 16 * MiB);
    for (int i = 0; i < 16; ++i) ASSERT_TRUE(a.allocate(1 * MiB, 4 * KiB)) << i;
    EXPECT_EQ(a.free_bytes(), 0u);
    EXPECT_EQ(a.largest_free(), 0u);
    EXPECT_EQ(a.fragmentation(), 0.0);
    auto r = a.allocate(1, 1);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::no_p2p_memory);
    EXPECT_NE(r.error().detail().find("0 bytes free"), std::string::npos) << r.error().detail();
    EXPECT_EQ(a.live(), 16u);
}

TEST(P2pSubAllocator, FreeingInEveryOrderCoalescesToOneExtent) {
    std::array<int, 4> order{0, 1, 2, 3};
    int permutations = 0;
    do {
        SubAllocator a(0, 4 * MiB);
        std::array<std::uint64_t, 4> offs{};
        for (auto& o : offs) o = *a.allocate(1 * MiB, 4 * KiB);
        for (int i : order) {
            ASSERT_TRUE(a.free(offs[i]));
            expect_coalesced(a);
        }
        ASSERT_EQ(a.free_extents().size(), 1u);
        EXPECT_EQ(a.largest_free(), 4 * MiB);
        EXPECT_EQ(a.live(), 0u);
        // The whole space is one allocation again.
        EXPECT_EQ(*a.allocate(4 * MiB, 4 * KiB), 0u);
        ++permutations;
    } while (std::next_permutation(order.begin(), order.end()));
    EXPECT_EQ(permutations, 24);
}

TEST(P2pSubAllocator, FragmentationIsOneMinusLargestOverFree) {
    SubAllocator a(0, 4 * MiB);
    std::array<std::uint64_t, 4> offs{};
    for (auto& o : offs) o = *a.allocate(1 * MiB, 4 * KiB);
    ASSERT_TRUE(a.free(offs[0]));
    ASSERT_TRUE(a.free(offs[2]));
    EXPECT_EQ(a.free_bytes(), 2 * MiB);
    EXPECT_EQ(a.largest_free(), 1 * MiB);
    EXPECT_DOUBLE_EQ(a.fragmentation(), 0.5);
    auto r = a.allocate(2 * MiB, 4 * KiB);  // 2 MiB free, but not in one piece
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::no_p2p_memory);
    EXPECT_NE(r.error().detail().find("largest extent 1 MiB"), std::string::npos);
    ASSERT_TRUE(a.free(offs[1]));  // joins both neighbours
    EXPECT_EQ(a.largest_free(), 3 * MiB);
    EXPECT_DOUBLE_EQ(a.fragmentation(), 0.0);
}

TEST(P2pSubAllocator, DoubleFreeIsAnErrorAndChangesNothing) {
    SubAllocator a(0, 1 * MiB);
    const auto off = *a.allocate(64 * KiB, 4 * KiB);
    const auto keep = *a.allocate(64 * KiB, 4 * KiB);
    ASSERT_TRUE(a.free(off));
    const auto before = a.free_extents();
    auto again = a.free(off);
    ASSERT_FALSE(again);
    EXPECT_EQ(again.error(), errc::invalid_argument);
    EXPECT_NE(again.error().detail().find("double free"), std::string::npos);
    EXPECT_EQ(a.free_extents(), before);
    EXPECT_FALSE(a.free(keep + 1));       // inside a live allocation, not its start
    EXPECT_FALSE(a.free(512 * KiB));      // never allocated
    EXPECT_EQ(a.live(), 1u);
}

TEST(P2pSubAllocator, RefusesZeroOversizeAndBadAlignment) {
    SubAllocator a(0, 1 * MiB);
    EXPECT_EQ(a.allocate(0, 4 * KiB).error(), errc::invalid_argument);
    EXPECT_EQ(a.allocate(1 * MiB + 1, 1).error(), errc::bad_size);
    EXPECT_EQ(a.allocate(64, 0).error(), errc::invalid_argument);
    EXPECT_EQ(a.allocate(64, 3).error(), errc::invalid_argument);
    EXPECT_EQ(a.allocate(64, 4 * MiB).error(), errc::invalid_argument);
    EXPECT_EQ(a.free_bytes(), 1 * MiB);
    EXPECT_TRUE(a.allocate(1 * MiB, 1));  // exactly all of it is fine
    SubAllocator empty(0, 0);
    EXPECT_EQ(empty.allocate(1, 1).error(), errc::bad_size);
}

TEST(P2pSubAllocator, BestFitTakesTheSmallestHoleThatFits) {
    SubAllocator a(0, 8 * MiB);
    std::vector<std::uint64_t> o;
    for (std::uint64_t len : {2 * MiB, 1 * MiB, 1 * MiB, 1 * MiB, 3 * MiB}) o.push_back(*a.allocate(len, 4 * KiB));
    ASSERT_TRUE(a.free(o[0]));  // a 2 MiB hole at 0
    ASSERT_TRUE(a.free(o[2]));  // a 1 MiB hole at 3 MiB
    EXPECT_EQ(*a.allocate(1 * MiB, 4 * KiB), 3 * MiB);
    EXPECT_EQ(*a.allocate(1 * MiB, 4 * KiB), 0u);
}

// Random allocations and frees against a plain model: no two live ranges
// overlap, all lie inside the provider, and everything coalesces at the end.
TEST(P2pSubAllocator, RandomWorkloadKeepsRangesDisjoint) {
    std::mt19937_64 rng(42);
    SubAllocator a(8 * KiB, 32 * MiB);
    std::map<std::uint64_t, std::uint64_t> live;  // offset -> length
    for (int step = 0; step < 4000; ++step) {
        if (live.empty() || rng() % 3 != 0) {
            const std::uint64_t len = 1 + rng() % (512 * KiB);
            const std::uint64_t align = std::uint64_t{1} << (rng() % 22);
            auto off = a.allocate(len, align);
            if (!off) {
                EXPECT_EQ(off.error(), errc::no_p2p_memory);
                continue;
            }
            EXPECT_EQ((a.base() + *off) % align, 0u);
            EXPECT_LE(*off + len, a.capacity());
            const auto next = live.lower_bound(*off);
            if (next != live.end()) {
                EXPECT_LE(*off + len, next->first);
            }
            if (next != live.begin()) {
                EXPECT_LE(std::prev(next)->first + std::prev(next)->second, *off);
            }
            live.emplace(*off, len);
        } else {
            auto it = std::next(live.begin(), static_cast<long>(rng() % live.size()));
            ASSERT_TRUE(a.free(it->first));
            live.erase(it);
        }
    }
    expect_coalesced(a);
    for (const auto& [off, len] : live) ASSERT_TRUE(a.free(off));
    EXPECT_EQ(a.free_extents().size(), 1u);
    EXPECT_EQ(a.free_bytes(), a.capacity());
}

TEST(P2pSubAllocator, FormatBytesIsExact) {
    EXPECT_EQ(format_bytes(0), "0 bytes");
    EXPECT_EQ(format_bytes(1), "1 byte");
    EXPECT_EQ(format_bytes(1536), "1536 bytes");
    EXPECT_EQ(format_bytes(4096), "4 KiB");
    EXPECT_EQ(format_bytes(MiB), "1 MiB");
    EXPECT_EQ(format_bytes(MiB + MiB / 2), "1536 KiB");
    EXPECT_EQ(format_bytes(std::uint64_t{3} << 30), "3 GiB");
}

} // namespace
} // namespace rpm::p2p::detail
