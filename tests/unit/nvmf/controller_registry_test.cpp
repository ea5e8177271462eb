// The Registry: cntlid allocation and reuse, release of queues and
// controllers, keep-alive expiry, and concurrent use (run it under TSan).
#include "controller_fixture.hpp"

#include <atomic>
#include <mutex>
#include <set>
#include <thread>

namespace rpm::nvmf::target::test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

using NvmfControllerRegistry = ControllerTest;

TEST_F(NvmfControllerRegistry, CntlidsStartAtOneAndAreUnique) {
    auto a = connect_admin().first;
    auto b = connect_admin(wire::discovery_nqn).first;
    auto c = connect_admin(nvm_nqn, host_b).first;
    ASSERT_TRUE(a && b && c);
    EXPECT_EQ(a->cntlid(), 1);
    EXPECT_EQ(b->cntlid(), 2);
    EXPECT_EQ(c->cntlid(), 3);
}

TEST_F(NvmfControllerRegistry, ReleasedCntlidIsReused) {
    auto a = connect_admin().first;
    auto b = connect_admin().first;
    ASSERT_TRUE(a && b);
    registry->release(a, 0);
    auto c = connect_admin().first;
    ASSERT_TRUE(c);
    EXPECT_EQ(c->cntlid(), 1) << "the lowest free one";
    EXPECT_EQ(connect_admin().first->cntlid(), 3);
}

TEST_F(NvmfControllerRegistry, ReleasingAnIoQueueKeepsTheController) {
    auto c = enabled();
    ASSERT_TRUE(connect_io(c->cntlid(), 1).first);
    registry->release(c, 1);
    EXPECT_TRUE(connect_io(c->cntlid(), 2).first);
    EXPECT_EQ(connect_admin().first->cntlid(), 2) << "cntlid 1 still taken";
}

TEST_F(NvmfControllerRegistry, ReleasingTheAdminQueueForgetsTheController) {
    auto c = enabled();
    const auto id = c->cntlid();
    registry->release(c, 0);
    auto [io, o] = connect_io(id, 1);
    EXPECT_FALSE(io);
    EXPECT_EQ(o.status, wire::sc::connect_invalid_parameters);
}

TEST_F(NvmfControllerRegistry, ReleaseOfNullIsHarmless) {
    registry->release(nullptr, 0);
    EXPECT_EQ(connect_admin().first->cntlid(), 1);
}

TEST_F(NvmfControllerRegistry, TakeExpiredRemovesOnlyExpiredControllers) {
    auto short_kato = enabled(nvm_nqn, host_a, 100);
    auto no_kato = enabled(nvm_nqn, host_b, 0);
    auto long_kato = enabled(nvm_nqn, host_a, 60000);
    EXPECT_TRUE(registry->take_expired(Clock::now()).empty());
    const auto gone = registry->take_expired(Clock::now() + 1s);
    ASSERT_EQ(gone.size(), 1u);
    EXPECT_EQ(gone[0], short_kato);
    EXPECT_FALSE(connect_io(short_kato->cntlid(), 1).first) << "no longer in the registry";
    EXPECT_TRUE(connect_io(no_kato->cntlid(), 1, host_b).first);
    EXPECT_TRUE(connect_io(long_kato->cntlid(), 1).first);
    EXPECT_TRUE(registry->take_expired(Clock::now() + 1s).empty()) << "taken once";
}

TEST_F(NvmfControllerRegistry, LateReleaseOfExpiredControllerLeavesItsSuccessorAlone) {
    auto old = enabled(nvm_nqn, host_a, 100);
    ASSERT_EQ(registry->take_expired(Clock::now() + 1s).size(), 1u);
    auto successor = enabled();
    ASSERT_EQ(successor->cntlid(), old->cntlid()) << "the cntlid was reused";
    registry->release(old, 0);  // the old session closes only now
    EXPECT_TRUE(connect_io(successor->cntlid(), 1).first) << "the successor is still registered";
    EXPECT_EQ(connect_admin().first->cntlid(), old->cntlid() + 1) << "and its cntlid still taken";
}

TEST_F(NvmfControllerRegistry, AllCntlidsTakenIsControllerBusy) {
    std::vector<std::shared_ptr<Controller>> all;
    all.reserve(0xFFEF);
    for (int i = 0; i < 0xFFEF; ++i) {
        auto c = connect_admin().first;
        ASSERT_TRUE(c) << i;
        all.push_back(std::move(c));
    }
    EXPECT_EQ(all.back()->cntlid(), 0xFFEF);
    auto [none, o] = connect_admin();
    EXPECT_FALSE(none);
    EXPECT_EQ(o.status, wire::sc::connect_controller_busy);
    registry->release(all[100], 0);
    auto again = connect_admin().first;
    ASSERT_TRUE(again);
    EXPECT_EQ(again->cntlid(), 101);
}

// Threads connect, enable, add and drop I/O queues and disconnect, while
// another sweeps for expired controllers and counts I/O: no cntlid is ever
// live twice, and everything is forgotten at the end.
TEST_F(NvmfControllerRegistry, ConcurrentConnectAndRelease) {
    std::mutex live_mu;
    std::set<std::uint16_t> live;
    std::atomic<int> duplicates{0}, failures{0};
    std::atomic<bool> stop{false};
    auto worker = [&](const char* host) {
        for (int i = 0; i < 150; ++i) {
            auto [c, o] = connect_admin(nvm_nqn, host, 0);
            if (!c) { ++failures; continue; }
            {
                std::lock_guard lock(live_mu);
                if (!live.insert(c->cntlid()).second) ++duplicates;
            }
            c->property_set(prop_set(wire::prop::cc, cc_enable));
            auto [io, o2] = connect_io(c->cntlid(), 1, host);
            if (!io) ++failures;
            c->record_io(true, 4096);
            c->admin(admin_sqe(wire::admin::keep_alive), {});
            registry->release(c, 1);
            {
                std::lock_guard lock(live_mu);
                live.erase(c->cntlid());
            }
            registry->release(c, 0);
        }
    };
    std::thread sweeper([&] {
        while (!stop) (void)registry->take_expired(Clock::now());
    });
    std::vector<std::thread> threads;
    for (const char* host : {host_a, host_b, host_a, host_b}) threads.emplace_back(worker, host);
    for (auto& t : threads) t.join();
    stop = true;
    sweeper.join();
    EXPECT_EQ(duplicates, 0);
    EXPECT_EQ(failures, 0);
    EXPECT_EQ(connect_admin().first->cntlid(), 1) << "every controller was forgotten";
}

// The admin thread reads logs while I/O threads count commands and errors
// on the same controller.
TEST_F(NvmfControllerRegistry, ConcurrentIoAccountingOnOneController) {
    auto c = enabled();
    constexpr int per_thread = 2000;
    std::atomic<bool> stop{false};
    std::thread admin([&] {
        while (!stop) {
            (void)c->admin(log_sqe(wire::lid::smart, 512), {});
            (void)c->admin(log_sqe(wire::lid::error, 1024, 0, 0), {});
            (void)c->ready();
            (void)c->io_queues();
        }
    });
    std::vector<std::thread> io;
    for (int t = 0; t < 2; ++t)
        io.emplace_back([&] {
            for (int i = 0; i < per_thread; ++i) {
                c->record_io(i % 2 == 0, 512);
                if (i % 100 == 0) c->record_error(1, std::uint16_t(i), wire::sc::lba_out_of_range, 1);
            }
        });
    for (auto& t : io) t.join();
    stop = true;
    admin.join();
    const auto d = c->admin(log_sqe(wire::lid::smart, 512), {}).data;
    ASSERT_EQ(d.size(), 512u);
    EXPECT_EQ(wire::get64(&d[64]), std::uint64_t(per_thread)) << "reads: half of each thread's";
    EXPECT_EQ(wire::get64(&d[80]), std::uint64_t(per_thread)) << "writes";
    EXPECT_EQ(wire::get64(&d[176]), 2u * per_thread / 100) << "errors";
}

} // namespace
} // namespace rpm::nvmf::target::test
