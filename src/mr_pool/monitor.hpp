// The pool's background thread (one per pool). Each round it registers
// more entries when the global pool runs low, asks users to give L1
// entries back when the pool is empty and gets are missing, and, once per
// monitor_interval, moves idle L2 entries to the global pool and
// deregisters idle global entries above the floor. It wakes every
// monitor_interval or when a get() misses, except in a quiet pool: one
// with no L2 entry, nothing to register and nothing above the floor it may
// deregister. There a round finds nothing to do, and the thread doubles its
// wait each quiet round, up to kQuietWaitCap, until a miss or a poke() (an
// entry reaching a shared level) brings it back to monitor_interval. Why:
// every pool's thread woke 100 to 1000 times a second for nothing, which
// in the lab VM took 6% to 13% of a vCPU per idle server from rxe's work
// (docs/benchmarks-history.md, "Quiet pools sleep").
#pragma once

#include "mr_pool/mr_entry.hpp"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace rpm::detail {

class MrPoolState;

class Monitor {
public:
    explicit Monitor(MrPoolState& state) noexcept : state_(state) {}
    Monitor(const Monitor&) = delete;
    Monitor& operator=(const Monitor&) = delete;
    ~Monitor() { stop(); }

    void start();
    /// Stop and join the thread; a no-op when it never started.
    void stop() noexcept;
    /// A get() found nothing. Never blocks at monitor_interval: the wake-up
    /// is a notify without the lock, so one can be lost, costing at most one
    /// interval. When the thread has backed off (a wait of up to a second),
    /// it passes the thread's lock first, so none is lost.
    void note_miss() noexcept;
    /// An entry has reached an L2 bucket or the global pool, or the global
    /// pool ran below low_water: a round may have work again. Call it after
    /// the change. A fence and a relaxed load unless the thread backed off;
    /// then it publishes the time and wakes the thread under its lock. With
    /// the fence in run(), no poke is lost: either it sees the thread backed
    /// off, or the thread's second look at the pool sees the change.
    void poke() noexcept;
    /// The time to stamp an entry with on its way to a shared level: the
    /// time the thread publishes each round, or, while it is backed off and
    /// that may be up to a whole wait old, the clock's.
    [[nodiscard]] Clock::time_point stamp_time() const noexcept;
    /// Rounds run so far (MrPoolStats::monitor_rounds).
    [[nodiscard]] std::uint64_t rounds() const noexcept { return rounds_.load(std::memory_order_relaxed); }
    /// The longest a quiet pool's thread sleeps between rounds (unless
    /// monitor_interval is longer).
    static constexpr std::chrono::milliseconds kQuietWaitCap{1000};

private:
    void run();
    bool round(Clock::time_point now);
    void replenish(Clock::time_point now);
    void ask_give_back() noexcept;
    void reclaim_l2(Clock::time_point now);
    void deregister_idle(Clock::time_point now);
    /// Nothing for a round to do until a miss or a poke (see the top).
    [[nodiscard]] bool quiet() const noexcept;

    MrPoolState& state_;
    std::thread thread_;
    std::mutex mu_;
    std::condition_variable cv_;
    bool stop_ = false;  // guarded by mu_
    std::atomic<bool> woken_{false};
    std::atomic<bool> missed_{false};
    std::atomic<bool> backed_off_{false};  // the thread waits longer than monitor_interval
    std::atomic<std::uint64_t> rounds_{0};
    // Only the thread itself uses these.
    Clock::time_point retry_after_{};      ///< no registration before (after a failure)
    Clock::time_point next_maintenance_{}; ///< idle reclaim runs once per interval
};

}  // namespace rpm::detail
