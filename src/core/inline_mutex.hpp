// A mutex whose uncontended lock and unlock are one atomic instruction
// each, inline; a contended one sleeps on a futex (std::atomic::wait).
//
// Why not std::mutex: each of its lock() and unlock() is a call into libc
// (pthread_mutex_lock, then __pthread_mutex_unlock_usercnt behind
// pthread_mutex_unlock), six calls per locked section. An rdma://
// operation takes its connection's locks three to five times, and in the
// lab a call costs tens of nanoseconds (docs/benchmarks-history.md, "A call costs
// more than its instructions in the lab"); on the hot path the lock is
// almost never contended. Not recursive; no timed waits; meets Lockable,
// so std::lock_guard and std::unique_lock take it (not
// std::condition_variable: use condition_variable_any, or std::mutex).
// always_inline: at -O2 GCC left an unlock out of line in a cold-looking
// path (a call per synchronous operation, callgrind).
#pragma once

#include <atomic>
#include <mutex>  // std::try_to_lock_t

namespace rpm {

class InlineMutex {
public:
    InlineMutex() noexcept = default;
    InlineMutex(const InlineMutex&) = delete;
    InlineMutex& operator=(const InlineMutex&) = delete;

    [[gnu::always_inline]] void lock() noexcept {
        int expected = kFree;
        if (state_.compare_exchange_strong(expected, kLocked, std::memory_order_acquire, std::memory_order_relaxed))
            [[likely]]
            return;
        lock_contended();
    }
    [[gnu::always_inline]] [[nodiscard]] bool try_lock() noexcept {
        int expected = kFree;
        return state_.compare_exchange_strong(expected, kLocked, std::memory_order_acquire, std::memory_order_relaxed);
    }
    [[gnu::always_inline]] void unlock() noexcept {
        // kContended: a thread sleeps (or is about to) in lock_contended().
        if (state_.exchange(kFree, std::memory_order_release) == kContended) [[unlikely]]
            wake_one();
    }

private:
    static constexpr int kFree = 0, kLocked = 1, kContended = 2;
    // Out of line: the cold paths stay out of every caller's code.
    void lock_contended() noexcept;
    void wake_one() noexcept;
    std::atomic<int> state_{kFree};
};

/// std::lock_guard (and std::unique_lock's try_to_lock) for an InlineMutex,
/// whose destructor is always inline: GCC left std::lock_guard's and
/// std::unique_lock's out of line in the rdma:// completion spins (a call
/// per operation, callgrind). Not movable; owns() for the try form.
class [[nodiscard]] InlineLock {
public:
    [[gnu::always_inline]] explicit InlineLock(InlineMutex& m) noexcept : m_(m), owns_(true) { m_.lock(); }
    [[gnu::always_inline]] InlineLock(InlineMutex& m, std::try_to_lock_t) noexcept : m_(m), owns_(m.try_lock()) {}
    [[gnu::always_inline]] ~InlineLock() {
        if (owns_) m_.unlock();
    }
    InlineLock(const InlineLock&) = delete;
    InlineLock& operator=(const InlineLock&) = delete;
    [[nodiscard]] bool owns() const noexcept { return owns_; }
    explicit operator bool() const noexcept { return owns_; }

private:
    InlineMutex& m_;
    bool owns_;
};

} // namespace rpm
