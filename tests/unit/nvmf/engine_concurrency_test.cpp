// Many threads at once: four doing I/O on their own offload queues (and the
// software path), one mapping and unmapping another namespace under them,
// one reading stats. Run under TSan as well.
#include "engine_fixture.hpp"

#include <atomic>
#include <set>
#include <thread>

namespace rpm::nvmf {
namespace {

using namespace test;
namespace io = wire::io;

constexpr int io_threads = 4;
constexpr int rounds = 200;
constexpr std::uint32_t blocks_per_round = 8;

// Thread t owns blocks [t * region, (t + 1) * region) of nsid 1.
constexpr std::uint64_t region = rounds * blocks_per_round;

struct Outcome {
    int verified = 0;
    int second_ok = 0;
    int second_unmapped = 0;
    int other = 0;
};

void io_loop(Engine& e, SubsystemHandle s, int t, Outcome& out) {
    auto q = e.enable(s);
    if (!q) {
        ++out.other;
        return;
    }
    auto st = (*q)->staging().first(blocks_per_round * 512);
    AlignedBuffer soft(128 * KiB);
    for (int r = 0; r < rounds; ++r) {
        const auto slba = std::uint64_t(t) * region + std::uint64_t(r) * blocks_per_round;
        const unsigned seed = unsigned(t * 1000 + r);
        fill(st, seed);
        const bool wrote = (*q)->execute(view(sqe(io::write, 1, slba, blocks_per_round))) == sc::success;
        const bool read = e.execute_software(s, view(sqe(io::read, 1, slba, blocks_per_round)), soft.bytes()) ==
                          sc::success;
        if (wrote && read && holds(soft.bytes().first(st.size()), seed)) ++out.verified;
        // nsid 2 comes and goes: either answer is right, nothing else.
        const auto second = (*q)->execute(view(sqe(io::read, 2, 0, 1)));
        if (second == sc::success) ++out.second_ok;
        else if (second == sc::invalid_ns) ++out.second_unmapped;
        else ++out.other;
    }
}

TEST(NvmfEngineConcurrency, IoOnFourQueuesWhileAnotherNamespaceIsRemapped) {
    TempDir dir;
    SubsystemAttrs a;
    a.staging_bytes = io_threads * 128 * KiB;
    Rig rig(dir / "disk", io_threads * region * 512, 512, a);
    auto second = rig.engine->create_backend(rig.s, {.path = dir / "second", .create = true, .size = 64 * KiB});
    ASSERT_TRUE(second) << second.error().message();

    std::atomic<bool> done{false};
    std::atomic<int> remaps{0};
    std::thread mapper([&] {
        while (!done.load()) {
            if (rig.engine->map_namespace(*second, 2, 512, 1)) ++remaps;
            std::this_thread::yield();
            (void)rig.engine->unmap_namespace(*second, 2);
        }
    });
    std::thread watcher([&] {
        while (!done.load()) {
            (void)rig.engine->stats(rig.s);
            (void)rig.engine->namespaces(rig.s);
            std::this_thread::yield();
        }
    });
    std::vector<Outcome> outcomes(io_threads);
    std::vector<std::thread> workers;
    for (int t = 0; t < io_threads; ++t)
        workers.emplace_back([&, t] { io_loop(*rig.engine, rig.s, t, outcomes[std::size_t(t)]); });
    for (auto& w : workers) w.join();
    done = true;
    mapper.join();
    watcher.join();

    int second_total = 0;
    for (const auto& o : outcomes) {
        EXPECT_EQ(o.verified, rounds);
        EXPECT_EQ(o.other, 0);
        second_total += o.second_ok + o.second_unmapped;
    }
    EXPECT_EQ(second_total, io_threads * rounds);
    EXPECT_GT(remaps.load(), 0);
    const auto st = rig.engine->stats(rig.s);
    EXPECT_EQ(st.writes, std::uint64_t(io_threads * rounds));
    EXPECT_EQ(st.commands, std::uint64_t(io_threads * rounds * 3));
    EXPECT_EQ(st.enabled_queues, 0u);
    EXPECT_EQ(st.refused_enables, 0u);
}

TEST(NvmfEngineConcurrency, SubsystemsAndBackendsCreatedFromManyThreads) {
    TempDir dir;
    auto e = make_software_engine();
    std::vector<std::thread> threads;
    std::vector<SubsystemHandle> handles(io_threads);
    std::atomic<int> mapped{0};
    for (int t = 0; t < io_threads; ++t)
        threads.emplace_back([&, t] {
            auto s = e->create_subsystem({});
            if (!s) return;
            handles[std::size_t(t)] = *s;
            for (std::uint32_t n = 1; n <= 3; ++n) {
                const auto path = dir / ("t" + std::to_string(t) + "n" + std::to_string(n));
                auto b = e->create_backend(*s, {.path = path, .create = true, .size = 64 * KiB});
                if (b && e->map_namespace(*b, n, 512, 1)) ++mapped;
            }
        });
    for (auto& t : threads) t.join();
    EXPECT_EQ(mapped.load(), io_threads * 3);
    std::set<SubsystemHandle> distinct(handles.begin(), handles.end());
    EXPECT_EQ(distinct.size(), std::size_t(io_threads));
    for (auto h : handles) EXPECT_EQ(e->namespaces(h).size(), 3u);
}

std::size_t open_fds() {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& entry : fs::directory_iterator("/proc/self/fd")) ++n;
    return n;
}

// Each thread's io_uring (an fd and its mappings) goes when the thread does.
TEST(NvmfEngineConcurrency, RingsGoWithTheirThreads) {
    TempDir dir;
    Rig rig(dir / "disk", 64 * KiB);
    AlignedBuffer buf(128 * KiB);
    ASSERT_EQ(rig.run(buf.bytes(), io::read, 1), sc::success);  // this thread's ring exists now
    const auto before = open_fds();
    for (int round = 0; round < 8; ++round) {
        std::vector<std::thread> threads;
        std::atomic<int> ok{0};
        for (int t = 0; t < 8; ++t)
            threads.emplace_back([&] {
                AlignedBuffer mine(4096);
                if (rig.run(mine.bytes(), io::read, 1) == sc::success) ++ok;
            });
        for (auto& t : threads) t.join();
        EXPECT_EQ(ok.load(), 8);
    }
    EXPECT_LE(open_fds(), before);
}

} // namespace
} // namespace rpm::nvmf
