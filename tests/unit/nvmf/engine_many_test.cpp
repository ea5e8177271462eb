// OffloadQueue::execute_many on the software engine: a queue's reads and
// writes run together (ThreadRing::run_many), each at its own offset of
// the staging buffer, each with the status execute() would give it; other
// commands and failing ones among them are answered as alone.
#include "engine_fixture.hpp"

namespace rpm::nvmf {
namespace {

using namespace test;
namespace io = wire::io;

class NvmfEngineMany : public ::testing::Test {
protected:
    static constexpr std::uint64_t size = 1 * MiB;  // 2048 blocks of 512
    TempDir dir;
    Rig rig{dir / "disk", size};
};

TEST_F(NvmfEngineMany, TheSoftwareEnginesQueuesRunMany) {
    auto q = rig.engine->enable(rig.s);
    ASSERT_TRUE(q);
    EXPECT_TRUE((*q)->runs_many());
}

TEST_F(NvmfEngineMany, WritesThenReadsEachAtItsOwnOffset) {
    auto q = rig.engine->enable(rig.s);
    ASSERT_TRUE(q);
    auto staging = (*q)->staging();
    // Four writes of 8 blocks, their data 4 KiB apart, to scattered LBAs.
    const std::uint64_t lbas[] = {0, 512, 64, 1000};
    std::vector<std::array<std::uint8_t, 64>> w, r;
    for (unsigned i = 0; i < 4; ++i) {
        fill(staging.subspan(i * 4096, 4096), 10 + i);
        w.push_back(sqe(io::write, 1, lbas[i], 8));
        r.push_back(sqe(io::read, 1, lbas[i], 8));
    }
    std::vector<StagedCommand> cmds;
    for (unsigned i = 0; i < 4; ++i) cmds.push_back({view(w[i]), i * 4096u, 0xFFFF});
    (*q)->execute_many(cmds);
    for (unsigned i = 0; i < 4; ++i) {
        EXPECT_EQ(cmds[i].status, sc::success) << i;
        EXPECT_TRUE(holds(read_file(rig.file, lbas[i] * 512, 4096), 10 + i)) << i;
    }
    std::fill(staging.begin(), staging.end(), std::byte{0});
    // Read back in another order, to other offsets.
    cmds.clear();
    for (unsigned i = 0; i < 4; ++i) cmds.push_back({view(r[3 - i]), i * 8192u, 0xFFFF});
    (*q)->execute_many(cmds);
    for (unsigned i = 0; i < 4; ++i) {
        EXPECT_EQ(cmds[i].status, sc::success) << i;
        EXPECT_TRUE(holds(staging.subspan(i * 8192, 4096), 10 + (3 - i))) << i;
        EXPECT_TRUE(zero(staging.subspan(i * 8192 + 4096, 4096))) << i;
    }
    const auto st = rig.engine->stats(rig.s);
    EXPECT_EQ(st.commands, 8u);
    EXPECT_EQ(st.writes, 4u);
    EXPECT_EQ(st.reads, 4u);
    EXPECT_EQ(st.bytes_written, 4u * 4096);
    EXPECT_EQ(st.bytes_read, 4u * 4096);
    EXPECT_EQ(st.errors, 0u);
}

TEST_F(NvmfEngineMany, EachCommandGetsTheStatusItWouldGetAlone) {
    auto q = rig.engine->enable(rig.s);
    ASSERT_TRUE(q);
    auto staging = (*q)->staging();
    fill(staging.first(4096), 4);
    const auto good = sqe(io::write, 1, 8, 8);
    const auto past_end = sqe(io::read, 1, 2047, 2);
    const auto no_ns = sqe(io::read, 9, 0, 1);
    const auto flush = sqe(io::flush, 1);
    const auto too_big = sqe(io::read, 1, 0, 512);  // 256 KiB: over max_io_size
    const auto beyond_staging = sqe(io::read, 1, 0, 8);
    std::vector<StagedCommand> cmds = {{view(good), 0, 0xFFFF},
                                       {view(past_end), 4096, 0xFFFF},
                                       {view(no_ns), 8192, 0xFFFF},
                                       {view(flush), 0, 0xFFFF},
                                       {view(too_big), 0, 0xFFFF},
                                       {view(beyond_staging), staging.size() - 512, 0xFFFF}};
    (*q)->execute_many(cmds);
    EXPECT_EQ(cmds[0].status, sc::success);
    EXPECT_EQ(cmds[1].status, sc::lba_out_of_range);
    EXPECT_EQ(cmds[2].status, sc::invalid_ns);
    EXPECT_EQ(cmds[3].status, sc::success);
    EXPECT_EQ(cmds[4].status, sc::invalid_field);
    EXPECT_EQ(cmds[5].status, sc::internal_error);  // its data would run past the staging buffer
    EXPECT_TRUE(holds(read_file(rig.file, 8 * 512, 4096), 4));
    const auto st = rig.engine->stats(rig.s);
    EXPECT_EQ(st.commands, 6u);
    EXPECT_EQ(st.errors, 4u);
    EXPECT_EQ(st.flushes, 1u);
}

} // namespace
} // namespace rpm::nvmf
