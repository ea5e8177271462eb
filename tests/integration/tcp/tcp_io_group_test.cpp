// Connections made with one IoGroup (ClientOptions::io_group) run their
// callbacks on its one thread; each keeps its own order and errors; one can
// be closed, even from another's callback, while the others go on; and the
// group's thread ends with its last user.
#include "common/server_fixture.hpp"

#include "tests/support/result.hpp"

#include <future>
#include <set>
#include <thread>

namespace {
using namespace rpm;
using rpm::test::bytes_of;
using rpm::test::ok;
using rpm::test::TcpServerTest;

class TcpIoGroup : public TcpServerTest {
protected:
    Result<Connection> connect_in(const std::shared_ptr<IoGroup>& g) {
        ClientOptions c;
        c.client_id = "app";
        c.secret = "app-secret";
        c.io_group = g;
        return Client(c).connect(uri());
    }
};

TEST_F(TcpIoGroup, CallbacksOfAGroupRunOnItsOneThread) {
    auto g = make_io_group();
    std::vector<Connection> conns;
    std::vector<RemoteRegion> regions;
    for (int i = 0; i < 3; ++i) {
        auto c = connect_in(g);
        ASSERT_TRUE(c) << c.error().message();
        conns.push_back(std::move(*c));
        auto r = conns.back().open_region("kv");
        ASSERT_TRUE(r);
        regions.push_back(*r);
    }
    auto solo = connect();  // a connection of its own, for contrast
    ASSERT_TRUE(solo);
    auto solo_region = solo->open_region("kv");
    ASSERT_TRUE(solo_region);

    std::mutex seen_mu;
    std::set<std::thread::id> group_threads;
    std::thread::id solo_thread;
    std::vector<std::promise<Result<void>>> done(4);
    const std::string rec = "in a group";
    for (int i = 0; i < 3; ++i)
        regions[i].persist(64u * i, bytes_of(rec), [&, i](Result<void> r) {
            std::lock_guard lock(seen_mu);
            group_threads.insert(std::this_thread::get_id());
            done[i].set_value(std::move(r));
        });
    solo_region->persist(512, bytes_of(rec), [&](Result<void> r) {
        std::lock_guard lock(seen_mu);
        solo_thread = std::this_thread::get_id();
        done[3].set_value(std::move(r));
    });
    for (auto& d : done) EXPECT_TRUE(ok(d.get_future().get()));
    EXPECT_EQ(group_threads.size(), 1u) << "the group's callbacks ran on several threads";
    EXPECT_EQ(group_threads.count(solo_thread), 0u) << "a connection outside the group used the group's thread";
    EXPECT_EQ(group_threads.count(std::this_thread::get_id()), 0u) << "a callback ran on the caller's thread";
}

TEST_F(TcpIoGroup, OneClosesFromAnothersCallbackAndTheRestGoOn) {
    auto g = make_io_group();
    auto a = connect_in(g), b = connect_in(g);
    ASSERT_TRUE(a && b);
    auto ra = a->open_region("kv");
    std::optional<Connection> victim(std::move(*b));
    auto rb = victim->open_region("kv");
    ASSERT_TRUE(ra && rb);
    // b has a request in flight when a's callback destroys it: b's request
    // fails (or completed first), and a goes on.
    std::promise<Result<void>> b_done;
    rb->persist(0, bytes_of("b's record"), [&](Result<void> r) { b_done.set_value(std::move(r)); });
    std::promise<void> closed;
    ra->persist(64, bytes_of("a's record"), [&](Result<void>) {
        victim.reset();
        closed.set_value();
    });
    closed.get_future().get();
    (void)b_done.get_future().get();  // it completes, either way, exactly once
    EXPECT_TRUE(ok(ra->persist(128, bytes_of("a goes on"))));
    std::string back(9, '\0');
    EXPECT_TRUE(ok(ra->read(128, std::as_writable_bytes(std::span(back.data(), back.size())))));
    EXPECT_EQ(back, "a goes on");
}

TEST_F(TcpIoGroup, TheGroupOutlivesItsConnectionsAndEndsWithTheLast) {
    std::weak_ptr<IoGroup> watch;
    {
        auto g = make_io_group();
        watch = g;
        auto c = connect_in(g);
        ASSERT_TRUE(c);
        g.reset();  // the connection keeps it
        EXPECT_FALSE(watch.expired());
        auto r = c->open_region("kv");
        ASSERT_TRUE(r);
        EXPECT_TRUE(ok(r->persist(0, bytes_of("kept alive"))));
    }
    EXPECT_TRUE(watch.expired());
}

} // namespace
