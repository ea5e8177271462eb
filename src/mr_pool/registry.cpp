// The entry table, registration and the budget (see registry.hpp).
#include "mr_pool/registry.hpp"

#include "mr_pool/pool_state.hpp"

#include <cstdlib>
#include <string>

namespace rpm::detail {

std::uint32_t Registry::headroom() const noexcept {
    const std::uint32_t reserved = reserved_.load(std::memory_order_relaxed);
    return reserved < budget_ ? budget_ - reserved : 0;
}

// A slot under the budget is taken before registering, so concurrent
// registrations together can never pass it.
bool Registry::reserve(std::uint32_t n) noexcept {
    std::uint32_t now = reserved_.load(std::memory_order_relaxed);
    do {
        if (n > budget_ || now > budget_ - n) return false;
    } while (!reserved_.compare_exchange_weak(now, now + n, std::memory_order_relaxed));
    return true;
}

void Registry::unreserve(std::uint32_t n) noexcept {
    reserved_.fetch_sub(n, std::memory_order_relaxed);
}

Result<void> Registry::register_one(std::span<std::byte> mem, bool owns, Made& made) {
    auto handle = registrar_.register_memory(mem);
    if (!handle) {
        failures_.fetch_add(1, std::memory_order_relaxed);
        if (owns) std::free(mem.data());
        return handle.error();
    }
    auto e = std::make_unique<MrEntry>(MrPoolState::make_buffer(nullptr));
    e->mem = mem;
    e->handle = *handle;
    e->owns_memory = owns;
    made.push_back(std::move(e));
    registered_.fetch_add(1, std::memory_order_relaxed);
    registrations_.fetch_add(1, std::memory_order_relaxed);
    return {};
}

std::uint32_t Registry::publish(Made& made, std::vector<MrEntry*>& out) {
    std::lock_guard guard(table_mu_);
    const auto first = static_cast<std::uint32_t>(table_.size());
    for (auto& e : made) {
        e->id = static_cast<std::uint32_t>(table_.size());
        e->buffer = MrPoolState::make_buffer(e.get());
        out.push_back(e.get());
        table_.push_back(std::move(e));
    }
    made.clear();
    return first;
}

void Registry::rollback(Made& made) noexcept {
    for (auto& e : made) deregister(e.get());
    made.clear();
}

Result<void> Registry::register_new(std::uint32_t n, bool background, bool partial,
                                    std::vector<MrEntry*>& out) {
    if (!reserve(n))
        return Error(errc::mr_budget_exhausted,
                     std::to_string(n) + " more registrations would pass the budget of " +
                         std::to_string(budget_) + " (" + std::to_string(registered()) + " registered)");
    Made made;
    made.reserve(n);
    Result<void> result;
    for (std::uint32_t i = 0; i < n && result; ++i) {
        void* mem = std::aligned_alloc(kPageSize, entry_size_);
        if (mem == nullptr) {
            failures_.fetch_add(1, std::memory_order_relaxed);
            result = Error(errc::io_error, "cannot allocate " + std::to_string(entry_size_) + " bytes");
        } else {
            result = register_one({static_cast<std::byte*>(mem), entry_size_}, true, made);
        }
    }
    unreserve(n - static_cast<std::uint32_t>(made.size()));
    if (!result && !partial) rollback(made);
    for (auto& e : made) e->background = background;
    publish(made, out);
    return result;
}

Result<std::uint32_t> Registry::register_external(std::span<std::byte> mem,
                                                  std::vector<MrEntry*>& out) {
    const auto n = static_cast<std::uint32_t>(mem.size() / entry_size_);
    if (!reserve(n))
        return Error(errc::mr_budget_exhausted,
                     "adding " + std::to_string(n) + " entries would pass the budget of " +
                         std::to_string(budget_) + " (" + std::to_string(registered()) + " registered)");
    Made made;
    made.reserve(n);
    for (std::uint32_t i = 0; i < n; ++i) {
        if (auto r = register_one(mem.subspan(i * entry_size_, entry_size_), false, made); !r) {
            unreserve(n - i);
            rollback(made);
            return r.error();
        }
    }
    return publish(made, out);
}

void Registry::deregister(MrEntry* e) noexcept {
    registrar_.deregister_memory(e->handle, e->mem);
    if (e->owns_memory) std::free(e->mem.data());
    e->mem = {};
    e->handle = nullptr;
    e->home.store(kDead, std::memory_order_relaxed);
    registered_.fetch_sub(1, std::memory_order_relaxed);
    reserved_.fetch_sub(1, std::memory_order_relaxed);
    deregistrations_.fetch_add(1, std::memory_order_relaxed);
}

void Registry::deregister_all() noexcept {
    std::lock_guard guard(table_mu_);
    for (auto& e : table_)
        if (e->home.load(std::memory_order_relaxed) != kDead) deregister(e.get());
}

MrEntry* Registry::find(std::uint32_t id) const noexcept {
    std::lock_guard guard(table_mu_);
    return id < table_.size() ? table_[id].get() : nullptr;
}

}  // namespace rpm::detail
