// The pool's background thread (see monitor.hpp).
#include "mr_pool/monitor.hpp"

#include "mr_pool/pool_state.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <vector>

namespace rpm::detail {

void Monitor::start() {
    thread_ = std::thread([this] { run(); });
}

void Monitor::stop() noexcept {
    {
        std::lock_guard guard(mu_);
        stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void Monitor::note_miss() noexcept {
    missed_.store(true, std::memory_order_relaxed);
    woken_.store(true, std::memory_order_relaxed);
    // A backed-off thread's wait can last a second: pass its lock once, so
    // that it is either before its check of woken_ or asleep for the notify.
    if (backed_off_.load(std::memory_order_relaxed)) std::lock_guard guard(mu_);
    cv_.notify_one();
}

void Monitor::poke() noexcept {
    std::atomic_thread_fence(std::memory_order_seq_cst);  // pairs with run()'s
    if (!backed_off_.load(std::memory_order_relaxed)) return;
    state_.set_coarse_now(Clock::now());  // for stamp_time() once the flag is down
    {
        std::lock_guard guard(mu_);
        woken_.store(true, std::memory_order_relaxed);
        backed_off_.store(false, std::memory_order_release);
    }
    cv_.notify_one();
}

Clock::time_point Monitor::stamp_time() const noexcept {
    if (backed_off_.load(std::memory_order_acquire)) return Clock::now();
    return state_.coarse_now();
}

bool Monitor::quiet() const noexcept {
    const MrPoolOptions& o = state_.options();
    MrPoolState& state = state_;
    for (auto& bucket : state.buckets())
        if (bucket.size() != 0) return false;  // idle reclaim comes due
    const std::uint32_t free = state.global().size();
    if (free < o.low_water && state.registry().headroom() > 0) return false;  // replenish
    if (state.registry().registered() > o.floor && free > o.low_water) return false;  // idle deregistration
    return !missed_.load(std::memory_order_relaxed);
}

void Monitor::run() {
    const Clock::duration interval = state_.options().monitor_interval;
    const Clock::duration cap = std::max<Clock::duration>(interval, kQuietWaitCap);
    Clock::duration wait = interval;
    std::unique_lock lock(mu_);
    while (!stop_) {
        cv_.wait_for(lock, wait, [this] { return stop_ || woken_.load(std::memory_order_relaxed); });
        if (stop_) break;
        const bool woken = woken_.exchange(false, std::memory_order_relaxed);
        lock.unlock();
        const bool maintained = round(Clock::now());
        lock.lock();
        if (woken || !maintained || !quiet()) {
            wait = interval;
            backed_off_.store(false, std::memory_order_relaxed);
            continue;
        }
        // Quiet: say so first, then look again, so that a caller who
        // changed the pool meanwhile (and pokes after) either is seen here
        // or sees the flag (its poke needs this lock: after the wait began).
        backed_off_.store(true, std::memory_order_relaxed);
        std::atomic_thread_fence(std::memory_order_seq_cst);
        if (!quiet()) {
            wait = interval;
            backed_off_.store(false, std::memory_order_relaxed);
            continue;
        }
        wait = std::min(wait * 2, cap);
    }
}

// Misses can wake the thread far more often than once per interval; only
// the cheap, urgent steps run on every wake-up. RETURN VALUE: whether the
// maintenance (idle reclaim) ran too.
bool Monitor::round(Clock::time_point now) {
    rounds_.fetch_add(1, std::memory_order_relaxed);
    state_.set_coarse_now(now);
    replenish(now);
    ask_give_back();
    if (now < next_maintenance_) return false;
    next_maintenance_ = now + state_.options().monitor_interval;
    reclaim_l2(now);
    deregister_idle(now);
    return true;
}

// Registers outside every pool lock; after a failure waits one interval
// before trying again, however often misses wake the thread.
void Monitor::replenish(Clock::time_point now) {
    const MrPoolOptions& o = state_.options();
    if (now < retry_after_ || state_.global().size() >= o.low_water) return;
    const std::uint32_t n = std::min(o.replenish_batch, state_.registry().headroom());
    if (n == 0) return;
    std::vector<MrEntry*> made;
    const auto r = state_.registry().register_new(n, true, true, made);
    for (MrEntry* e : made) state_.to_global(e, now);
    if (!r) retry_after_ = now + o.monitor_interval;
}

void Monitor::ask_give_back() noexcept {
    if (!missed_.exchange(false, std::memory_order_relaxed)) return;
    if (state_.global().size() == 0) state_.request_give_back();
}

// Idle L2 entries go to the global pool with their last-use time kept:
// moving is not using, so they may be deregistered as soon as they are
// idle there too. A retiring entry is left where it is: MrPool::remove,
// which marked it, takes it out of its bucket and deregisters it before
// returning, as documented; taken here first, remove would find nothing and
// the deregistration would come after it returned. One marked after it was
// collected here is deregistered here.
void Monitor::reclaim_l2(Clock::time_point now) {
    const auto idle = state_.options().idle_time;
    std::vector<MrEntry*> found;
    for (auto& bucket : state_.buckets()) {
        found.clear();
        bucket.collect([&](const MrEntry& e) {
            return !e.retiring.load(std::memory_order_relaxed) && now - e.last_use >= idle;
        }, std::numeric_limits<std::size_t>::max(), found);
        std::uint64_t moved = 0;
        for (MrEntry* e : found) {
            if (e->retiring.load(std::memory_order_relaxed)) {
                state_.drop(e);
            } else {
                state_.to_global(e, std::nullopt);
                ++moved;
            }
        }
        state_.count_l2_reclaims(moved);
    }
}

// At most replenish_batch per round, never below the floor, and never
// below low_water free entries, which would only make replenish register
// them again on the next round.
void Monitor::deregister_idle(Clock::time_point now) {
    const MrPoolOptions& o = state_.options();
    const std::uint32_t registered = state_.registry().registered();
    const std::uint32_t free = state_.global().size();
    std::uint32_t left = std::min({registered > o.floor ? registered - o.floor : 0U,
                                   free > o.low_water ? free - o.low_water : 0U, o.replenish_batch});
    std::vector<MrEntry*> found;
    state_.global().collect([&](const MrEntry& e) {
        // A retiring entry is MrPool::remove's to take and deregister before
        // it returns (as in reclaim_l2): collected here between its marking
        // and its take, remove found nothing and returned first.
        if (e.retiring.load(std::memory_order_relaxed)) return false;
        // The pool cannot make MrPool::add memory again: only remove() ends it.
        if (left == 0 || !e.owns_memory || now - e.last_use < o.idle_time) return false;
        --left;
        return true;
    }, std::numeric_limits<std::size_t>::max(), found);
    std::uint64_t idle = 0;
    for (MrEntry* e : found) {
        if (!e->retiring.load(std::memory_order_relaxed)) ++idle;
        state_.drop(e);
    }
    state_.count_idle_deregistered(idle);
}

}  // namespace rpm::detail
