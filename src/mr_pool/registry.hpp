// The pool's entry table and its registrations: every entry ever
// registered, indexed by id (ids are not reused, so a stale id can only
// name a dead entry), and the budget accounting that keeps the pool at or
// below `budget` registrations even while create/grow/add and the
// background thread register at once.
#pragma once

#include "mr_pool/mr_entry.hpp"

#include <rpm/mr_pool.hpp>
#include <rpm/result.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

namespace rpm::detail {

class Registry {
public:
    Registry(MrRegistrar& registrar, std::size_t entry_size, std::uint32_t budget) noexcept
        : registrar_(registrar), entry_size_(entry_size), budget_(budget) {}
    Registry(const Registry&) = delete;
    Registry& operator=(const Registry&) = delete;

    /// Register `n` entries of pool-allocated memory and append them to
    /// `out`. All or nothing unless `partial`, which keeps those registered
    /// before a failure. `background` marks them for stalls_avoided.
    /// ERRORS: errc::mr_budget_exhausted (nothing registered); the
    /// registrar's error; errc::io_error when memory cannot be allocated.
    Result<void> register_new(std::uint32_t n, bool background, bool partial,
                              std::vector<MrEntry*>& out);
    /// Register caller-owned `mem` cut into entries, all or nothing.
    /// RETURN VALUE: the id of the first entry (the rest follow it).
    /// ERRORS: as register_new.
    Result<std::uint32_t> register_external(std::span<std::byte> mem, std::vector<MrEntry*>& out);

    /// Deregister `e`, which the caller holds exclusively, and free its
    /// memory if the pool allocated it.
    void deregister(MrEntry* e) noexcept;
    /// At the pool's end: deregister every entry still registered.
    void deregister_all() noexcept;
    /// The entry with `id`, dead or alive; nullptr for an unknown id.
    [[nodiscard]] MrEntry* find(std::uint32_t id) const noexcept;

    [[nodiscard]] std::uint32_t registered() const noexcept { return registered_.load(std::memory_order_relaxed); }
    /// Registrations still allowed by the budget (in-flight ones count).
    [[nodiscard]] std::uint32_t headroom() const noexcept;
    [[nodiscard]] std::uint64_t registrations() const noexcept { return registrations_.load(std::memory_order_relaxed); }
    [[nodiscard]] std::uint64_t failures() const noexcept { return failures_.load(std::memory_order_relaxed); }
    [[nodiscard]] std::uint64_t deregistrations() const noexcept { return deregistrations_.load(std::memory_order_relaxed); }

private:
    using Made = std::vector<std::unique_ptr<MrEntry>>;

    bool reserve(std::uint32_t n) noexcept;
    void unreserve(std::uint32_t n) noexcept;
    Result<void> register_one(std::span<std::byte> mem, bool owns, Made& made);
    void undo(MrEntry& e) noexcept;
    void rollback(Made& made) noexcept;
    std::uint32_t publish(Made& made, std::vector<MrEntry*>& out);

    MrRegistrar& registrar_;
    const std::size_t entry_size_;
    const std::uint32_t budget_;
    mutable std::mutex table_mu_;
    std::deque<std::unique_ptr<MrEntry>> table_;
    std::atomic<std::uint32_t> reserved_{0};  ///< registered + being registered
    std::atomic<std::uint32_t> registered_{0};
    std::atomic<std::uint64_t> registrations_{0};
    std::atomic<std::uint64_t> failures_{0};
    std::atomic<std::uint64_t> deregistrations_{0};
};

}  // namespace rpm::detail
