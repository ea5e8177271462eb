// A locked LIFO of free entries: one L2 bucket (Lock = SpinLock, fixed
// capacity) or the global pool (Lock = std::mutex). LIFO so that the entry
// put back last is reused first (likely still warm in the HCA's cache) and
// the bottom holds the longest idle ones.
#pragma once

#include "mr_pool/mr_entry.hpp"

#include <algorithm>
#include <cstddef>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

namespace rpm::detail {

enum class Pushed : std::uint8_t { ok, full, retiring };

template <class Lock>
class EntryStack {
public:
    /// `home` is the tag entries get while here; `capacity` 0 is unbounded.
    void init(std::uint8_t home, std::size_t capacity, std::size_t reserve) {
        home_ = home;
        capacity_ = capacity;
        free_.reserve(reserve);
    }

    /// Push `e`, stamping its last use with `stamp` when given. A retiring
    /// entry is refused under the lock: MrPool::remove, which checks the
    /// stacks under their locks after marking it, cannot then miss it.
    Pushed push(MrEntry* e, std::optional<Clock::time_point> stamp) {
        std::lock_guard guard(lock_);
        if (e->retiring.load(std::memory_order_relaxed)) return Pushed::retiring;
        if (capacity_ != 0 && free_.size() >= capacity_) return Pushed::full;
        if (stamp) e->last_use = *stamp;
        e->home.store(home_, std::memory_order_relaxed);
        free_.push_back(e);
        publish_size();
        return Pushed::ok;
    }

    /// The most recently pushed entry, or nullptr. Cheap when empty (no lock).
    MrEntry* pop() noexcept {
        if (size() == 0) return nullptr;
        std::lock_guard guard(lock_);
        if (free_.empty()) return nullptr;
        MrEntry* e = free_.back();
        free_.pop_back();
        publish_size();
        return release(e);
    }

    /// Take `e` out if it is free here.
    bool take(MrEntry* e) noexcept {
        std::lock_guard guard(lock_);
        if (e->home.load(std::memory_order_relaxed) != home_) return false;
        auto it = std::find(free_.begin(), free_.end(), e);
        if (it == free_.end()) return false;
        free_.erase(it);
        publish_size();
        release(e);
        return true;
    }

    /// Move up to `max` entries for which `pred` holds (called under the
    /// lock, oldest first) to `out`.
    template <class Pred>
    void collect(Pred&& pred, std::size_t max, std::vector<MrEntry*>& out) {
        std::lock_guard guard(lock_);
        std::size_t taken = 0;
        std::size_t kept = 0;
        for (std::size_t i = 0; i < free_.size(); ++i) {
            MrEntry* e = free_[i];
            if (taken < max && pred(*e)) {
                out.push_back(release(e));
                ++taken;
            } else {
                free_[kept++] = e;
            }
        }
        free_.resize(kept);
        publish_size();
    }

    [[nodiscard]] std::uint32_t size() const noexcept { return size_.load(std::memory_order_relaxed); }

private:
    // size_ mirrors free_.size() for lock-free reads (stats, the empty check).
    void publish_size() noexcept {
        size_.store(static_cast<std::uint32_t>(free_.size()), std::memory_order_relaxed);
    }

    MrEntry* release(MrEntry* e) noexcept {
        e->home.store(kHeld, std::memory_order_relaxed);
        return e;
    }

    Lock lock_;
    std::vector<MrEntry*> free_;
    std::size_t capacity_ = 0;
    std::atomic<std::uint32_t> size_{0};
    std::uint8_t home_ = kGlobalHome;
};

}  // namespace rpm::detail
