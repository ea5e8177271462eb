// The pool's background thread (one per pool). Each round it registers
// more entries when the global pool runs low, asks users to give L1
// entries back when the pool is empty and gets are missing, and, once per
// monitor_interval, moves idle L2 entries to the global pool and
// deregisters idle global entries above the floor. It wakes every
// monitor_interval or when a get() misses.
#pragma once

#include "mr_pool/detail/mr_entry.hpp"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace rpm::detail {

class MrPoolCore;

class Monitor {
public:
    explicit Monitor(MrPoolCore& core) noexcept : core_(core) {}
    Monitor(const Monitor&) = delete;
    Monitor& operator=(const Monitor&) = delete;
    ~Monitor() { stop(); }

    void start();
    /// Stop and join the thread; a no-op when it never started.
    void stop() noexcept;
    /// A get() found nothing. Never blocks: the wake-up is a notify without
    /// the lock, so one can be lost, costing at most one monitor_interval.
    void note_miss() noexcept;

private:
    void run();
    void round(Clock::time_point now);
    void replenish(Clock::time_point now);
    void ask_give_back() noexcept;
    void reclaim_l2(Clock::time_point now);
    void deregister_idle(Clock::time_point now);

    MrPoolCore& core_;
    std::thread thread_;
    std::mutex mu_;
    std::condition_variable cv_;
    bool stop_ = false;  // guarded by mu_
    std::atomic<bool> woken_{false};
    std::atomic<bool> missed_{false};
    // Only the thread itself uses these.
    Clock::time_point retry_after_{};      ///< no registration before (after a failure)
    Clock::time_point next_maintenance_{}; ///< idle reclaim runs once per interval
};

}  // namespace rpm::detail
