// Region::open on what this machine has: tmpfs and disk-backed files. Both
// give page granularity; the PM paths are covered in domain_test.cpp.
#include "scratch.hpp"

#include <rpm/pmem.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string_view>
#include <sys/stat.h>
#include <sys/sysmacros.h>

namespace {

using rpm::pmem::Kind;
using rpm::pmem::OpenOptions;
namespace fs = std::filesystem;

constexpr std::size_t kMiB = 1024 * 1024;
constexpr std::string_view kRecord = "rpm region test record";

using rpm_test::create_opts;

void write_record(const rpm::pmem::Region& r, std::size_t offset) {
    std::memcpy(r.bytes().data() + offset, kRecord.data(), kRecord.size());
    r.persist(r.bytes().data() + offset, kRecord.size());
}

bool has_record(const rpm::pmem::Region& r, std::size_t offset) {
    return std::string_view(reinterpret_cast<const char*>(r.bytes().data() + offset),
                            kRecord.size()) == kRecord;
}

class Region : public rpm_test::ShmPoolTest {};

TEST_F(Region, CreatesTmpfsFileWithPageGranularity) {
    auto r = rpm::pmem::Region::open(path, create_opts(kMiB));
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r->kind(), Kind::tmpfs_file);
    EXPECT_EQ(r->granularity(), rpm::Granularity::page);
    EXPECT_EQ(r->domain(), rpm::PersistenceDomain::not_pmem);
    EXPECT_EQ(r->nd_region(), "");
    EXPECT_EQ(r->path(), path);
    EXPECT_EQ(r->size(), kMiB);
    EXPECT_EQ(r->bytes().size(), kMiB);
    EXPECT_NE(r->data(), nullptr);
    EXPECT_EQ(fs::file_size(path), kMiB);
    EXPECT_EQ(fs::status(path).permissions() & fs::perms::others_all, fs::perms::none);
}

TEST_F(Region, PersistFlushDrainAndDeepFlushWork) {
    auto r = rpm::pmem::Region::open(path, create_opts(kMiB));
    ASSERT_TRUE(r) << r.error().message();
    write_record(*r, 0);
    r->flush(r->data(), kRecord.size());
    r->drain();
    r->persist_function()(r->data(), kRecord.size());
    r->flush_function()(r->data(), kRecord.size());
    r->drain_function()();
    auto deep = r->deep_flush(r->data(), r->size());
    EXPECT_TRUE(deep) << deep.error().message();
    auto empty = r->deep_flush(r->bytes().data() + r->size(), 0);
    EXPECT_TRUE(empty) << empty.error().message();
}

TEST_F(Region, DataRoundTripsAfterReopen) {
    {
        auto r = rpm::pmem::Region::open(path, create_opts(2 * kMiB));
        ASSERT_TRUE(r) << r.error().message();
        write_record(*r, kMiB + 7);
    }
    auto again = rpm::pmem::Region::open(path);
    ASSERT_TRUE(again) << again.error().message();
    EXPECT_EQ(again->size(), 2 * kMiB);
    EXPECT_TRUE(has_record(*again, kMiB + 7));
}

TEST_F(Region, SmallerSizeMapsOnlyThatMuch) {
    ASSERT_TRUE(rpm::pmem::Region::open(path, create_opts(kMiB)));
    OpenOptions opts;
    opts.size = 64 * 1024;
    auto r = rpm::pmem::Region::open(path, opts);
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r->size(), 64 * 1024u);
    EXPECT_EQ(fs::file_size(path), kMiB);
}

TEST_F(Region, CreateExtendsAnExistingFileAndKeepsItsData) {
    {
        auto r = rpm::pmem::Region::open(path, create_opts(64 * 1024));
        ASSERT_TRUE(r) << r.error().message();
        write_record(*r, 0);
    }
    auto r = rpm::pmem::Region::open(path, create_opts(kMiB));
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r->size(), kMiB);
    EXPECT_EQ(fs::file_size(path), kMiB);
    EXPECT_TRUE(has_record(*r, 0));
}

TEST_F(Region, RequiredPageGranularityIsAccepted) {
    auto opts = create_opts(kMiB);
    opts.required_granularity = rpm::Granularity::page;
    auto r = rpm::pmem::Region::open(path, opts);
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r->granularity(), rpm::Granularity::page);
}

TEST_F(Region, MoveConstructKeepsTheMapping) {
    auto r = rpm::pmem::Region::open(path, create_opts(kMiB));
    ASSERT_TRUE(r) << r.error().message();
    void* const data = r->data();
    rpm::pmem::Region moved(std::move(*r));
    EXPECT_EQ(moved.data(), data);
    EXPECT_EQ(moved.size(), kMiB);
    EXPECT_EQ(moved.path(), path);
    EXPECT_EQ(r->data(), nullptr);  // NOLINT(bugprone-use-after-move): moved-from is empty
    EXPECT_EQ(r->size(), 0u);
    // The moved-from one's persist path does nothing, and does not crash.
    r->persist(nullptr, 0);  // NOLINT(bugprone-use-after-move)
    r->flush(nullptr, 0);
    r->drain();
    EXPECT_NE(r->persist_function(), nullptr);
    EXPECT_NE(r->drain_function(), nullptr);
    EXPECT_FALSE(r->deep_flush(data, 8)) << "a moved-from region has nothing to deep-flush";
    write_record(moved, 0);
    EXPECT_TRUE(has_record(moved, 0));
}

TEST_F(Region, MoveAssignReleasesTheOldMapping) {
    auto a = rpm::pmem::Region::open(path, create_opts(kMiB));
    auto b = rpm::pmem::Region::open(scratch->path() / "other", create_opts(2 * kMiB));
    ASSERT_TRUE(a && b);
    void* const data = b->data();
    *a = std::move(*b);
    EXPECT_EQ(a->data(), data);
    EXPECT_EQ(a->size(), 2 * kMiB);
    EXPECT_EQ(a->path(), scratch->path() / "other");
    write_record(*a, 0);
    EXPECT_TRUE(has_record(*a, 0));
}

TEST_F(Region, NdRegionIsLookedUpUnderTheSysfsRoot) {
    // A fake sysfs saying the file's device is in region4 with eADR: the
    // region is reported, but page granularity still means not_pmem.
    struct stat st {};
    ASSERT_EQ(::stat(scratch->path().c_str(), &st), 0);
    rpm_test::ScratchDir sysfs(fs::temp_directory_path());
    const fs::path dev = sysfs.path() / "sys/devices/ndbus0/region4/namespace4.0/block/pmem4";
    fs::create_directories(dev);
    rpm_test::make_link(
        dev, sysfs.path() / "sys/dev/block" /
                 (std::to_string(major(st.st_dev)) + ":" + std::to_string(minor(st.st_dev))));
    rpm_test::write_file(sysfs.path() / "sys/bus/nd/devices/region4/persistence_domain",
                         "cpu_cache\n");
    auto opts = create_opts(kMiB);
    opts.sysfs_root = sysfs.path();
    auto r = rpm::pmem::Region::open(path, opts);
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r->nd_region(), "region4");
    EXPECT_EQ(r->domain(), rpm::PersistenceDomain::not_pmem);
}

TEST(RegionOnDisk, FileOnDiskIsARegularFileAndRoundTrips) {
    auto dir = rpm_test::disk_dir();
    if (!dir)
        GTEST_SKIP()
            << "the build tree is on tmpfs or not writable: no disk-backed directory to test in";
    rpm_test::ScratchDir scratch(*dir);
    const fs::path path = scratch.path() / "pool";
    {
        auto r = rpm::pmem::Region::open(path, create_opts(kMiB));
        ASSERT_TRUE(r) << r.error().message();
        EXPECT_EQ(r->kind(), Kind::regular_file);
        EXPECT_EQ(r->granularity(), rpm::Granularity::page);
        EXPECT_EQ(r->domain(), rpm::PersistenceDomain::not_pmem);
        write_record(*r, 4096);
        auto deep = r->deep_flush(r->data(), r->size());
        EXPECT_TRUE(deep) << deep.error().message();
    }
    auto r = rpm::pmem::Region::open(path);
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_TRUE(has_record(*r, 4096));
}

}  // namespace
