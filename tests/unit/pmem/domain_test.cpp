// The domain computation and the sysfs facts it reads, through fake trees:
// this machine only gives page granularity, so the PM cases are tested here.
#include "scratch.hpp"

#include "pmem/domain.hpp"
#include "pmem/mapping.hpp"
#include "pmem/pmem2_error.hpp"

#include <rpm/pmem.hpp>

#include <gtest/gtest.h>

#include <array>
#include <cerrno>
#include <tuple>

namespace {

using rpm::Granularity;
using rpm::PersistenceDomain;
using rpm::pmem::detail::region_domain;
using rpm_test::make_link;
using rpm_test::write_file;
namespace fs = std::filesystem;
using Nd = std::optional<PersistenceDomain>;

constexpr auto cpu = PersistenceDomain::cpu_cache;
constexpr auto mc = PersistenceDomain::memory_controller;
constexpr auto none = PersistenceDomain::none;
constexpr auto unknown = PersistenceDomain::unknown;
constexpr auto not_pmem = PersistenceDomain::not_pmem;

TEST(PmemDomain, ByteGranularityKeepsTheRegionsDomain) {
    const std::array<std::tuple<Nd, PersistenceDomain>, 6> cases{{
        {std::nullopt, unknown},
        {cpu, cpu},
        {mc, mc},
        {none, none},
        {unknown, unknown},
        {not_pmem, not_pmem},
    }};
    for (const auto& [nd, want] : cases) EXPECT_EQ(region_domain(Granularity::byte, nd), want);
}

TEST(PmemDomain, CacheLineGranularityCapsAtMemoryController) {
    const std::array<std::tuple<Nd, PersistenceDomain>, 6> cases{{
        {std::nullopt, unknown},
        {cpu, mc},
        {mc, mc},
        {none, none},
        {unknown, unknown},
        {not_pmem, not_pmem},
    }};
    for (const auto& [nd, want] : cases)
        EXPECT_EQ(region_domain(Granularity::cache_line, nd), want);
}

TEST(PmemDomain, PageGranularityIsNeverPmem) {
    for (const Nd nd : {Nd{}, Nd{cpu}, Nd{mc}, Nd{none}, Nd{unknown}, Nd{not_pmem}})
        EXPECT_EQ(region_domain(Granularity::page, nd), not_pmem);
}

class PmemSysfs : public ::testing::Test {
protected:
    rpm_test::ScratchDir scratch{fs::temp_directory_path()};
    fs::path root = scratch.path();
    fs::path regions = root / "sys/bus/nd/devices";
};

TEST_F(PmemSysfs, ReadsTheRegionsPersistenceDomain) {
    write_file(regions / "region0/persistence_domain", "cpu_cache\n");
    write_file(regions / "region1/persistence_domain", "memory_controller\n");
    EXPECT_EQ(rpm::pmem::detail::read_nd_domain(root, "region0"), cpu);
    EXPECT_EQ(rpm::pmem::detail::read_nd_domain(root, "region1"), mc);
}

TEST_F(PmemSysfs, EmptyDomainFileIsUnknown) {
    // What Linux prints for memmap= PM: neither eADR nor ADR.
    write_file(regions / "region0/persistence_domain", "\n");
    EXPECT_EQ(rpm::pmem::detail::read_nd_domain(root, "region0"), unknown);
}

TEST_F(PmemSysfs, MissingOrJunkDomainIsNullopt) {
    write_file(regions / "region1/persistence_domain", "eadr\n");
    EXPECT_EQ(rpm::pmem::detail::read_nd_domain(root, "region0"), std::nullopt);
    EXPECT_EQ(rpm::pmem::detail::read_nd_domain(root, "region1"), std::nullopt);
}

TEST_F(PmemSysfs, DeepFlushControlIsFoundOnlyWhereTheRegionHasOne) {
    // ADR DIMMs with flush hints have the control; legacy e820 PM has none.
    write_file(regions / "region0/deep_flush", "1\n");
    write_file(regions / "region1/persistence_domain", "\n");
    const auto found = rpm::pmem::detail::nd_deep_flush_file(root, "region0");
    ASSERT_TRUE(found);
    EXPECT_EQ(found->filename(), "deep_flush");
    EXPECT_TRUE(fs::equivalent(*found, regions / "region0/deep_flush"));
    EXPECT_EQ(rpm::pmem::detail::nd_deep_flush_file(root, "region1"), std::nullopt);
    EXPECT_EQ(rpm::pmem::detail::nd_deep_flush_file(root, "region9"), std::nullopt);
}

TEST_F(PmemSysfs, DevdaxIsTheDaxSubsystem) {
    fs::create_directories(root / "sys/class/dax");
    fs::create_directories(root / "sys/bus/dax");
    fs::create_directories(root / "sys/class/mem");
    const fs::path dev = root / "sys/devices/ndbus0/region0/dax0.0/dax/dax0.0";
    fs::create_directories(dev);
    make_link(dev, root / "sys/dev/char/252:0");
    make_link(root / "sys/class/dax", dev / "subsystem");
    const fs::path bus_dev = root / "sys/devices/ndbus0/region1/dax1.0";
    fs::create_directories(bus_dev);
    make_link(bus_dev, root / "sys/dev/char/252:1");
    make_link(root / "sys/bus/dax", bus_dev / "subsystem");
    const fs::path mem = root / "sys/devices/virtual/mem/null";
    fs::create_directories(mem);
    make_link(mem, root / "sys/dev/char/1:3");
    make_link(root / "sys/class/mem", mem / "subsystem");

    EXPECT_TRUE(rpm::pmem::detail::is_devdax(root, 252, 0));
    EXPECT_TRUE(rpm::pmem::detail::is_devdax(root, 252, 1));
    EXPECT_FALSE(rpm::pmem::detail::is_devdax(root, 1, 3));
    EXPECT_FALSE(rpm::pmem::detail::is_devdax(root, 9, 9));
}

TEST(PmemKind, NamesEveryKind) {
    using rpm::pmem::Kind;
    EXPECT_EQ(rpm::pmem::to_string(Kind::devdax), "devdax");
    EXPECT_EQ(rpm::pmem::to_string(Kind::fsdax), "fsdax");
    EXPECT_EQ(rpm::pmem::to_string(Kind::regular_file), "regular_file");
    EXPECT_EQ(rpm::pmem::to_string(Kind::tmpfs_file), "tmpfs_file");
}

TEST(PmemErrors, Pmem2CodesMapToRpmCodes) {
    using rpm::errc;
    using rpm::pmem::detail::pmem2_errc;
    EXPECT_EQ(pmem2_errc(PMEM2_E_GRANULARITY_NOT_SUPPORTED), errc::granularity_not_supported);
    EXPECT_EQ(pmem2_errc(PMEM2_E_INVALID_FILE_TYPE), errc::not_pmem);
    EXPECT_EQ(pmem2_errc(PMEM2_E_LENGTH_UNALIGNED), errc::bad_size);
    EXPECT_EQ(pmem2_errc(PMEM2_E_MAP_RANGE), errc::bad_size);
    EXPECT_EQ(pmem2_errc(PMEM2_E_LENGTH_OUT_OF_RANGE), errc::bad_size);
    EXPECT_EQ(pmem2_errc(-EACCES), errc::permission_denied);
    EXPECT_EQ(pmem2_errc(-EPERM), errc::permission_denied);
    EXPECT_EQ(pmem2_errc(-ENOMEM), errc::pmem_failed);
    EXPECT_EQ(pmem2_errc(PMEM2_E_UNKNOWN), errc::pmem_failed);
}

TEST(PmemErrors, GranularityDetailNamesBothSides) {
    using rpm::pmem::detail::granularity_detail;
    EXPECT_EQ(
        granularity_detail("/dev/shm/x", Granularity::byte, Granularity::page),
        "region /dev/shm/x offers page granularity (not persistent memory); byte was required");
    EXPECT_EQ(granularity_detail("/dev/dax0.0", Granularity::byte, Granularity::cache_line),
              "region /dev/dax0.0 offers cache_line granularity (persistent memory without eADR: "
              "stores need cache flushes); byte was required");
    EXPECT_EQ(granularity_detail("/x", Granularity::cache_line, std::nullopt),
              "region /x cannot give the granularity asked for; cache_line was required");
}

TEST(PmemErrors, GranularityConvertsBothWays) {
    using namespace rpm::pmem::detail;
    for (auto g : {Granularity::byte, Granularity::cache_line, Granularity::page})
        EXPECT_EQ(from_pmem2(to_pmem2(g)), g);
    EXPECT_EQ(to_pmem2(Granularity::byte), PMEM2_GRANULARITY_BYTE);
    EXPECT_EQ(to_pmem2(Granularity::page), PMEM2_GRANULARITY_PAGE);
}

}  // namespace
