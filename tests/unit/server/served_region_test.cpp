// PmemServedRegion: every persist step runs through libpmem2 (or msync) on a real
// mapping and leaves the data in place. Which step is *enough* is the
// persistence model's job (tests/unit/model); here: each one works.
#include "server/served_region.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>

namespace {
using namespace rpm;
using SP = flush::ServerPersist;

struct PoolFile {
    std::filesystem::path path = "/dev/shm/rpm-target-test-" + std::to_string(::getpid());
    ~PoolFile() { std::filesystem::remove(path); }
};

server::PmemServedRegion open_target(const PoolFile& f) {
    pmem::OpenOptions o;
    o.create = true;
    o.size = 1 << 20;
    auto r = pmem::Region::open(f.path, o);
    EXPECT_TRUE(r) << r.error().message();
    return server::PmemServedRegion(std::move(*r));
}

TEST(ServerPmemServedRegion, EveryPersistStepSucceedsAndKeepsTheData) {
    PoolFile f;
    auto t = open_target(f);
    const std::string rec = "persist step";
    for (SP step : {SP::none, SP::sfence, SP::cache_flush_sfence, SP::cache_flush_sfence_deep_flush, SP::msync}) {
        const std::uint64_t off = 4096 * static_cast<std::uint64_t>(step) + 100;  // unaligned on purpose
        t.store(off, std::as_bytes(std::span(rec.data(), rec.size())));
        server::Range r{off, rec.size()};
        auto res = t.persist(step, std::span(&r, 1));
        ASSERT_TRUE(res) << flush::to_string(step) << ": " << res.error().message();
        std::string back(rec.size(), '\0');
        t.load(off, std::as_writable_bytes(std::span(back.data(), back.size())));
        EXPECT_EQ(back, rec) << flush::to_string(step);
    }
}

TEST(ServerPmemServedRegion, Store8IsOneAlignedWord) {
    PoolFile f;
    auto t = open_target(f);
    t.store8(64, 0x0102030405060708ull);
    std::uint64_t v = 0;
    t.load(64, std::as_writable_bytes(std::span(&v, 1)));
    EXPECT_EQ(v, 0x0102030405060708ull);
    EXPECT_EQ(t.size(), 1u << 20);
    EXPECT_NE(t.base(), nullptr);
}

} // namespace
