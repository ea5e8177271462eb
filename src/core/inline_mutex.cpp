#include "core/inline_mutex.hpp"

namespace rpm {

// The three-state futex mutex ("Futexes Are Tricky", U. Drepper, mutex 3):
// a waiter marks the lock kContended before it sleeps, so the unlock that
// finds kContended knows to wake one; a woken thread takes the lock as
// kContended again, as it cannot know whether others still sleep (at worst
// one wake-up too many).
void InlineMutex::lock_contended() noexcept {
    int seen = state_.exchange(kContended, std::memory_order_acquire);
    while (seen != kFree) {
        state_.wait(kContended, std::memory_order_relaxed);
        seen = state_.exchange(kContended, std::memory_order_acquire);
    }
}

void InlineMutex::wake_one() noexcept { state_.notify_one(); }

} // namespace rpm
