// Region::open's documented errors, each with a detail that names the cause.
#include "scratch.hpp"

#include <rpm/pmem.hpp>

#include <gtest/gtest.h>

#include "tests/support/as_nobody.hpp"

#include <fstream>
#include <string>
#include <system_error>

#include <sys/stat.h>
#include <unistd.h>

namespace {

using rpm::errc;
using rpm::pmem::OpenOptions;
using PmRegion = rpm::pmem::Region;
namespace fs = std::filesystem;

constexpr std::size_t kPage = 4096;

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

using rpm_test::create_opts;

void make_sized_file(const fs::path& path, std::size_t size) {
    std::ofstream(path).close();
    fs::resize_file(path, size);
}

// The first block device under /dev (stat only: open() rejects block
// devices before opening them, so nothing is ever written to it).
std::optional<fs::path> any_block_device() {
    std::error_code ec;
    for (fs::directory_iterator it("/dev", ec), end; !ec && it != end; it.increment(ec))
        if (it->is_block_file(ec)) return it->path();
    return std::nullopt;
}

class RegionErrors : public rpm_test::ShmPoolTest {};

TEST_F(RegionErrors, MissingPathIsPathNotFound) {
    auto r = PmRegion::open(path);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::path_not_found);
    EXPECT_PRED2(contains, r.error().detail(), path.string());
}

TEST_F(RegionErrors, CreateWithZeroSizeIsInvalidArgument) {
    auto r = PmRegion::open(path, create_opts(0));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::invalid_argument);
    EXPECT_FALSE(fs::exists(path));
}

TEST_F(RegionErrors, SizeLargerThanTheFileIsBadSize) {
    make_sized_file(path, kPage);
    OpenOptions opts;
    opts.size = 4 * kPage;
    auto r = PmRegion::open(path, opts);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::bad_size);
    EXPECT_PRED2(contains, r.error().detail(), "4096");
    EXPECT_PRED2(contains, r.error().detail(), "16384");
    EXPECT_EQ(fs::file_size(path), kPage);  // never extended without create
}

TEST_F(RegionErrors, EmptyFileIsBadSize) {
    make_sized_file(path, 0);
    auto r = PmRegion::open(path);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::bad_size);
    EXPECT_PRED2(contains, r.error().detail(), "file is empty");
}

TEST_F(RegionErrors, UnalignedWholeFileIsBadSize) {
    make_sized_file(path, 1000);
    auto r = PmRegion::open(path);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::bad_size);
    EXPECT_PRED2(contains, r.error().detail(), "alignment");
}

TEST_F(RegionErrors, FailedCreateLeavesNoFileBehind) {
    auto r = PmRegion::open(path, create_opts(1000));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::bad_size);
    EXPECT_FALSE(fs::exists(path));
}

TEST_F(RegionErrors, ByteGranularityOnTmpfsIsNotSupported) {
    auto opts = create_opts(kPage);
    opts.required_granularity = rpm::Granularity::byte;
    auto r = PmRegion::open(path, opts);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::granularity_not_supported);
    EXPECT_PRED2(contains, r.error().detail(),
                 "region " + path.string() +
                     " offers page granularity (not persistent memory); byte was required");
    EXPECT_FALSE(fs::exists(path));
}

TEST_F(RegionErrors, CacheLineGranularityOnTmpfsIsNotSupported) {
    make_sized_file(path, kPage);
    OpenOptions opts;
    opts.required_granularity = rpm::Granularity::cache_line;
    auto r = PmRegion::open(path, opts);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::granularity_not_supported);
    EXPECT_PRED2(contains, r.error().detail(), "offers page granularity");
    EXPECT_PRED2(contains, r.error().detail(), "cache_line was required");
    EXPECT_TRUE(fs::exists(path));  // not ours to remove
}

TEST_F(RegionErrors, DirectoryIsInvalidArgument) {
    auto r = PmRegion::open(scratch->path());
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::invalid_argument);
}

TEST_F(RegionErrors, DevNullIsNotPmem) {
    auto r = PmRegion::open("/dev/null");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::not_pmem);
    EXPECT_EQ(r.error().detail(), "/dev/null is a character device that is not a devdax device");
}

TEST_F(RegionErrors, CreateOnADeviceIsInvalidArgument) {
    auto r = PmRegion::open("/dev/null", create_opts(kPage));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::invalid_argument);
}

TEST_F(RegionErrors, CharDeviceThatLibpmem2RefusesIsNotPmem) {
    // A fake sysfs calls /dev/null (1:3) a dax device; libpmem2 checks the
    // real /sys and refuses it, which must come back as not_pmem.
    rpm_test::ScratchDir sysfs(fs::temp_directory_path());
    const fs::path dev = sysfs.path() / "sys/devices/ndbus0/region0/dax0.0/dax/dax0.0";
    fs::create_directories(dev);
    fs::create_directories(sysfs.path() / "sys/class/dax");
    rpm_test::make_link(dev, sysfs.path() / "sys/dev/char/1:3");
    rpm_test::make_link(sysfs.path() / "sys/class/dax", dev / "subsystem");
    OpenOptions opts;
    opts.sysfs_root = sysfs.path();
    auto r = PmRegion::open("/dev/null", opts);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::not_pmem);
    EXPECT_PRED2(contains, r.error().detail(), "/dev/null");
}

TEST_F(RegionErrors, BlockDeviceIsNotPmem) {
    const auto dev = any_block_device();
    if (!dev) GTEST_SKIP() << "no block device under /dev on this machine";
    auto r = PmRegion::open(*dev);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::not_pmem);
    EXPECT_PRED2(contains, r.error().detail(), "is a block device");
    EXPECT_PRED2(contains, r.error().detail(), "devdax");
}

TEST_F(RegionErrors, UnreadableFileIsPermissionDenied) {
    make_sized_file(path, kPage);
    fs::permissions(path, fs::perms::none);
    RPM_EXPECT_AS_NOBODY([&] {
        auto r = PmRegion::open(path);
        if (r) return false;
        std::fprintf(stderr, "%s\n", r.error().message().c_str());
        return r.error() == errc::permission_denied;
    });
}

TEST_F(RegionErrors, DeepFlushOutsideTheRegionIsInvalidArgument) {
    auto r = PmRegion::open(path, create_opts(4 * kPage));
    ASSERT_TRUE(r) << r.error().message();
    const auto* base = r->bytes().data();
    const std::size_t size = r->size();
    int outside = 0;
    EXPECT_EQ(r->deep_flush(&outside, 1).error(), errc::invalid_argument);
    EXPECT_EQ(r->deep_flush(base + size, 1).error(), errc::invalid_argument);
    EXPECT_EQ(r->deep_flush(base, size + 1).error(), errc::invalid_argument);
    EXPECT_EQ(r->deep_flush(base + 1, static_cast<std::size_t>(-1)).error(),
              errc::invalid_argument);
    EXPECT_EQ(r->deep_flush(nullptr, 0).error(), errc::invalid_argument);
    EXPECT_TRUE(r->deep_flush(base + kPage, kPage));
}

}  // namespace
