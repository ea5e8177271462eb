// One registered entry of an MrPool and the small vocabulary around it.
#pragma once

#include <rpm/mr_pool.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>

namespace rpm::detail {

using Clock = std::chrono::steady_clock;

/// The level an entry was taken from by its last get(): put() uses it.
enum class Level : std::uint8_t { l1, l2, global };

/// Which shared stack holds an entry: 0..7 an L2 bucket, kGlobalHome the
/// global pool. A stack changes an entry's home only under its own lock,
/// so MrPool::remove can tell "free in that stack" by locking just it.
inline constexpr std::uint8_t kGlobalHome = 8;
inline constexpr std::uint8_t kHeld = 9;  ///< in an L1 or handed out: its holder owns it
inline constexpr std::uint8_t kDead = 10; ///< deregistered

struct MrEntry {
    explicit MrEntry(MrBuffer b) noexcept : buffer(b) {}
    MrEntry(const MrEntry&) = delete;
    MrEntry& operator=(const MrEntry&) = delete;

    MrBuffer buffer;            ///< what get() hands out; points back here
    std::span<std::byte> mem;   ///< the registered bytes
    void* handle = nullptr;     ///< the registrar's handle
    std::uint32_t id = 0;       ///< index in the pool's entry table
    bool owns_memory = false;   ///< false for MrPool::add memory (the caller frees it)
    // Written by whoever holds the entry; a stack's lock hands it over.
    bool background = false;    ///< registered by the background thread, never got yet
    Level origin = Level::global;
    Clock::time_point last_use{};  ///< stamped (coarsely) when the entry enters a shared stack
    // Read across threads without the holder's cooperation.
    std::atomic<std::uint8_t> home{kHeld};
    std::atomic<bool> retiring{false};  ///< MrPool::remove asked for it
};

}  // namespace rpm::detail
