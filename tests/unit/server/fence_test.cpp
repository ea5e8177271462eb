// Fencing in Service (a newer term revokes, an older one is refused, every
// handler refuses a revoked grant before touching the target) and the
// fence file (durable, strict to parse).
#include "server/service.hpp"
#include "session_helper.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>

namespace {
using namespace rpm;
namespace fs = std::filesystem;

class CountingTarget final : public server::ServedRegion {
public:
    std::uint64_t size() const noexcept override { return mem.size(); }
    void store(std::uint64_t o, std::span<const std::byte> d) noexcept override {
        ++stores;
        std::memcpy(&mem[o], d.data(), d.size());
    }
    void load(std::uint64_t o, std::span<std::byte> out) const noexcept override {
        std::memcpy(out.data(), &mem[o], out.size());
    }
    void store8(std::uint64_t o, std::uint64_t v) noexcept override {
        ++stores;
        std::memcpy(&mem[o], &v, 8);
    }
    Result<void> persist(flush::ServerPersist, std::span<const server::Range>) noexcept override {
        ++persists;
        return {};
    }
    std::byte* base() noexcept override { return mem.data(); }
    std::vector<std::byte> mem = std::vector<std::byte>(4096);
    int stores = 0, persists = 0;
};

struct Hook final : server::FenceHook {
    void region_fenced(server::Region& r, std::uint64_t term) noexcept override {
        calls.emplace_back(r.report.name, term);
    }
    std::vector<std::pair<std::string, std::uint64_t>> calls;
};

class ServerFence : public ::testing::Test {
protected:
    void SetUp() override {
        dir = fs::temp_directory_path() / ("rpm-fence-unit-" + std::to_string(::getpid()) + "-" +
                                           ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::create_directories(dir);
        auto r = std::make_unique<server::Region>();
        r->report.name = "r";
        r->report.domain = PersistenceDomain::memory_controller;
        auto t = std::make_unique<CountingTarget>();
        target = t.get();
        r->target = std::move(t);
        r->fence.file = dir / "r.fence";
        server::decide_region(*r, {});
        region = r.get();
        std::vector<std::unique_ptr<server::Region>> regions;
        regions.push_back(std::move(r));
        ServerOptions o;
        o.secrets = {{"c", "s"}};
        core = std::make_unique<server::Service>(o, std::move(regions), "{}");
        core->add_fence_hook(&hook);
    }
    void TearDown() override {
        core->remove_fence_hook(&hook);
        fs::remove_all(dir);
    }
    server::Session session() { return rpm::test::authenticated_session(*core); }
    Result<proto::RegionGrant> open(server::Session& s, std::uint64_t term) {
        proto::OpenRegion req;
        req.name = "r";
        req.term = term;
        return core->open_region(s, req, server::TransportKind::tcp, nullptr);
    }

    fs::path dir;
    std::unique_ptr<server::Service> core;
    server::Region* region = nullptr;
    CountingTarget* target = nullptr;
    Hook hook;
};

TEST_F(ServerFence, EveryHandlerRefusesARevokedGrantBeforeTouchingTheRegion) {
    auto stale = session();
    auto g = open(stale, 1);
    ASSERT_TRUE(g) << g.error().message();
    auto fresh = session();
    ASSERT_TRUE(open(fresh, 2));
    const std::byte data[8]{};
    const proto::Slice slice{0, data};
    proto::Persist p;
    p.region = g->id;
    p.slices = {slice};
    std::byte out[8];
    const auto code = [](const auto& r) { return r ? std::error_code{} : r.error().code(); };
    const std::vector<std::error_code> got = {
        code(core->handle_write(stale, {g->id, 0, data})),
        code(core->handle_atomic_write(stale, {g->id, 0, 1})),
        code(core->handle_flush(stale, {g->id, {{0, 8}}})),
        code(core->handle_persist(stale, p)),
        code(core->handle_read(stale, {g->id, 0, 8}, out)),
        code(core->read_view(stale, {g->id, 0, 8})),
    };
    for (const auto& ec : got) EXPECT_EQ(ec, errc::fenced);
    EXPECT_EQ(target->stores, 0);
    EXPECT_EQ(target->persists, 0);
    // The newer term's session is served.
    EXPECT_TRUE(core->handle_write(fresh, {0, 0, data}));
    EXPECT_EQ(target->stores, 1);
}

TEST_F(ServerFence, ANewerTermIsKeptDurablyThenTheHooksAreToldOnce) {
    auto a = session();
    ASSERT_TRUE(open(a, 5));
    ASSERT_TRUE(open(a, 5));  // the same term again: nothing to revoke
    ASSERT_EQ(hook.calls.size(), 1u);
    EXPECT_EQ(hook.calls[0], std::make_pair(std::string("r"), std::uint64_t{5}));
    auto kept = server::load_term(dir / "r.fence");
    ASSERT_TRUE(kept);
    EXPECT_EQ(*kept, 5u);
    auto older = open(a, 4);
    ASSERT_FALSE(older);
    EXPECT_EQ(older.error().code(), errc::fenced);
    EXPECT_EQ(hook.calls.size(), 1u);
}

TEST_F(ServerFence, ATermThatCannotBeKeptIsNotGranted) {
    if (::geteuid() == 0) {
        // root writes into a read-only directory: take the directory away instead.
        fs::remove_all(dir);
    } else {
        fs::permissions(dir, fs::perms::owner_read | fs::perms::owner_exec);
    }
    auto a = session();
    auto g = open(a, 3);
    ASSERT_FALSE(g);
    EXPECT_EQ(g.error().code(), errc::io_error) << g.error().message();
    EXPECT_TRUE(hook.calls.empty());
    fs::create_directories(dir);
    fs::permissions(dir, fs::perms::owner_all);
    // Nothing was taken: term 0 (none) still opens, and 3 once it can be kept.
    EXPECT_TRUE(open(a, 0));
    EXPECT_TRUE(open(a, 3));
}

TEST_F(ServerFence, ARegionWithoutAFenceFileCannotTakeATerm) {
    region->fence.file.reset();
    auto a = session();
    EXPECT_TRUE(open(a, 0));
    auto g = open(a, 1);
    ASSERT_FALSE(g);
    EXPECT_EQ(g.error().code(), errc::unsupported);
    EXPECT_NE(g.error().message().find("fence_dir"), std::string::npos);
}

TEST(FenceFile, ANameAndAPathGiveItsPlace) {
    EXPECT_EQ(server::fence_file_for("kv", "/dev/dax0.0", fs::path("/var/lib/rpm")), fs::path("/var/lib/rpm/kv.fence"));
    EXPECT_EQ(server::fence_file_for("a/b", "/x", fs::path("/d")), fs::path("/d/x-612f62.fence"));
    EXPECT_EQ(server::fence_file_for(".hidden", "/x", fs::path("/d")), fs::path("/d/x-2e68696464656e.fence"));
    EXPECT_EQ(server::fence_file_for("kv", "/dev/null", std::nullopt), std::nullopt);  // a device
    const auto file = fs::temp_directory_path() / ("rpm-fence-region-" + std::to_string(::getpid()));
    std::ofstream(file) << "x";
    auto beside = file;
    beside += ".fence";
    EXPECT_EQ(server::fence_file_for("kv", file, std::nullopt), beside);
    fs::remove(file);
}

TEST(FenceFile, MalformedFilesAreRefusedAndAMissingOneIsTermZero) {
    const auto file = fs::temp_directory_path() / ("rpm-fence-parse-" + std::to_string(::getpid()));
    fs::remove(file);
    auto none = server::load_term(file);
    ASSERT_TRUE(none);
    EXPECT_EQ(*none, 0u);
    for (const char* bad : {"", "rpm-fence 1 \n", "rpm-fence 1 12", "rpm-fence 2 12\n", "rpm-fence 1 12x\n",
                            "rpm-fence 1 -1\n", "rpm-fence 1 99999999999999999999999\n"}) {
        std::ofstream(file, std::ios::trunc) << bad;
        auto t = server::load_term(file);
        ASSERT_FALSE(t) << "'" << bad << "'";
        EXPECT_EQ(t.error().code(), errc::bad_config);
    }
    ASSERT_TRUE(server::store_term(file, 18446744073709551615ull));
    auto max = server::load_term(file);
    ASSERT_TRUE(max);
    EXPECT_EQ(*max, 18446744073709551615ull);
    fs::remove(file);
}

} // namespace
