// A test-and-test-and-set spinlock for the L2 buckets: a bucket is shared
// by a handful of users and held for a few instructions, so sleeping in a
// mutex would cost more than the wait. It yields after a short spin so an
// oversubscribed machine still makes progress.
#pragma once

#include <atomic>
#include <thread>

namespace rpm::detail {

class SpinLock {
public:
    void lock() noexcept {
        while (flag_.test_and_set(std::memory_order_acquire)) {
            for (int spins = 0; flag_.test(std::memory_order_relaxed); ++spins)
                if (spins >= 64) std::this_thread::yield();
        }
    }
    bool try_lock() noexcept { return !flag_.test_and_set(std::memory_order_acquire); }
    void unlock() noexcept { flag_.clear(std::memory_order_release); }

private:
    std::atomic_flag flag_;
};

}  // namespace rpm::detail
