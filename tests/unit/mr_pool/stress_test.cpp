// Several users getting and putting at once while another thread adds and
// removes entries: no entry is ever held twice, and the counts balance.
#include "tests/unit/mr_pool/fake_registrar.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using rpm::MrBuffer;

constexpr std::size_t kMaxIds = 1 << 16;
constexpr int kWorkers = 4;
constexpr int kRounds = 20000;

struct Ownership {
    std::vector<std::atomic<int>> owner = std::vector<std::atomic<int>>(kMaxIds);
    std::atomic<int> violations{0};

    void take(MrBuffer* b, int who) {
        int expected = 0;
        if (b->id() >= kMaxIds || !owner[b->id()].compare_exchange_strong(expected, who)) ++violations;
        // Plain writes to the bytes: a missing hand-over shows up in TSan.
        std::memset(b->data(), who, 64);
    }
    void give(MrBuffer* b, int who) {
        if (static_cast<int>(b->data()[0]) != who || static_cast<int>(b->data()[63]) != who) ++violations;
        int expected = who;
        if (!owner[b->id()].compare_exchange_strong(expected, 0)) ++violations;
    }
};

struct Tally {
    std::atomic<std::uint64_t> gets{0};
    std::atomic<std::uint64_t> misses{0};
};

void work(rpm::MrPool& pool, Ownership& own, Tally& tally, int who) {
    auto user = pool.create_user(2);
    ASSERT_TRUE(user);
    MrBuffer* held[3] = {};
    std::uint64_t gets = 0;
    std::uint64_t misses = 0;
    for (int i = 0; i < kRounds; ++i) {
        const int n = 1 + (i * 7 + who) % 3;
        for (int k = 0; k < n; ++k) {
            held[k] = user->get();
            if (held[k] == nullptr) {
                ++misses;
                continue;
            }
            ++gets;
            own.take(held[k], who);
        }
        for (int k = n - 1; k >= 0; --k) {
            if (held[k] == nullptr) continue;
            own.give(held[k], who);
            user->put(held[k]);
        }
        if (i % 4096 == 0) user->trim();
    }
    tally.gets += gets;
    tally.misses += misses;
}

// Adds chunks of caller memory and removes entries, free or held.
void add_remove(rpm::MrPool& pool, std::atomic<bool>& done, std::vector<void*>& chunks) {
    std::vector<std::uint32_t> ids;
    for (int i = 0; !done.load(); ++i) {
        void* mem = std::aligned_alloc(4096, 2 * 4096);
        chunks.push_back(mem);
        if (auto first = pool.add({static_cast<std::byte*>(mem), 2 * 4096})) {
            ids.push_back(*first);
            ids.push_back(*first + 1);
        }
        if (ids.size() > 6) {
            auto r = pool.remove(ids.front());
            EXPECT_TRUE(r) << r.error().message();
            ids.erase(ids.begin());
            r = pool.remove(ids[ids.size() / 2]);
            EXPECT_TRUE(r) << r.error().message();
            ids.erase(ids.begin() + static_cast<std::ptrdiff_t>(ids.size() / 2));
        }
        if (i % 8 == 0) (void)pool.remove(static_cast<std::uint32_t>(i % 24));  // initial ones, maybe out
        std::this_thread::sleep_for(200us);
    }
}

TEST(MrPoolStress, ConcurrentUsersNeverShareAnEntry) {
    auto fake = std::make_shared<rpm_test::FakeState>();
    rpm::MrPoolOptions o = rpm_test::quiet_options(64, 24);
    o.floor = 8;
    o.low_water = 4;
    o.replenish_batch = 4;
    o.l2_entries = 4;
    o.idle_time = 2ms;
    o.monitor_interval = 200us;
    Ownership own;
    Tally tally;
    std::vector<void*> chunks;
    {
        auto pool = rpm::MrPool::create(std::make_unique<rpm_test::FakeRegistrar>(fake), o);
        ASSERT_TRUE(pool);
        std::atomic<bool> done{false};
        std::thread adder(add_remove, std::ref(*pool), std::ref(done), std::ref(chunks));
        std::vector<std::thread> workers;
        for (int w = 1; w <= kWorkers; ++w)
            workers.emplace_back(work, std::ref(*pool), std::ref(own), std::ref(tally), w);
        for (auto& t : workers) t.join();
        done = true;
        adder.join();

        EXPECT_EQ(own.violations.load(), 0);
        const auto s = pool->stats();
        EXPECT_EQ(s.l1_hits + s.l2_hits + s.global_hits, tally.gets.load());
        EXPECT_EQ(s.none_now, tally.misses.load());
        EXPECT_EQ(s.in_use, 0U);
        EXPECT_EQ(s.users, 0U);
        EXPECT_LE(s.registered, 64U);
        // The thread may be between two steps of a round: wait for it to settle.
        EXPECT_TRUE(rpm_test::eventually([&] {
            const auto t = pool->stats();
            return t.registrations - t.deregistrations == t.registered &&
                   t.free_global + t.free_l2 == t.registered &&  // no users: no L1, nothing out
                   fake->live_count() == t.registered;
        }));
    }
    EXPECT_EQ(fake->live_count(), 0U);
    EXPECT_EQ(fake->bad_count(), 0U);
    EXPECT_LE(fake->peak(), 64U);
    for (void* p : chunks) std::free(p);
}

}  // namespace
