// rpm::pmem::Region on a real devdax device (the lab VM's /dev/dax0.0 on a
// QEMU NVDIMM or memmap PM; run by suite.sh). The expected facts come from
// suite.sh's hand-worked row: RPM_LAB_DOMAIN and RPM_LAB_GRANULARITY.
#include <rpm/pmem.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

namespace {
using namespace rpm;

std::string env(const char* name) {
    const char* v = std::getenv(name);
    return v ? v : "";
}

class Devdax : public ::testing::Test {
protected:
    void SetUp() override {
        path = env("RPM_LAB_PM");
        ASSERT_EQ(path.rfind("/dev/dax", 0), 0u) << "run by tests/lab/suite.sh on a devdax device, not '" << path << "'";
    }
    std::string path;
};

TEST_F(Devdax, OpensWithTheDomainAndGranularityOfItsNdRegion) {
    auto r = pmem::Region::open(path);
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r->kind(), pmem::Kind::devdax);
    EXPECT_EQ(r->nd_region(), "region0");
    EXPECT_EQ(to_string(r->domain()), env("RPM_LAB_DOMAIN"));
    EXPECT_EQ(to_string(r->granularity()), env("RPM_LAB_GRANULARITY"));
    EXPECT_GT(r->size(), 0u);
}

TEST_F(Devdax, PersistAndDeepFlushOnTheDeviceKeepTheBytes) {
    const std::string rec = "devdax record " + std::to_string(::getpid());
    {
        auto r = pmem::Region::open(path);
        ASSERT_TRUE(r) << r.error().message();
        std::byte* at = r->bytes().data() + 8192;
        std::memcpy(at, rec.data(), rec.size());
        r->persist(at, rec.size());
        // Writes the region's deep_flush control where it has one (QEMU's
        // NVDIMMs do), and is a no-op where it has none (memmap): no error.
        auto d = r->deep_flush(at, rec.size());
        EXPECT_TRUE(d) << d.error().message();
    }
    auto again = pmem::Region::open(path);
    ASSERT_TRUE(again) << again.error().message();
    EXPECT_EQ(std::memcmp(again->bytes().data() + 8192, rec.data(), rec.size()), 0);
}

TEST_F(Devdax, AGranularityFinerThanTheRegionsIsRefused) {
    pmem::OpenOptions o;
    o.required_granularity = Granularity::byte;
    auto r = pmem::Region::open(path, o);
    if (env("RPM_LAB_GRANULARITY") == "byte") {
        EXPECT_TRUE(r) << r.error().message();
    } else {
        ASSERT_FALSE(r);
        EXPECT_EQ(r.error().code(), errc::granularity_not_supported);
    }
}

} // namespace
