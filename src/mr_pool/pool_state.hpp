// MrPoolState: the shared state behind MrPool and its MrPoolUsers (held by
// shared_ptr from both, so users may outlive the MrPool object). It owns
// the registrar, the entry table, the L2 buckets, the global pool, the
// list of live users and the background thread.
//
// Locks are never nested: the table mutex, each bucket's spinlock, the
// global mutex and the users mutex are each taken alone, and the registrar
// is called with none of them held (but the table mutex at the pool's end,
// when no other thread is left).
#pragma once

#include "mr_pool/entry_stack.hpp"
#include "mr_pool/monitor.hpp"
#include "mr_pool/mr_entry.hpp"
#include "mr_pool/registry.hpp"
#include "mr_pool/spin_lock.hpp"
#include "mr_pool/user_cache.hpp"

#include <rpm/mr_pool.hpp>
#include <rpm/result.hpp>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace rpm::detail {

inline constexpr std::size_t kPageSize = 4096;
inline constexpr std::uint32_t kMaxBuckets = 8;

struct alignas(64) Bucket : EntryStack<SpinLock> {};
using GlobalStack = EntryStack<std::mutex>;

class MrPoolState {
public:
    /// Registers opts.initial entries, then starts the background thread.
    /// `opts` must be valid (MrPool::create checks them).
    /// ERRORS: the registrar's error (nothing stays registered).
    static Result<std::shared_ptr<MrPoolState>> create(std::unique_ptr<MrRegistrar> registrar,
                                                      const MrPoolOptions& opts);
    MrPoolState(std::unique_ptr<MrRegistrar> registrar, const MrPoolOptions& opts);
    MrPoolState(const MrPoolState&) = delete;
    MrPoolState& operator=(const MrPoolState&) = delete;
    /// Stops the thread, then deregisters every entry, even those still out.
    ~MrPoolState();

    static MrBuffer make_buffer(MrEntry* e) noexcept {
        MrBuffer b;
        b.entry_ = e;
        return b;
    }
    static MrEntry* entry_of(MrBuffer* b) noexcept { return b->entry_; }

    // For MrPoolUser. get_shared/put_shared are its slow paths past L1.
    MrEntry* get_shared(UserCache& u) noexcept;
    void put_shared(UserCache& u, MrEntry* e) noexcept;
    void give_back(UserCache& u) noexcept;
    void trim(UserCache& u) noexcept;
    void attach(UserCache& u);
    void detach(UserCache& u) noexcept;

    // For MrPool.
    Result<void> grow(std::uint32_t n);
    Result<std::uint32_t> add(std::span<std::byte> memory);
    Result<void> remove(std::uint32_t id);
    [[nodiscard]] MrPoolStats stats() const;
    [[nodiscard]] const MrPoolOptions& options() const noexcept { return opts_; }

    // For the Monitor.
    Registry& registry() noexcept { return registry_; }
    GlobalStack& global() noexcept { return global_; }
    std::span<Bucket> buckets() noexcept { return {buckets_.data(), opts_.l2_buckets}; }
    /// Push `e` to the global pool; a retiring entry is deregistered instead.
    void to_global(MrEntry* e, std::optional<Clock::time_point> stamp) noexcept;
    /// Deregister `e`, held exclusively by the caller.
    void drop(MrEntry* e) noexcept { registry_.deregister(e); }
    void request_give_back() noexcept;
    /// The time put() stamps entries with: reading the clock would cost a
    /// put to L2 about as much as the rest of it, so the thread publishes
    /// the time each round and entries look at most one interval older.
    void set_coarse_now(Clock::time_point now) noexcept {
        coarse_now_.store(now.time_since_epoch().count(), std::memory_order_relaxed);
    }
    [[nodiscard]] Clock::time_point coarse_now() const noexcept {
        return Clock::time_point(Clock::duration(coarse_now_.load(std::memory_order_relaxed)));
    }
    /// The thread counts what it moved or dropped after doing it; release,
    /// so that whoever reads a count (acquire, in stats()) also sees its
    /// entries where the count says they went.
    void count_l2_reclaims(std::uint64_t n) noexcept { l2_reclaims_.fetch_add(n, std::memory_order_release); }
    void count_idle_deregistered(std::uint64_t n) noexcept {
        idle_deregistered_.fetch_add(n, std::memory_order_release);
    }

private:
    template <class Stack>
    MrEntry* pop_live(Stack& s) noexcept;
    /// A free entry from any bucket but `own` (the miss path only).
    MrEntry* steal(std::uint32_t own) noexcept;
    void l1_to_global(UserCache& u, std::uint32_t from, std::uint32_t to) noexcept;
    bool take_free(MrEntry* e) noexcept;
    std::uint32_t pick_bucket() const noexcept;

    const std::unique_ptr<MrRegistrar> registrar_;
    const MrPoolOptions opts_;
    const std::string device_;
    Registry registry_;
    GlobalStack global_;
    std::array<Bucket, kMaxBuckets> buckets_{};
    mutable std::mutex users_mu_;
    std::vector<UserCache*> users_;                    // guarded by users_mu_
    std::array<std::uint32_t, kMaxBuckets> bucket_users_{};  // guarded by users_mu_
    UserTotals dead_;                                  // guarded by users_mu_: users gone
    std::atomic<Clock::rep> coarse_now_{Clock::now().time_since_epoch().count()};
    std::atomic<std::uint64_t> l2_reclaims_{0};
    std::atomic<std::uint64_t> idle_deregistered_{0};
    Monitor monitor_{*this};  // last: stopped before the rest goes
};

}  // namespace rpm::detail
