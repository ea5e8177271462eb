// A thread driving an IoGroup (IoGroup::Drive, what a Replicator's commit
// does): the requests it sends are answered on its own thread; another
// thread cannot drive at the same time; what is still owed when the drive
// ends is completed by the group's thread; wake_driver() ends a poll; a
// connection closed by another thread while claimed fails its requests
// without hanging the driver; requests other threads send on a claimed
// connection are still sent and answered.
#include "common/server_fixture.hpp"

#include "client/io_group.hpp"

#include "tests/support/result.hpp"

#include <atomic>
#include <future>
#include <thread>

namespace {
using namespace rpm;
using namespace std::chrono_literals;
using rpm::test::bytes_of;
using rpm::test::ok;
using rpm::test::TcpServerTest;

class TcpGroupDrive : public TcpServerTest {
protected:
    void SetUp() override {
        TcpServerTest::SetUp();
        group = make_io_group();
        for (int i = 0; i < 3; ++i) {
            ClientOptions c;
            c.client_id = "app";
            c.secret = "app-secret";
            c.io_group = group;
            auto conn = Client(c).connect(uri());
            ASSERT_TRUE(conn) << conn.error().message();
            conns.push_back(std::move(*conn));
            auto r = conns.back().open_region("kv");
            ASSERT_TRUE(r);
            regions.push_back(*r);
        }
    }
    static IoGroup::Deadline in(std::chrono::milliseconds d) { return std::chrono::steady_clock::now() + d; }

    std::shared_ptr<IoGroup> group;
    std::vector<Connection> conns;
    std::vector<RemoteRegion> regions;
};

TEST_F(TcpGroupDrive, TheDriversRequestsCompleteOnItsOwnThread) {
    const std::string rec = "driven";
    for (int round = 0; round < 20; ++round) {
        auto drive = group->try_drive();
        ASSERT_TRUE(drive);
        std::mutex seen_mu;
        std::vector<std::thread::id> ran;
        int failed = 0;
        for (int i = 0; i < 3; ++i)
            regions[i].persist(64u * i, bytes_of(rec), [&](Result<void> r) {
                std::lock_guard lock(seen_mu);
                ran.push_back(std::this_thread::get_id());
                failed += r.has_value() ? 0 : 1;
            });
        ASSERT_TRUE(drive->run_until([&] {
            std::lock_guard lock(seen_mu);
            return ran.size() == 3;
        }, in(10s)));
        EXPECT_EQ(failed, 0);
        for (auto id : ran) EXPECT_EQ(id, std::this_thread::get_id()) << "a completion ran on another thread";
    }
}

TEST_F(TcpGroupDrive, OneDriverAtATime) {
    auto drive = group->try_drive();
    ASSERT_TRUE(drive);
    EXPECT_FALSE(group->try_drive()) << "the driving thread drove twice";
    bool other = true;
    std::thread([&] { other = group->try_drive().has_value(); }).join();
    EXPECT_FALSE(other) << "a second thread drove while the first did";
    drive.reset();
    std::thread([&] { other = group->try_drive().has_value(); }).join();
    EXPECT_TRUE(other) << "the group could not be driven after the drive ended";
}

TEST_F(TcpGroupDrive, AnswersOwedWhenTheDriveEndsAreCompletedByTheGroup) {
    // Requests sent under a drive that ends without reading them: the group's
    // thread must take the sockets back, or these never complete.
    for (int round = 0; round < 20; ++round) {
        std::vector<std::promise<Result<void>>> done(3);
        {
            auto drive = group->try_drive();
            ASSERT_TRUE(drive);
            for (int i = 0; i < 3; ++i)
                regions[i].persist(64u * i, bytes_of("owed"), [&, i](Result<void> r) { done[i].set_value(std::move(r)); });
        }
        for (auto& d : done) {
            auto f = d.get_future();
            ASSERT_EQ(f.wait_for(10s), std::future_status::ready) << "an answer owed at the drive's end never completed";
            EXPECT_TRUE(ok(f.get()));
        }
    }
    // And the sockets are the group's again: a plain callback request works.
    std::promise<Result<void>> p;
    std::vector<std::byte> out(16);
    regions[0].read(0, out, [&](Result<void> r) { p.set_value(std::move(r)); });
    auto f = p.get_future();
    ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
    EXPECT_TRUE(ok(f.get()));
}

TEST_F(TcpGroupDrive, WakeDriverEndsAPoll) {
    auto drive = group->try_drive();
    ASSERT_TRUE(drive);
    std::atomic<bool> flag{false};
    std::thread waker([&] {
        std::this_thread::sleep_for(50ms);
        flag = true;
        group->wake_driver();
    });
    const auto t0 = std::chrono::steady_clock::now();
    const bool woke = drive->run_until([&] { return flag.load(); }, in(20s));
    const auto took = std::chrono::steady_clock::now() - t0;
    waker.join();
    EXPECT_TRUE(woke);
    EXPECT_LT(took, 10s) << "the driver slept until its deadline: wake_driver() did not reach it";
}

TEST_F(TcpGroupDrive, ADeadlineEndsADriveThatNeverSettles) {
    auto drive = group->try_drive();
    ASSERT_TRUE(drive);
    EXPECT_FALSE(drive->run_until([] { return false; }, in(100ms)));
}

TEST_F(TcpGroupDrive, AClaimedConnectionClosedElsewhereFailsItsRequests) {
    auto drive = group->try_drive();
    ASSERT_TRUE(drive);
    // The close races the answer: either way the callback runs exactly once
    // and the driver returns.
    std::atomic<int> calls{0};
    std::vector<std::byte> out(64);
    regions[1].read(0, out, [&](Result<void>) { ++calls; });
    std::thread closer([&] { conns[1].close(); });
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_TRUE(drive->run_until([&] { return calls.load() == 1; }, in(20s)));
    // The failed read completes on the group's thread, which must wake the
    // driver: without that it sleeps until the deadline.
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s) << "the driver was not woken by the failure's completion";
    closer.join();
    EXPECT_EQ(calls.load(), 1);
    // The others still work under the same drive.
    std::atomic<int> succeeded{0};
    regions[0].persist(0, bytes_of("still"), [&](Result<void> r) { succeeded += r.has_value() ? 1 : 0; });
    regions[2].persist(0, bytes_of("still"), [&](Result<void> r) { succeeded += r.has_value() ? 1 : 0; });
    EXPECT_TRUE(drive->run_until([&] { return succeeded.load() == 2; }, in(10s)));
}

TEST_F(TcpGroupDrive, RequestsOfOtherThreadsOnAClaimedConnectionAreAnswered) {
    auto drive = group->try_drive();
    ASSERT_TRUE(drive);
    std::atomic<bool> mine{false};
    regions[0].persist(0, bytes_of("mine"), [&](Result<void>) { mine = true; });  // claims regions[0]'s connection
    ASSERT_TRUE(drive->run_until([&] { return mine.load(); }, in(10s)));
    // Another thread's synchronous calls on the claimed connection, while
    // this thread drives: sent at once, read by the driver.
    std::atomic<bool> finished{false};
    Result<void> theirs;
    std::thread other([&] {
        for (int i = 0; i < 50 && theirs.has_value(); ++i) theirs = regions[0].persist(128, bytes_of("theirs"));
        finished = true;
        group->wake_driver();
    });
    EXPECT_TRUE(drive->run_until([&] { return finished.load(); }, in(20s)));
    other.join();
    EXPECT_TRUE(ok(theirs));
}

} // namespace
