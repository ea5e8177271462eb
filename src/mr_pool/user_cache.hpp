// The per-user (per-connection) half of an MrPool: the L1 stack and the
// user's counters. Only the owning thread touches the L1 and writes the
// counters; stats() reads the counters and the background thread raises
// give_back, both through relaxed atomics.
#pragma once

#include "mr_pool/mr_entry.hpp"

#include <atomic>
#include <cstdint>
#include <memory>

namespace rpm::detail {

class MrPoolState;

/// Counter values, summed over users by stats().
struct UserTotals {
    std::uint64_t l1_hits = 0;
    std::uint64_t l2_hits = 0;
    std::uint64_t global_hits = 0;
    std::uint64_t none_now = 0;
    std::uint64_t stalls_avoided = 0;
    std::uint64_t l1_trims = 0;
    std::uint64_t puts = 0;

    UserTotals& operator+=(const UserTotals& o) noexcept {
        l1_hits += o.l1_hits;
        l2_hits += o.l2_hits;
        global_hits += o.global_hits;
        none_now += o.none_now;
        stalls_avoided += o.stalls_avoided;
        l1_trims += o.l1_trims;
        puts += o.puts;
        return *this;
    }
};

/// One writer (the owner) each: bump() is a load and a store, no locked
/// read-modify-write, and the line is not shared with other users.
struct UserCounters {
    std::atomic<std::uint64_t> l1_hits{0};
    std::atomic<std::uint64_t> l2_hits{0};
    std::atomic<std::uint64_t> global_hits{0};
    std::atomic<std::uint64_t> none_now{0};
    std::atomic<std::uint64_t> stalls_avoided{0};
    std::atomic<std::uint64_t> l1_trims{0};
    std::atomic<std::uint64_t> puts{0};

    [[nodiscard]] UserTotals load() const noexcept {
        constexpr auto r = std::memory_order_relaxed;
        return {l1_hits.load(r), l2_hits.load(r),        global_hits.load(r), none_now.load(r),
                stalls_avoided.load(r), l1_trims.load(r), puts.load(r)};
    }
};

inline void bump(std::atomic<std::uint64_t>& c, std::uint64_t n = 1) noexcept {
    c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

struct alignas(64) UserCache {
    UserCache(std::shared_ptr<MrPoolState> c, std::uint32_t size)
        : pool(std::move(c)), l1(std::make_unique<MrEntry*[]>(size)), l1_size(size) {}

    std::shared_ptr<MrPoolState> pool;
    std::unique_ptr<MrEntry*[]> l1;
    std::uint32_t l1_count = 0;
    const std::uint32_t l1_size;
    /// L1 entries this user holds, free in l1[] or out: never above l1_size,
    /// so the L1 is the connection's allotment, not a cache of free entries
    /// on top of what it has in flight (that would keep a full L1 idle after
    /// every burst, lost to the other connections).
    std::uint32_t owned = 0;
    std::uint32_t bucket = 0;
    /// Set by the background thread when the pool ran short; the owner
    /// checks it in put() and gives surplus L1 entries back.
    std::atomic<bool> give_back{false};
    UserCounters counters;
};

}  // namespace rpm::detail

/// The user's state behind MrPoolUser's pointer: nothing but its cache
/// (MrPoolUser::State is private, so pool internals work on UserCache).
struct rpm::MrPoolUser::State : rpm::detail::UserCache {
    using UserCache::UserCache;
};
