// I/O commands through the software engine on a block (file) backend:
// read after write through an offload queue and the software path, write
// zeroes, flush, the bounds, and every status the engine returns itself.
#include "engine_fixture.hpp"

#include <limits>

namespace rpm::nvmf {
namespace {

using namespace test;
namespace io = wire::io;

class NvmfEngineIo : public ::testing::Test {
protected:
    static constexpr std::uint64_t size = 1 * MiB;  // 2048 blocks of 512
    TempDir dir;
    Rig rig{dir / "disk", size};
    AlignedBuffer buf{128 * KiB};
};

TEST_F(NvmfEngineIo, ReadAfterWriteThroughAnOffloadQueue) {
    auto q = rig.engine->enable(rig.s);
    ASSERT_TRUE(q) << q.error().message();
    auto staging = (*q)->staging();
    ASSERT_GE(staging.size(), 128 * KiB);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(staging.data()) % 4096, 0u);
    fill(staging.first(8 * 512), 3);
    EXPECT_EQ((*q)->execute(view(sqe(io::write, 1, 16, 8))), sc::success);
    EXPECT_TRUE(holds(read_file(rig.file, 16 * 512, 8 * 512), 3));
    std::fill(staging.begin(), staging.end(), std::byte{0});
    EXPECT_EQ((*q)->execute(view(sqe(io::read, 1, 16, 8))), sc::success);
    EXPECT_TRUE(holds(staging.first(8 * 512), 3));
    EXPECT_TRUE(zero(staging.subspan(8 * 512, 512)));  // only the blocks asked for
    const auto st = rig.engine->stats(rig.s);
    EXPECT_EQ(st.commands, 2u);
    EXPECT_EQ(st.writes, 1u);
    EXPECT_EQ(st.reads, 1u);
    EXPECT_EQ(st.bytes_written, 8u * 512);
    EXPECT_EQ(st.bytes_read, 8u * 512);
    EXPECT_EQ(st.errors, 0u);
    EXPECT_EQ(st.enabled_queues, 1u);
}

TEST_F(NvmfEngineIo, ReadAfterWriteThroughTheSoftwarePath) {
    fill(buf.bytes().first(128 * KiB), 9);
    EXPECT_EQ(rig.run(buf.bytes(), io::write, 1, 100, 256), sc::success);
    EXPECT_TRUE(holds(read_file(rig.file, 100 * 512, 128 * KiB), 9));
    AlignedBuffer back(128 * KiB);
    EXPECT_EQ(rig.run(back.bytes(), io::read, 1, 100, 256), sc::success);
    EXPECT_TRUE(holds(back.bytes(), 9));
    EXPECT_EQ(rig.engine->stats(rig.s).enabled_queues, 0u);
    EXPECT_EQ(rig.engine->stats(rig.s).bytes_read, 128 * KiB);
}

TEST_F(NvmfEngineIo, WriteZeroesClearsOnlyItsBlocks) {
    fill(buf.bytes().first(64 * 512), 5);
    ASSERT_EQ(rig.run(buf.bytes(), io::write, 1, 0, 64), sc::success);
    fill(buf.bytes(), 77);  // Write Zeroes must not use the caller's buffer
    EXPECT_EQ(rig.run(buf.bytes(), io::write_zeroes, 1, 8, 16), sc::success);
    EXPECT_TRUE(holds(buf.bytes(), 77));
    const auto disk = read_file(rig.file, 0, 64 * 512);
    const std::span<const std::byte> d(disk);
    EXPECT_TRUE(holds(d.first(8 * 512), 5));
    EXPECT_TRUE(zero(d.subspan(8 * 512, 16 * 512)));
    EXPECT_FALSE(zero(d.subspan(24 * 512, 512)));
    EXPECT_EQ(rig.engine->stats(rig.s).write_zeroes, 1u);
}

TEST_F(NvmfEngineIo, WriteZeroesIsNotLimitedByTheTransferSize) {
    // All 2048 blocks (1 MiB) at once: 8 times max_io_size, no data moves.
    fill(buf.bytes(), 1);
    ASSERT_EQ(rig.run(buf.bytes(), io::write, 1, 2047, 1), sc::success);
    EXPECT_EQ(rig.run(buf.bytes(), io::write_zeroes, 1, 0, 2048), sc::success);
    EXPECT_TRUE(zero(read_file(rig.file, 0, size)));
}

TEST_F(NvmfEngineIo, FlushOneNamespaceAndAll) {
    rig.add(dir / "second", 64 * KiB, 4096, BackendKind::block, 2);
    EXPECT_EQ(rig.run(buf.bytes(), io::flush, 1), sc::success);
    EXPECT_EQ(rig.run(buf.bytes(), io::flush, 0xFFFFFFFF), sc::success);
    EXPECT_EQ(rig.run(buf.bytes(), io::flush, 3), sc::invalid_ns);
    const auto st = rig.engine->stats(rig.s);
    EXPECT_EQ(st.flushes, 2u);
    EXPECT_EQ(st.errors, 1u);
}

TEST_F(NvmfEngineIo, FuaWritesComplete) {
    fill(buf.bytes().first(512), 12);
    EXPECT_EQ(rig.engine->execute_software(rig.s, view(sqe(io::write, 1, 5, 1, true)), buf.bytes()), sc::success);
    EXPECT_TRUE(holds(read_file(rig.file, 5 * 512, 512), 12));
}

TEST_F(NvmfEngineIo, UnknownOpcodesAndNamespaces) {
    EXPECT_EQ(rig.run(buf.bytes(), 0x05, 1), sc::invalid_opcode);       // Compare: not offered
    EXPECT_EQ(rig.run(buf.bytes(), io::fabrics, 1), sc::invalid_opcode);
    EXPECT_EQ(rig.run(buf.bytes(), io::read, 2), sc::invalid_ns);
    EXPECT_EQ(rig.run(buf.bytes(), io::read, 0), sc::invalid_ns);
    EXPECT_EQ(rig.run(buf.bytes(), io::write_zeroes, 0xFFFFFFFF), sc::invalid_ns);
    const auto st = rig.engine->stats(rig.s);
    EXPECT_EQ(st.commands, 5u);
    EXPECT_EQ(st.errors, 5u);
    EXPECT_EQ(st.reads + st.writes + st.write_zeroes, 0u);
}

TEST_F(NvmfEngineIo, TheLastBlockIsInRangeAndOnePastIsNot) {
    const std::uint64_t blocks = size / 512;
    fill(buf.bytes().first(512), 8);
    EXPECT_EQ(rig.run(buf.bytes(), io::write, 1, blocks - 1, 1), sc::success);
    EXPECT_TRUE(holds(read_file(rig.file, size - 512, 512), 8));
    EXPECT_EQ(rig.run(buf.bytes(), io::read, 1, blocks - 1, 1), sc::success);
    EXPECT_EQ(rig.run(buf.bytes(), io::read, 1, blocks, 1), sc::lba_out_of_range);
    EXPECT_EQ(rig.run(buf.bytes(), io::write, 1, blocks - 1, 2), sc::lba_out_of_range);
    EXPECT_EQ(rig.run(buf.bytes(), io::write_zeroes, 1, blocks - 3, 4), sc::lba_out_of_range);
    EXPECT_EQ(rig.run(buf.bytes(), io::write_zeroes, 1, blocks - 4, 4), sc::success);
    EXPECT_EQ(fs::file_size(rig.file), size);  // nothing written past the end
}

TEST_F(NvmfEngineIo, AStartingLbaThatWouldOverflowIsOutOfRange) {
    const auto max = std::numeric_limits<std::uint64_t>::max();
    EXPECT_EQ(rig.run(buf.bytes(), io::read, 1, max, 1), sc::lba_out_of_range);
    EXPECT_EQ(rig.run(buf.bytes(), io::write, 1, max - 1, 8), sc::lba_out_of_range);
    EXPECT_EQ(rig.run(buf.bytes(), io::write_zeroes, 1, std::uint64_t(1) << 55, 1), sc::lba_out_of_range);
}

TEST_F(NvmfEngineIo, TransfersOverMaxIoSizeAreInvalid) {
    AlignedBuffer big(1 * MiB);
    EXPECT_EQ(rig.run(big.bytes(), io::read, 1, 0, 257), sc::invalid_field);   // 128.5 KiB > 128 KiB
    EXPECT_EQ(rig.run(big.bytes(), io::write, 1, 0, 2048), sc::invalid_field);
    EXPECT_EQ(rig.run(big.bytes(), io::read, 1, 0, 256), sc::success);
    EXPECT_EQ(rig.engine->stats(rig.s).errors, 2u);
}

TEST_F(NvmfEngineIo, ABufferSmallerThanTheTransferIsAnInternalError) {
    EXPECT_EQ(rig.run(buf.bytes().first(4096), io::read, 1, 0, 9), sc::internal_error);
    EXPECT_EQ(rig.run(buf.bytes().first(4096), io::read, 1, 0, 8), sc::success);
}

TEST_F(NvmfEngineIo, ReadingPastAShrunkenFileIsAnUnrecoveredReadError) {
    fs::resize_file(rig.file, 64 * KiB);  // the namespace still has 2048 blocks
    EXPECT_EQ(rig.run(buf.bytes(), io::read, 1, 0, 8), sc::success);
    EXPECT_EQ(rig.run(buf.bytes(), io::read, 1, 1024, 8), sc::unrecovered_read_error);
    EXPECT_EQ(rig.engine->stats(rig.s).errors, 1u);
}

TEST(NvmfEngineIoTypes, AQueueRunsOnlyTheOffloadTypesItsSubsystemAsked) {
    TempDir dir;
    SubsystemAttrs a;
    a.offload_types = offload_read_write_flush;
    Rig rig(dir / "disk", 1 * MiB, 4096, a);
    auto q = rig.engine->enable(rig.s);
    ASSERT_TRUE(q) << q.error().message();
    EXPECT_EQ((*q)->execute(view(sqe(io::write_zeroes, 1, 0, 1))), sc::invalid_opcode);
    EXPECT_EQ((*q)->execute(view(sqe(io::write, 1, 0, 1))), sc::success);
    AlignedBuffer buf(128 * KiB);
    EXPECT_EQ(rig.run(buf.bytes(), io::write_zeroes, 1, 0, 1), sc::success);  // software runs everything
}

TEST(NvmfEngineIoTypes, FourKibBlocksAddressByFourKib) {
    TempDir dir;
    Rig rig(dir / "disk", 1 * MiB, 4096);
    auto ns = rig.engine->namespaces(rig.s);
    ASSERT_EQ(ns.size(), 1u);
    EXPECT_EQ(ns[0].blocks, 256u);
    EXPECT_EQ(ns[0].block_size, 4096u);
    AlignedBuffer buf(128 * KiB);
    fill(buf.bytes().first(8192), 4);
    EXPECT_EQ(rig.run(buf.bytes(), io::write, 1, 255, 1), sc::success);
    EXPECT_EQ(rig.run(buf.bytes(), io::write, 1, 255, 2), sc::lba_out_of_range);
    EXPECT_TRUE(holds(read_file(rig.file, 255 * 4096, 4096), 4));
}

} // namespace
} // namespace rpm::nvmf
