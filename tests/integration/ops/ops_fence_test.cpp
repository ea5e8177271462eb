// Fencing (docs/replication.md, "Fencing"): a newer primary term's open
// revokes the connections that opened the region with an older term, an
// older term's open is refused, and the term outlives a server restart.
// Over tcp:// here and rdma:// on emulated PM in the lab.
#include "common/backing.hpp"
#include "common/server_fixture.hpp"

#include <array>
#include <atomic>
#include <chrono>
#include <fstream>
#include <future>
#include <thread>

namespace {
using namespace rpm;
using namespace std::chrono_literals;
using rpm::test::bytes_of;
using rpm::test::code_of;
using rpm::test::ok;

class OpsFence : public rpm::test::ServerTest {
protected:
    void SetUp() override {
        fence_dir = "/dev/shm/rpm-it-fence-" + std::to_string(::getpid()) + "-" +
                    ::testing::UnitTest::GetInstance()->current_test_info()->name();
        std::filesystem::create_directories(fence_dir);
        ServerTest::SetUp();
    }
    void TearDown() override {
        ServerTest::TearDown();
        std::filesystem::remove_all(fence_dir);
    }
    void tune(ServerOptions& o) override { o.fence_dir = fence_dir; }

    Result<RemoteRegion> open_kv(Connection& c, std::uint64_t term) {
        RegionOptions o;
        o.fencing_term = term;
        return c.open_region("kv", o);
    }

    std::filesystem::path fence_dir;
};

// Over rdma:// a write already on the wire when the rkey changes fails as a
// transport error before the server's goodbye is read; every later call
// says fenced.
Result<void> settled_fenced(RemoteRegion& r, std::uint64_t off, std::string_view data) {
    Result<void> res;
    for (int i = 0; i < 50; ++i) {
        res = r.persist(off, bytes_of(data));
        if (code_of(res) == errc::fenced) return res;
        std::this_thread::sleep_for(20ms);
    }
    return res;
}

// A fenced operation's detail says that the server fenced it (its answer
// to the request, or its goodbye) and which term took the region over.
::testing::AssertionResult told_fenced_by(const Result<void>& r, std::uint64_t term) {
    if (r.has_value()) return ::testing::AssertionFailure() << "succeeded";
    const std::string& d = r.error().detail();
    const bool by_server = d.find("refused by the server") != std::string::npos ||
                           d.find("the server closed the connection") != std::string::npos;
    const bool names_term = d.find("taken over by primary term " + std::to_string(term)) != std::string::npos;
    if (by_server && names_term) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "no word of the server's fence by term " << term << " in: "
                                         << r.error().message();
}

TEST_F(OpsFence, ANewerTermRevokesTheOlderOnesConnection) {
    auto old_c = connect();
    ASSERT_TRUE(old_c) << old_c.error().message();
    auto old_r = open_kv(*old_c, 1);
    ASSERT_TRUE(old_r) << old_r.error().message();
    const std::string before = "term 1 wrote this " + std::to_string(::getpid());
    ASSERT_TRUE(ok(old_r->persist(4096, bytes_of(before))));

    auto new_c = connect();
    ASSERT_TRUE(new_c);
    auto new_r = open_kv(*new_c, 2);
    ASSERT_TRUE(new_r) << new_r.error().message();

    const std::string stale = "a stale primary's write!!!!!" + std::to_string(::getpid());
    const auto first = settled_fenced(*old_r, 4096, stale);
    EXPECT_EQ(code_of(first), errc::fenced);
    EXPECT_TRUE(told_fenced_by(first, 2));
    const Result<void> after = old_r->persist(4096, bytes_of(stale));
    EXPECT_EQ(code_of(after), errc::fenced);  // and every call after
    EXPECT_TRUE(told_fenced_by(after, 2));
    EXPECT_EQ(code_of(old_r->write(4096, bytes_of(stale))), errc::fenced);
    EXPECT_EQ(rpm::test::text_at(*new_r, 4096, before.size()), before);
    EXPECT_EQ(rpm::test::read_backing(kv_path, 4096, before.size()), before);
    // The newer term works as usual.
    const std::string fresh = "term 2 wrote this";
    EXPECT_TRUE(ok(new_r->persist(8192, bytes_of(fresh))));
    EXPECT_EQ(rpm::test::text_at(*new_r, 8192, fresh.size()), fresh);
}

// An idle connection of the older term is told at once (goodbye with
// fenced), not at its next request: a stale primary learns it even when it
// has nothing to write.
TEST_F(OpsFence, AnIdleConnectionOfTheOlderTermIsToldAtOnce) {
    auto old_c = connect();
    ASSERT_TRUE(old_c);
    ASSERT_TRUE(open_kv(*old_c, 1));
    // Shared with the callback: it may run after a failed assertion returned.
    auto told = std::make_shared<std::promise<Result<std::size_t>>>();
    auto buf = std::make_shared<std::array<std::byte, 64>>();
    old_c->recv(*buf, [told, buf](Result<std::size_t> n) { told->set_value(std::move(n)); });
    auto new_c = connect();
    ASSERT_TRUE(new_c);
    ASSERT_TRUE(open_kv(*new_c, 2));
    auto f = told->get_future();
    ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
    const auto got = f.get();
    EXPECT_EQ(code_of(got), errc::fenced);
    if (!got) {
        EXPECT_NE(got.error().detail().find("taken over by primary term 2"), std::string::npos)
            << got.error().message();
    }
}

TEST_F(OpsFence, AnOlderTermOrNoneIsRefusedOnceANewerOneOpened) {
    auto a = connect();
    ASSERT_TRUE(a);
    ASSERT_TRUE(open_kv(*a, 7));
    auto b = connect();
    ASSERT_TRUE(b);
    auto older = open_kv(*b, 6);
    ASSERT_FALSE(older);
    EXPECT_EQ(older.error().code(), errc::fenced) << older.error().message();
    EXPECT_NE(older.error().message().find("term 7"), std::string::npos) << older.error().message();
    auto none = b->open_region("kv");
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error().code(), errc::fenced);
    // Another region keeps its own term (none yet).
    EXPECT_TRUE(b->open_region("logs"));
}

TEST_F(OpsFence, ConnectionsOfTheSameTermShareTheRegion) {
    auto a = connect();
    auto b = connect();
    ASSERT_TRUE(a && b);
    auto ra = open_kv(*a, 3);
    auto rb = open_kv(*b, 3);
    ASSERT_TRUE(ra && rb);
    EXPECT_TRUE(ok(ra->persist(0, bytes_of("from a"))));
    EXPECT_TRUE(ok(rb->persist(64, bytes_of("from b"))));
    EXPECT_EQ(rpm::test::text_at(*ra, 64, 6), "from b");
}

TEST_F(OpsFence, TheTermIsKeptAcrossARestart) {
    {
        auto a = connect();
        ASSERT_TRUE(a);
        ASSERT_TRUE(open_kv(*a, 41));
    }
    std::ifstream f(fence_dir / "kv.fence");
    std::string line;
    std::getline(f, line);
    EXPECT_EQ(line, "rpm-fence 1 41");
    server.reset();
    start_server();
    auto b = connect();
    ASSERT_TRUE(b);
    auto older = open_kv(*b, 40);
    ASSERT_FALSE(older);
    EXPECT_EQ(older.error().code(), errc::fenced);
    EXPECT_TRUE(open_kv(*b, 41));
}

// The promise: once the newer term's open returns, nothing the older term
// sends reaches the region. A stale writer persists as fast as it can
// while a newer term opens and then overwrites its bytes once; after the
// stale writer has stopped (fenced), the newer term's bytes must be there.
TEST_F(OpsFence, NothingOfTheOlderTermLandsAfterTheNewerOpenReturns) {
    auto old_c = connect();
    ASSERT_TRUE(old_c);
    auto old_r = open_kv(*old_c, 1);
    ASSERT_TRUE(old_r);
    const std::string stale = "STALE-STALE-STALE-STALE-STALE-STALE";
    const std::string fresh = "fresh-fresh-fresh-fresh-fresh-fresh";
    std::atomic<int> acknowledged{0};
    std::thread writer([&] {
        for (int i = 0; i < 100000; ++i) {
            if (!old_r->persist(12288, bytes_of(stale)).has_value()) return;  // fenced (or the connection went)
            ++acknowledged;
        }
    });
    while (acknowledged < 20) std::this_thread::sleep_for(1ms);
    auto new_c = connect();
    ASSERT_TRUE(new_c);
    auto new_r = open_kv(*new_c, 2);
    ASSERT_TRUE(new_r) << new_r.error().message();
    ASSERT_TRUE(ok(new_r->persist(12288, bytes_of(fresh))));
    writer.join();
    // Over rdma:// a write in flight when the rkey died fails the
    // connection as a transport error before the goodbye is read.
    const auto settled = settled_fenced(*old_r, 12288, stale);
    const auto ec = code_of(settled);
    EXPECT_TRUE(ec == errc::fenced || (scheme() == "rdma" && ec == errc::io_error))
        << (settled ? std::string("succeeded") : settled.error().message());
    if (ec == errc::fenced) {
        EXPECT_TRUE(told_fenced_by(settled, 2));
    }
    EXPECT_EQ(rpm::test::text_at(*new_r, 12288, fresh.size()), fresh);
    EXPECT_EQ(rpm::test::read_backing(kv_path, 12288, fresh.size()), fresh);
}

} // namespace
