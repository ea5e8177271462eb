// rpm::MrPool's get+put fast path at each level, and its scaling with
// threads (each thread its own MrPoolUser), against malloc+free of the
// same 64 KiB and a std::mutex lock+unlock pair measured in the same run
// (docs/benchmarks.md, "MR pool"). The registrar is fake: registration is
// never on the get/put path.
#include "../mr_pool/registrar.hpp"

#include <rpm/mr_pool.hpp>

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <mutex>
#include <optional>
#include <vector>

namespace {

using rpmbench::FakeRegistrar;

constexpr std::size_t kBufferSize = 64 * 1024;

std::optional<rpm::MrPool> make_pool(std::uint32_t initial, std::uint32_t l1, std::uint32_t l2) {
    rpm::MrPoolOptions o;
    o.buffer_size = kBufferSize;
    // All registered up front and none more allowed: the background thread
    // then never registers (which would refill a level a benchmark keeps
    // empty) nor deregisters while a benchmark runs.
    o.budget = initial;
    o.initial = initial;
    o.floor = initial;
    o.low_water = 0;
    o.l1_entries = l1;
    o.l2_entries = l2;
    auto p = rpm::MrPool::create(std::make_unique<FakeRegistrar>(), o);
    if (!p) return std::nullopt;
    return std::move(*p);
}

// Where the gets of a loop were served, per iteration, as counters, so a
// benchmark that does not hit the level its name says shows it.
void count_levels(benchmark::State& st, const rpm::MrPool& pool, const rpm::MrPoolStats& before) {
    const auto after = pool.stats();
    const auto per = [&](std::uint64_t a, std::uint64_t b) {
        return benchmark::Counter(static_cast<double>(a - b) / static_cast<double>(st.iterations()));
    };
    st.counters["l1"] = per(after.l1_hits, before.l1_hits);
    st.counters["l2"] = per(after.l2_hits, before.l2_hits);
    st.counters["global"] = per(after.global_hits, before.global_hits);
}

void BM_MrPoolGetPut_L1(benchmark::State& st) {
    auto pool = make_pool(64, 8, 32);
    if (!pool) return st.SkipWithError("MrPool::create failed");
    auto user = pool->create_user();
    if (!user) return st.SkipWithError("create_user failed");
    const auto before = pool->stats();
    for (auto _ : st) {
        rpm::MrBuffer* b = user->get();
        benchmark::DoNotOptimize(b);
        user->put(b);
    }
    count_levels(st, *pool, before);
}
BENCHMARK(BM_MrPoolGetPut_L1);

// Two users, the taker's L1 empty and the giver's L1 full: every get the
// taker makes misses L1 and every put the giver makes finds L1 full, so
// both go to the shared levels (the seed's L2 and global paths). The L2
// path puts both users in one bucket; the global path puts them in
// different buckets, the taker's empty and the giver's full.
struct Spill {
    std::optional<rpm::MrPool> pool;
    std::vector<rpm::MrPoolUser> users;
    rpm::MrPoolUser* giver = nullptr;
    rpm::MrPoolUser* taker = nullptr;
};

// Users join the least-used bucket, ties to the lowest: with four buckets
// the fifth user shares bucket 0 with the first.
bool arrange(Spill& s, bool same_bucket) {
    s.pool = make_pool(64, 4, 8);
    if (!s.pool) return false;
    s.users.reserve(5);  // no reallocation: giver and taker point into it
    for (int i = 0; i < 5; ++i) {
        if (i == 4) {  // the taker, once the global pool is empty: its L1 stays empty
            std::vector<rpm::MrBuffer*> out;
            for (auto n = s.giver->l1_free() + s.pool->stats().free_global; n > 0; --n) out.push_back(s.giver->get());
            auto t = s.pool->create_user();
            if (!t) return false;
            s.users.push_back(std::move(*t));
            for (rpm::MrBuffer* b : out) s.giver->put(b);  // the giver's L1, its bucket, then the global pool
            break;
        }
        auto u = s.pool->create_user();
        if (!u) return false;
        s.users.push_back(std::move(*u));
        if (i == (same_bucket ? 0 : 1)) s.giver = &s.users.back();
    }
    s.taker = &s.users.back();
    return s.taker->l1_free() == 0 && s.giver->l1_free() == s.giver->l1_size() &&
           (s.taker->bucket() == s.giver->bucket()) == same_bucket;
}

void spill_loop(benchmark::State& st, bool same_bucket) {
    Spill s;
    if (!arrange(s, same_bucket)) return st.SkipWithError("could not arrange the users");
    const auto before = s.pool->stats();
    for (auto _ : st) {
        rpm::MrBuffer* b = s.taker->get();
        benchmark::DoNotOptimize(b);
        s.giver->put(b);
    }
    count_levels(st, *s.pool, before);
}

void BM_MrPoolGetPut_L2(benchmark::State& st) { spill_loop(st, true); }
BENCHMARK(BM_MrPoolGetPut_L2);

void BM_MrPoolGetPut_Global(benchmark::State& st) { spill_loop(st, false); }
BENCHMARK(BM_MrPoolGetPut_Global);

// One pool for every thread count; each thread makes its own user.
rpm::MrPool& shared_pool() {
    static auto pool = make_pool(1024, 8, 32);
    return *pool;
}

// range(0) gets in a row, then as many puts: 8 (the L1 size) stays in L1;
// 16 takes half from the shared levels and puts half back there.
void BM_MrPoolThreads(benchmark::State& st) {
    auto user = shared_pool().create_user();
    if (!user) return st.SkipWithError("create_user failed");
    const auto burst = static_cast<std::size_t>(st.range(0));
    std::vector<rpm::MrBuffer*> held(burst);
    for (auto _ : st) {
        for (auto& b : held) b = user->get();
        benchmark::DoNotOptimize(held.data());
        for (auto* b : held) user->put(b);
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations() * burst));  // get+put pairs
}
BENCHMARK(BM_MrPoolThreads)->Arg(1)->Arg(16)->Threads(1)->Threads(2)->Threads(4)->Threads(8)->UseRealTime();

void BM_MallocFree(benchmark::State& st) {
    const auto n = static_cast<std::size_t>(st.range(0));
    for (auto _ : st) {
        void* p = std::malloc(n);
        benchmark::DoNotOptimize(p);
        std::free(p);
    }
    st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()));
}
BENCHMARK(BM_MallocFree)->Arg(kBufferSize)->Threads(1)->Threads(2)->Threads(4)->Threads(8)->UseRealTime();

void BM_MutexLockUnlock(benchmark::State& st) {
    std::mutex mu;
    for (auto _ : st) {
        mu.lock();
        benchmark::ClobberMemory();
        mu.unlock();
    }
}
BENCHMARK(BM_MutexLockUnlock);

} // namespace
