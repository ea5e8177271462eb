// A registrar for MrPool tests: counts calls, records the registering
// thread and the live handles, fails on demand, and flags any
// deregistration of a handle it does not know (a double deregistration).
#pragma once

#include <rpm/mr_pool.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace rpm_test {

struct FakeState {
    std::mutex mu;
    std::uint64_t next_handle = 1;
    std::map<void*, std::byte*> live;          // handle -> memory
    std::vector<std::thread::id> reg_threads;  // one per register_memory call
    std::uint64_t registers = 0;               // successful
    std::uint64_t failures = 0;
    std::uint64_t deregisters = 0;
    std::uint64_t bad_deregisters = 0;         // unknown handle or wrong memory
    std::size_t max_live = 0;
    std::atomic<int> fail_next{0};             // fail this many calls
    std::atomic<int> fail_at{-1};              // fail the call with this index (0 = first)
    int calls = 0;
    std::atomic<bool> fail_always{false};
    std::atomic<bool> unaligned_seen{false};

    std::size_t live_count() {
        std::lock_guard g(mu);
        return live.size();
    }
    std::uint64_t register_count() {
        std::lock_guard g(mu);
        return registers;
    }
    std::uint64_t deregister_count() {
        std::lock_guard g(mu);
        return deregisters;
    }
    std::uint64_t bad_count() {
        std::lock_guard g(mu);
        return bad_deregisters;
    }
    std::size_t peak() {
        std::lock_guard g(mu);
        return max_live;
    }
    std::vector<std::thread::id> threads() {
        std::lock_guard g(mu);
        return reg_threads;
    }
    bool is_live(void* handle) {
        std::lock_guard g(mu);
        return live.count(handle) != 0;
    }
};

class FakeRegistrar final : public rpm::MrRegistrar {
public:
    explicit FakeRegistrar(std::shared_ptr<FakeState> s) : s_(std::move(s)) {}

    rpm::Result<void*> register_memory(std::span<std::byte> mem) override {
        if (reinterpret_cast<std::uintptr_t>(mem.data()) % 4096 != 0) s_->unaligned_seen = true;
        std::lock_guard g(s_->mu);
        s_->reg_threads.push_back(std::this_thread::get_id());
        const bool fail_this = s_->calls++ == s_->fail_at.load();
        if (fail_this || s_->fail_always || s_->fail_next.load() > 0) {
            if (!fail_this && s_->fail_next.load() > 0) --s_->fail_next;
            ++s_->failures;
            return rpm::Error(rpm::errc::rdma_unavailable, "fake registration failure");
        }
        void* h = reinterpret_cast<void*>(s_->next_handle++);
        s_->live.emplace(h, mem.data());
        ++s_->registers;
        s_->max_live = std::max(s_->max_live, s_->live.size());
        return h;
    }

    void deregister_memory(void* handle, std::span<std::byte> mem) noexcept override {
        std::lock_guard g(s_->mu);
        auto it = s_->live.find(handle);
        if (it == s_->live.end() || it->second != mem.data()) {
            ++s_->bad_deregisters;
            return;
        }
        s_->live.erase(it);
        ++s_->deregisters;
    }

    [[nodiscard]] std::string device() const override { return "fake0"; }

private:
    std::shared_ptr<FakeState> s_;
};

/// A pool over a fresh FakeRegistrar whose state `state` shares.
inline rpm::Result<rpm::MrPool> fake_pool(std::shared_ptr<FakeState>& state, rpm::MrPoolOptions o) {
    state = std::make_shared<FakeState>();
    return rpm::MrPool::create(std::make_unique<FakeRegistrar>(state), o);
}

/// Options with the background thread doing nothing unless a test asks:
/// no replenish (low_water 0), no idle reclaim (an hour), no deregistration
/// below the budget (floor = budget).
inline rpm::MrPoolOptions quiet_options(std::uint32_t budget = 16, std::uint32_t initial = 8) {
    rpm::MrPoolOptions o;
    o.buffer_size = 4096;
    o.budget = budget;
    o.initial = initial;
    o.floor = budget;
    o.low_water = 0;
    o.replenish_batch = 4;
    o.l1_entries = 2;
    o.l2_buckets = 4;
    o.l2_entries = 2;
    o.idle_time = std::chrono::hours(1);
    o.monitor_interval = std::chrono::microseconds(500);
    return o;
}

/// Polls `pred` every millisecond for up to five seconds.
inline bool eventually(const std::function<bool()>& pred) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < end) {
        if (pred()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return pred();
}

}  // namespace rpm_test
