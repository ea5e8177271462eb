// The closed-loop load (load.hpp). Every client is connected before the
// clock starts, so connection set-up is in neither the warm-up nor the
// measurement; all clients share one start, warm-up end and end time.
#include "load.hpp"

#include "clients.hpp"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cmath>
#include <memory>
#include <mutex>
#include <thread>

namespace kvbench {
namespace {

using Clock = std::chrono::steady_clock;

struct Window {
    Clock::time_point warm_end, end;
};

struct Shared {
    std::atomic<bool> stop{false};  ///< a client failed: the others stop too
    std::mutex mu;
    LoadResult result;
    Clock::time_point last{};       ///< latest end of a measured put
};

// "kvb-<client>-<i>", rebuilt in place (no allocation once it has grown).
void make_key(std::string& key, std::size_t prefix, std::uint64_t i) {
    char digits[24];
    auto [p, ec] = std::to_chars(digits, digits + sizeof digits, i);
    key.resize(prefix);
    key.append(digits, p);
}

// One client's loop: a put is measured when it starts after the warm-up;
// no put starts after the end.
void client_loop(PutClient& c, int id, const std::string& value, Window w, Shared& sh) {
    rpmbench::Histogram latency;
    std::string key = "kvb-" + std::to_string(id) + "-";
    const auto prefix = key.size();
    std::string error;
    Clock::time_point last{};
    for (std::uint64_t i = 0; !sh.stop.load(std::memory_order_relaxed); ++i) {
        make_key(key, prefix, i);
        const auto t0 = Clock::now();
        if (t0 >= w.end) break;
        error = c.put(key, value);
        const auto t1 = Clock::now();
        if (!error.empty()) break;
        if (t0 >= w.warm_end) latency.record(t1 - t0), last = t1;
    }
    std::lock_guard lock(sh.mu);
    if (!error.empty()) {
        ++sh.result.errors;
        if (sh.result.error.empty()) sh.result.error = "client " + std::to_string(id) + ": " + error;
        sh.stop = true;
    }
    sh.result.latency.merge(latency);
    sh.last = std::max(sh.last, last);
}

Clock::duration seconds(double s) { return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s)); }

} // namespace

LoadResult run_load(const Options& o) {
    Address at;
    parse_address(o.addrs.front(), at);
    std::vector<std::unique_ptr<PutClient>> clients;
    for (int i = 0; i < o.clients; ++i) {
        std::string error;
        auto c = connect_client(o, at, error);
        if (!c) {
            LoadResult failed;
            failed.error = "client " + std::to_string(i) + ": " + error;
            return failed;
        }
        clients.push_back(std::move(c));
    }
    const std::string value(o.value_size, 'v');
    // A little after now, so every thread is waiting on the clock, not
    // still being created, when the warm-up begins.
    const auto start = Clock::now() + std::chrono::milliseconds(20);
    const Window w{start + seconds(o.warmup), start + seconds(o.warmup + o.duration)};
    Shared sh;
    std::vector<std::thread> threads;
    for (int i = 0; i < o.clients; ++i)
        threads.emplace_back([&, i] {
            std::this_thread::sleep_until(start);
            client_loop(*clients[i], i, value, w, sh);
        });
    for (auto& t : threads) t.join();
    auto r = std::move(sh.result);
    if (sh.last > w.warm_end) r.measured_s = std::chrono::duration<double>(sh.last - w.warm_end).count();
    return r;
}

} // namespace kvbench
