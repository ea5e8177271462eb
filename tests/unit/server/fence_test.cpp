// Fencing in Service (a newer term revokes, an older one is refused, every
// handler refuses a revoked grant before touching the target; who may
// present a term, and how far ahead it may be), the fence file (durable,
// strict to parse), the region file's lock and rpm::OfflineFence.
#include "server/service.hpp"
#include "session_helper.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <limits>

namespace {
using namespace rpm;
namespace fs = std::filesystem;

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

template <class R>
std::error_code code_of(const R& r) {
    return r ? std::error_code{} : r.error().code();
}

void says(const Error& e, std::initializer_list<std::string_view> words) {
    for (auto w : words) EXPECT_NE(e.message().find(w), std::string::npos) << "no '" << w << "' in: " << e.message();
}

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
        build({});
    }
    // A fresh Service over a fresh region "r" (its fence file in `dir`),
    // with these options; clients "c" (secret "s") and "d" (secret "t").
    void build(ServerOptions o) {
        if (service) service->remove_fence_hook(&hook);
        auto r = std::make_unique<server::Region>();
        r->report.name = "r";
        r->report.domain = PersistenceDomain::memory_controller;
        auto t = std::make_unique<CountingTarget>();
        target = t.get();
        r->served = std::move(t);
        r->fence.file = dir / "r.fence";
        server::decide_region(*r, {});
        region = r.get();
        std::vector<std::unique_ptr<server::Region>> regions;
        regions.push_back(std::move(r));
        o.secrets = {{"c", "s"}, {"d", "t"}};
        service = std::make_unique<server::Service>(o, std::move(regions), "{}");
        service->add_fence_hook(&hook);
    }
    void TearDown() override {
        service->remove_fence_hook(&hook);
        fs::remove_all(dir);
    }
    server::Session session(const std::string& id = "c") {
        return rpm::test::authenticated_session(*service, id, id == "c" ? "s" : "t");
    }
    Result<proto::RegionGrant> open(server::Session& s, std::uint64_t term) {
        proto::OpenRegion req;
        req.name = "r";
        req.fencing_term = term;
        return service->open_region(s, req, server::TransportKind::tcp, nullptr);
    }

    // What a refused term must leave as it was: the fence file, the hooks
    // (nobody revoked) and a session of the current term, which still writes.
    void expect_unchanged(std::uint64_t file_term, std::size_t hook_calls, server::Session& s, std::uint32_t grant) {
        auto kept = server::load_term(dir / "r.fence");
        ASSERT_TRUE(kept);
        EXPECT_EQ(*kept, file_term);
        EXPECT_EQ(hook.calls.size(), hook_calls);
        const std::byte data[8]{};
        EXPECT_TRUE(service->handle_write(s, {grant, 0, data})) << "a session was revoked";
    }

    fs::path dir;
    std::unique_ptr<server::Service> service;
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
        code(service->handle_write(stale, {g->id, 0, data})),
        code(service->handle_atomic_write(stale, {g->id, 0, 1})),
        code(service->handle_flush(stale, {g->id, {{0, 8}}})),
        code(service->handle_persist(stale, p)),
        code(service->handle_read(stale, {g->id, 0, 8}, out)),
        code(service->read_view(stale, {g->id, 0, 8})),
    };
    for (const auto& ec : got) EXPECT_EQ(ec, errc::fenced);
    EXPECT_EQ(target->stores, 0);
    EXPECT_EQ(target->persists, 0);
    // The newer term's session is served.
    EXPECT_TRUE(service->handle_write(fresh, {0, 0, data}));
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

TEST_F(ServerFence, ATermJustInsideTheStepIsKeptOneBeyondIsRefused) {
    ServerOptions o;
    o.max_fencing_term_step = 10;
    build(o);
    auto a = session();
    auto ga = open(a, 10);  // 0 + 10
    ASSERT_TRUE(ga) << ga.error().message();
    auto b = session("d");
    auto far = open(b, 21);  // 10 + 11
    ASSERT_FALSE(far);
    EXPECT_EQ(far.error().code(), errc::invalid_argument);
    says(far.error(), {"term 21", "current term 10", "largest it takes now is 20", "max_fencing_term_step",
                       "--max-fencing-term-step"});
    expect_unchanged(10u, 1u, a, ga->id);
    EXPECT_TRUE(open(b, 20));  // 10 + 10
}

TEST_F(ServerFence, TheLargestTermIsRefusedFromASmallOneAndNothingIsKept) {
    auto first = session("d");
    auto none = open(first, kMax);
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error().code(), errc::invalid_argument);
    EXPECT_FALSE(fs::exists(dir / "r.fence"));
    EXPECT_TRUE(hook.calls.empty());
    auto a = session();
    auto ga = open(a, 1);
    ASSERT_TRUE(ga) << ga.error().message();
    auto b = session("d");
    auto g = open(b, kMax);
    ASSERT_FALSE(g);
    EXPECT_EQ(g.error().code(), errc::invalid_argument);
    says(g.error(), {std::to_string(kMax), "current term 1"});
    expect_unchanged(1u, 1u, a, ga->id);
    EXPECT_TRUE(open(b, 2));  // the next legitimate primary
}

TEST_F(ServerFence, TheStepSaturatesNearTheTopOfTheRange) {
    // current + max_fencing_term_step passes 2^64-1: the bound is 2^64-1, not the
    // small number the sum wraps round to.
    const std::uint64_t current = kMax - 5;
    ASSERT_TRUE(server::store_term(dir / "r.fence", current));
    region->fence.term = current;
    auto a = session();
    EXPECT_EQ(code_of(open(a, current - 1)), errc::fenced);
    auto g = open(a, kMax);
    ASSERT_TRUE(g) << g.error().message();
    EXPECT_EQ(*server::load_term(dir / "r.fence"), kMax);
    ServerOptions o;  // the widest step, from a small term
    o.max_fencing_term_step = kMax;
    build(o);
    auto b = session();
    ASSERT_TRUE(open(b, 1));
    auto top = open(b, kMax);
    EXPECT_TRUE(top) << top.error().message();
}

TEST_F(ServerFence, OnlyAFencerMayPresentATerm) {
    ServerOptions o;
    o.fencers = std::set<std::string>{"c"};
    build(o);
    auto d = session("d");
    auto refused = open(d, 1);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code(), errc::permission_denied);
    says(refused.error(), {"client 'd'", "region 'r'", "ServerOptions::fencers", "rpm-server --fencer d"});
    EXPECT_FALSE(fs::exists(dir / "r.fence"));
    EXPECT_TRUE(hook.calls.empty());
    auto c = session();
    auto gc = open(c, 1);
    ASSERT_TRUE(gc) << gc.error().message();
    // Not even a term the step allows takes it over; term 0 meets the fence.
    EXPECT_EQ(code_of(open(d, 2)), errc::permission_denied);
    EXPECT_EQ(code_of(open(d, 0)), errc::fenced);
    expect_unchanged(1u, 1u, c, gc->id);
}

TEST_F(ServerFence, TermZeroFromANonFencerOpensARegionWithoutATerm) {
    ServerOptions o;
    o.fencers = std::set<std::string>{"c"};
    build(o);
    auto d = session("d");
    auto g = open(d, 0);
    ASSERT_TRUE(g) << g.error().message();
    const std::byte data[8]{};
    EXPECT_TRUE(service->handle_write(d, {g->id, 0, data}));
}

TEST_F(ServerFence, UnsetFencersLetEveryGrantedClientFence) {
    auto d = session("d");
    ASSERT_TRUE(open(d, 3));
    EXPECT_EQ(*server::load_term(dir / "r.fence"), 3u);
}

TEST_F(ServerFence, AnEmptyFencerSetLetsNobodyFence) {
    ServerOptions o;
    o.fencers = std::set<std::string>{};
    build(o);
    for (const char* id : {"c", "d"}) {
        auto s = session(id);
        auto g = open(s, 1);
        ASSERT_FALSE(g) << id;
        EXPECT_EQ(g.error().code(), errc::permission_denied) << id;
        EXPECT_TRUE(open(s, 0)) << id;
    }
    EXPECT_FALSE(fs::exists(dir / "r.fence"));
    EXPECT_TRUE(hook.calls.empty());
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

// A region file (and where its fence files go) for the lock's tests.
class RegionFile : public ::testing::Test {
protected:
    void SetUp() override {
        dir = fs::temp_directory_path() / ("rpm-fence-lock-" + std::to_string(::getpid()) + "-" +
                                           ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::create_directories(dir / "fences");
        file = dir / "kv.pool";
        std::ofstream(file) << "region";
    }
    void TearDown() override { fs::remove_all(dir); }
    fs::path dir, file;
};

TEST_F(RegionFile, ServersShareItsLockAndAResetExcludesThem) {
    auto one = server::lock_region_file("kv", file, false);
    ASSERT_TRUE(one) << one.error().message();
    auto two = server::lock_region_file("kv", file, false);  // two servers of one file, as before
    ASSERT_TRUE(two) << two.error().message();
    auto reset = server::lock_region_file("kv", file, true);
    ASSERT_FALSE(reset);
    EXPECT_EQ(reset.error().code(), errc::io_error);
    EXPECT_EQ(reset.error().detail(), "a server is serving kv (" + file.string() + "); stop it first");
    one->reset();
    two->reset();
    reset = server::lock_region_file("kv", file, true);
    ASSERT_TRUE(reset) << reset.error().message();
    auto serve = server::lock_region_file("kv", file, false);
    ASSERT_FALSE(serve);
    EXPECT_EQ(serve.error().code(), errc::io_error);
    says(serve.error(), {"kv", "reset-term"});
    EXPECT_EQ(code_of(server::lock_region_file("kv", dir / "missing", false)), errc::path_not_found);
}

TEST_F(RegionFile, AnOfflineFenceSetsTheTermInTheServersFile) {
    const RegionSpec kv{"kv", file, 0, false, {}};
    {
        auto serving = server::lock_region_file("kv", file, false);
        ASSERT_TRUE(serving);
        auto refused = OfflineFence::open(kv, std::nullopt);
        ASSERT_FALSE(refused);
        EXPECT_EQ(refused.error().detail(), "a server is serving kv (" + file.string() + "); stop it first");
    }
    auto f = OfflineFence::open(kv, std::nullopt);
    ASSERT_TRUE(f) << f.error().message();
    EXPECT_EQ(f->file(), server::fence_file_for("kv", file, std::nullopt));
    EXPECT_EQ(*f->fencing_term(), 0u);
    ASSERT_TRUE(server::store_term(f->file(), kMax));
    EXPECT_EQ(*f->fencing_term(), kMax);
    ASSERT_TRUE(f->set_fencing_term(3));
    EXPECT_EQ(*server::load_term(f->file()), 3u);
    EXPECT_FALSE(server::lock_region_file("kv", file, false)) << "a server started during a reset";
    std::ofstream(dir / "other.pool") << "region";
    auto other = OfflineFence::open({"other", dir / "other.pool", 0, false, {}}, dir / "fences");
    ASSERT_TRUE(other) << other.error().message();
    *f = std::move(*other);  // the old lock goes
    EXPECT_TRUE(server::lock_region_file("kv", file, false));
    auto in_dir = OfflineFence::open(kv, dir / "fences");
    ASSERT_TRUE(in_dir) << in_dir.error().message();
    EXPECT_EQ(in_dir->file(), dir / "fences" / "kv.fence");
}

TEST_F(RegionFile, AnOfflineFenceRefusesBadInputAndOverwritesAMalformedFile) {
    const RegionSpec kv{"kv", file, 0, false, {}};
    EXPECT_EQ(code_of(OfflineFence::open({"kv", dir / "missing", 0, false, {}}, std::nullopt)), errc::path_not_found);
    EXPECT_EQ(code_of(OfflineFence::open({"", file, 0, false, {}}, std::nullopt)), errc::invalid_argument);
    EXPECT_EQ(code_of(OfflineFence::open(kv, file)), errc::invalid_argument);  // a fence dir that is a file
    EXPECT_EQ(code_of(OfflineFence::open({"dev", "/dev/null", 0, false, {}}, std::nullopt)), errc::unsupported);
    auto f = OfflineFence::open(kv, std::nullopt);
    ASSERT_TRUE(f) << f.error().message();
    std::ofstream(f->file()) << "rpm-fence 1 junk\n";
    EXPECT_EQ(code_of(f->fencing_term()), errc::bad_config);
    ASSERT_TRUE(f->set_fencing_term(7));
    EXPECT_EQ(*f->fencing_term(), 7u);
}

} // namespace
