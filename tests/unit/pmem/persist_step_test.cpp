// The persist step's one executor (src/pmem/persist_step.hpp), which
// the rpm server and the NVMe-oF PM backend share: every step over several
// extents (unaligned, one spanning a page boundary) succeeds and leaves the
// data; a step it does not know is refused, not taken for done.
#include "scratch.hpp"

#include "pmem/persist_step.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace {

using SP = rpm::flush::ServerPersist;

struct Extent {
    std::uint64_t offset, length;
};

class PersistStep : public rpm_test::ShmPoolTest {};

TEST_F(PersistStep, EveryStepOverSeveralExtentsSucceedsAndKeepsTheData) {
    auto r = rpm::pmem::Region::open(path, rpm_test::create_opts(1 << 20));
    ASSERT_TRUE(r) << r.error().message();
    const std::string rec = "persist step executor";
    for (SP step : {SP::none, SP::sfence, SP::cache_flush_sfence, SP::cache_flush_sfence_deep_flush, SP::msync}) {
        const std::uint64_t base = 65536 * static_cast<std::uint64_t>(step);
        const std::vector<Extent> extents{{base + 100, rec.size()}, {base + 4096 - 7, rec.size()}, {base + 9000, 1}};
        for (const auto& e : extents) std::memcpy(r->bytes().data() + e.offset, rec.data(), e.length);
        auto ok = rpm::pmem::detail::run_persist_step(*r, step, extents);
        ASSERT_TRUE(ok) << rpm::flush::to_string(step) << ": " << ok.error().message();
        for (const auto& e : extents)
            EXPECT_EQ(std::memcmp(r->bytes().data() + e.offset, rec.data(), e.length), 0) << rpm::flush::to_string(step);
    }
}

TEST_F(PersistStep, AnUnknownStepIsRefused) {
    auto r = rpm::pmem::Region::open(path, rpm_test::create_opts(1 << 20));
    ASSERT_TRUE(r) << r.error().message();
    const Extent e[] = {{0, 64}};
    auto ok = rpm::pmem::detail::run_persist_step(*r, static_cast<SP>(250), e);
    ASSERT_FALSE(ok);
    EXPECT_EQ(ok.error().code(), rpm::errc::invalid_argument);
}

// msync's failure cannot be caused reliably from a test (past the mapping
// another mapping may sit: under ASan the first CI run found one), so only
// the unaligned start, widened down to its page, is checked here.
TEST_F(PersistStep, MsyncOfAnUnalignedExtentSucceeds) {
    auto r = rpm::pmem::Region::open(path, rpm_test::create_opts(1 << 20));
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_TRUE(rpm::pmem::detail::msync_extent(*r, 4096 + 5, 100));
    EXPECT_TRUE(rpm::pmem::detail::msync_extent(*r, 4096 - 3, 10)) << "an extent across a page boundary";
}

// A batch's extents are msync'ed a page once, adjacent pages in one call:
// three extents in page 0 (one across into page 1), one in page 1, one in
// page 3 and one in page 5 are three calls (pages 0-1, 3, 5), not six.
TEST_F(PersistStep, MsyncOfABatchTakesEachRunOfPagesOnce) {
    auto r = rpm::pmem::Region::open(path, rpm_test::create_opts(1 << 20));
    ASSERT_TRUE(r) << r.error().message();
    std::vector<rpm::pmem::detail::Extent> e{
        {20 * 1024, 8}, {10, 8}, {100, 50}, {4090, 20}, {5000, 8}, {12 * 1024 + 1, 1}};
    auto calls = rpm::pmem::detail::msync_extents(*r, e);
    ASSERT_TRUE(calls) << calls.error().message();
    EXPECT_EQ(*calls, 3u);
    std::vector<rpm::pmem::detail::Extent> no_extents;
    auto zero = rpm::pmem::detail::msync_extents(*r, no_extents);
    ASSERT_TRUE(zero);
    EXPECT_EQ(*zero, 0u);
}

// The runs themselves: whole pages, sorted, adjacent and overlapping ones
// merged, an empty extent dropped.
TEST(PageRuns, WholePagesSortedAndMerged) {
    std::vector<rpm::pmem::detail::Extent> e{
        {20 * 1024, 8}, {10, 8}, {100, 50}, {4090, 20}, {5000, 8}, {12 * 1024 + 1, 1}, {8192, 0}};
    rpm::pmem::detail::page_runs(e, 4096);
    ASSERT_EQ(e.size(), 3u);
    EXPECT_EQ(e[0].offset, 0u);
    EXPECT_EQ(e[0].length, 8192u);
    EXPECT_EQ(e[1].offset, 12288u);
    EXPECT_EQ(e[1].length, 4096u);
    EXPECT_EQ(e[2].offset, 20480u);
    EXPECT_EQ(e[2].length, 4096u);
}

} // namespace
