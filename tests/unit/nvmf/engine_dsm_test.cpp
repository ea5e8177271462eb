// Dataset Management (deallocate) through the software engine: holes in a
// file that read as zeroes, zeroed PM, every range checked before any is
// touched, the attribute that does nothing, and the offload type.
#include "engine_fixture.hpp"

#include <sys/stat.h>

#include <cstring>

namespace rpm::nvmf {
namespace {

using namespace test;
namespace io = wire::io;

struct Range {
    std::uint64_t slba;
    std::uint32_t nlb;
};

/// A Dataset Management SQE for `ranges` ranges; `deallocate`: attribute AD.
std::array<std::uint8_t, 64> dsm_sqe(std::size_t ranges, bool deallocate, std::uint32_t nsid = 1) {
    wire::Sqe s;
    s.set_opcode(io::dataset_management);
    s.set_cid(9);
    s.set_nsid(nsid);
    s.set_cdw(10, std::uint32_t(ranges - 1));
    s.set_cdw(11, deallocate ? 1u << 2 : 0u);
    return s.b;
}

/// The ranges as the command's data: context attributes, length in LBAs, starting LBA.
void put_ranges(std::span<std::byte> out, std::initializer_list<Range> ranges) {
    auto* d = reinterpret_cast<std::uint8_t*>(out.data());
    std::size_t i = 0;
    for (const auto& r : ranges) {
        wire::put32(d + i * 16, 0);
        wire::put32(d + i * 16 + 4, r.nlb);
        wire::put64(d + i * 16 + 8, r.slba);
        ++i;
    }
}

std::uint64_t allocated_bytes(const fs::path& p) {
    struct stat st{};
    EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
    return std::uint64_t(st.st_blocks) * 512;
}

/// Whether the file system under `dir` punches holes (tmpfs, ext4, xfs do).
bool punches_holes(const fs::path& dir) {
    const auto p = dir / "probe";
    const int fd = ::open(p.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return false;
    const bool ok = ::ftruncate(fd, 65536) == 0 &&
                    ::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4096) == 0;
    ::close(fd);
    fs::remove(p);
    return ok;
}

class NvmfEngineDsm : public ::testing::Test {
protected:
    static constexpr std::uint64_t size = 1 * MiB;  // 2048 blocks of 512

    NvmfEngineDsm() {
        // Every block written: a deallocated one must read back as zeroes.
        fill(buf.bytes(), 21);
        for (std::uint64_t lba = 0; lba < 2048; lba += 256)
            EXPECT_EQ(rig.run(buf.bytes(), io::write, 1, lba, 256), sc::success);
    }

    std::uint16_t dsm(std::initializer_list<Range> ranges, bool deallocate = true) {
        put_ranges(ranges_buf.bytes(), ranges);
        return rig.engine->execute_software(rig.s, view(dsm_sqe(ranges.size(), deallocate)), ranges_buf.bytes());
    }

    TempDir dir;
    Rig rig{dir / "disk", size};
    AlignedBuffer buf{128 * KiB};
    AlignedBuffer ranges_buf{4096};
};

TEST_F(NvmfEngineDsm, DeallocatedBlocksOfAFileReadAsZeroesAndTheRestIsKept) {
    EXPECT_EQ(dsm({{256, 256}, {1024, 512}}), sc::success);
    const auto disk = read_file(rig.file, 0, size);
    const std::span<const std::byte> d(disk);
    EXPECT_TRUE(holds(d.first(256 * 512), 21));
    EXPECT_TRUE(zero(d.subspan(256 * 512, 256 * 512)));
    EXPECT_FALSE(zero(d.subspan(512 * 512, 512)));
    EXPECT_TRUE(zero(d.subspan(1024 * 512, 512 * 512)));
    EXPECT_FALSE(zero(d.subspan(1536 * 512, 512)));
    // Through the engine too.
    EXPECT_EQ(rig.run(buf.bytes(), io::read, 1, 256, 256), sc::success);
    EXPECT_TRUE(zero(buf.bytes()));
    const auto st = rig.engine->stats(rig.s);
    EXPECT_EQ(st.deallocates, 1u);
    EXPECT_EQ(st.bytes_deallocated, 768u * 512);
    const auto ns = rig.engine->namespaces(rig.s);
    ASSERT_EQ(ns.size(), 1u);
    EXPECT_TRUE(ns[0].deallocated_reads_zeroes);
}

TEST_F(NvmfEngineDsm, AFileGivesTheDeallocatedSpaceBack) {
    if (!punches_holes(dir.path())) GTEST_SKIP() << dir.path() << " cannot punch holes (deallocate writes zeroes there)";
    const auto before = allocated_bytes(rig.file);
    ASSERT_GE(before, size);
    EXPECT_EQ(dsm({{0, 1024}}), sc::success);  // half the namespace, 512 KiB
    EXPECT_LE(allocated_bytes(rig.file), before - 512 * KiB);
}

TEST_F(NvmfEngineDsm, ARangeOutsideTheNamespaceDeallocatesNothing) {
    EXPECT_EQ(dsm({{0, 8}, {2044, 8}}), sc::lba_out_of_range);  // the second ends 4 blocks past the last
    EXPECT_EQ(dsm({{0, 8}, {~std::uint64_t{0} - 2, 8}}), sc::lba_out_of_range);  // would wrap
    EXPECT_TRUE(holds(read_file(rig.file, 0, 8 * 512), 21));
    EXPECT_EQ(rig.engine->stats(rig.s).deallocates, 0u);
    EXPECT_EQ(dsm({{2040, 8}}), sc::success);  // the last blocks are in range
}

TEST_F(NvmfEngineDsm, WithoutTheDeallocateAttributeNothingChanges) {
    EXPECT_EQ(dsm({{0, 2048}}, false), sc::success);
    EXPECT_TRUE(holds(read_file(rig.file, 0, 128 * KiB), 21));
    EXPECT_EQ(rig.engine->stats(rig.s).deallocates, 0u);
}

TEST_F(NvmfEngineDsm, ARangeOfNoBlocksIsNothingToDo) {
    EXPECT_EQ(dsm({{5, 0}, {2048, 0}}), sc::success);
    EXPECT_TRUE(holds(read_file(rig.file, 0, 128 * KiB), 21));
}

TEST_F(NvmfEngineDsm, DataShorterThanItsRangesIsAnInternalError) {
    // 256 ranges (NR 255) need 4096 bytes; 16 came.
    std::array<std::byte, 16> one{};
    EXPECT_EQ(rig.engine->execute_software(rig.s, view(dsm_sqe(256, true)), one), sc::internal_error);
    EXPECT_TRUE(holds(read_file(rig.file, 0, 8 * 512), 21));
}

TEST(NvmfEngineDsmPm, DeallocatedPmIsZeroed) {
    auto shm = tmpfs_dir();
    if (!shm) GTEST_SKIP() << "/dev/shm is not tmpfs";
    TempDir dir(*shm);
    Rig rig(dir / "pm", 1 * MiB, 512, {}, BackendKind::pmem);
    AlignedBuffer buf(128 * KiB);
    fill(buf.bytes(), 8);
    ASSERT_EQ(rig.run(buf.bytes(), io::write, 1, 0, 64), sc::success);
    AlignedBuffer ranges(4096);
    put_ranges(ranges.bytes(), {{16, 16}});
    ASSERT_EQ(rig.engine->execute_software(rig.s, view(dsm_sqe(1, true)), ranges.bytes()), sc::success);
    const auto disk = read_file(rig.file, 0, 64 * 512);
    EXPECT_TRUE(holds(std::span(disk).first(16 * 512), 8));
    EXPECT_TRUE(zero(std::span(disk).subspan(16 * 512, 16 * 512)));
    EXPECT_FALSE(zero(std::span(disk).subspan(32 * 512, 512)));
    EXPECT_TRUE(rig.engine->namespaces(rig.s)[0].deallocated_reads_zeroes);
}

TEST(NvmfEngineDsmTypes, AnOffloadQueueRunsItOnlyWhenItsSubsystemAskedForIt) {
    TempDir dir;
    Rig rig(dir / "disk", 1 * MiB);
    auto q = rig.engine->enable(rig.s);
    ASSERT_TRUE(q) << q.error().message();
    put_ranges((*q)->staging(), {{0, 8}});
    EXPECT_EQ((*q)->execute(view(dsm_sqe(1, true))), sc::success);
    EXPECT_EQ(rig.engine->stats(rig.s).deallocates, 1u);

    SubsystemAttrs a;
    a.offload_types = offload_read_write_flush | offload_write_zeroes;
    Rig narrow(dir / "narrow", 1 * MiB, 512, a);
    auto nq = narrow.engine->enable(narrow.s);
    ASSERT_TRUE(nq) << nq.error().message();
    put_ranges((*nq)->staging(), {{0, 8}});
    EXPECT_EQ((*nq)->execute(view(dsm_sqe(1, true))), sc::invalid_opcode);
}

} // namespace
} // namespace rpm::nvmf
