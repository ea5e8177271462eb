// ManagerState: what a Manager and its Buffers share. Buffers hold it by
// shared_ptr, so a provider's BAR stays mapped while any buffer lives in it
// and is unmapped when the last of manager and buffers goes.
#pragma once

#include "p2p/mapping.hpp"
#include "p2p/suballocator.hpp"
#include "p2p/topology.hpp"

#include <rpm/p2p.hpp>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace rpm::p2p {

/// A buffer's memory and where to give it back.
struct Buffer::State {
    std::shared_ptr<detail::ManagerState> manager;
    std::byte* data = nullptr;
    std::size_t size = 0;
    Source source = Source::host;
    std::string provider;     ///< BDF; empty for host memory
    std::string slot;         ///< the provider slot's key (bar and p2pmem buffers)
    std::uint64_t offset = 0; ///< into the provider (bar: sub-allocator offset)
    std::string why;
    detail::Mapping own;      ///< p2pmem and host buffers: their own mapping
};

namespace detail {

/// One provider in use: its BAR mapping and sub-allocator (CMB/PMR), or
/// the count of p2pmem chunks taken from it.
struct Slot {
    Provider provider;
    std::unique_ptr<SubAllocator> alloc;  ///< BAR providers only
    Mapping bar;                          ///< mapped on first allocation
    std::size_t live = 0;
    std::uint64_t live_bytes = 0;
};

class ManagerState : public std::enable_shared_from_this<ManagerState> {
public:
    ManagerState(ManagerOptions opts, std::vector<Provider> providers, HostFacts facts,
                std::vector<std::string> skipped);

    [[nodiscard]] const ManagerOptions& options() const noexcept { return opts_; }
    [[nodiscard]] const std::vector<Provider>& providers() const noexcept { return providers_; }
    [[nodiscard]] const std::vector<std::string>& skipped() const noexcept { return skipped_; }
    [[nodiscard]] const HostFacts& facts() const noexcept { return facts_; }

    /// From choice.provider, else (when `fallback`) host memory saying why.
    Result<Buffer> allocate(const Choice& choice, std::size_t size, std::size_t align,
                            bool fallback);
    /// Buffer's destructor: back to the sub-allocator, out of the figures.
    void release(Buffer::State& s) noexcept;

    void account(Source source, std::uint64_t bytes) noexcept;
    [[nodiscard]] Accounting accounting() const;
    /// One entry per discovered provider, in providers() order (Manager::
    /// find relies on it), then providers only a hand-made Choice named.
    [[nodiscard]] std::vector<ProviderUsage> usage() const;

private:
    /// A buffer from the provider, or an error whose detail is the reason
    /// (errc::no_p2p_memory when it has no room).
    Result<Buffer> from_provider(const Provider& p, std::size_t size, std::size_t align);
    Result<Buffer> from_bar(Slot& slot, const std::string& key, std::size_t size,
                            std::size_t align);
    Result<Buffer> from_p2pmem(Slot& slot, const std::string& key, std::size_t size,
                               std::size_t align);
    Result<Buffer> from_host(std::size_t size, std::size_t align, std::string why);
    Slot& slot_for(const Provider& p, std::string& key);
    Buffer make(std::unique_ptr<Buffer::State> s);
    [[nodiscard]] ProviderUsage usage_of(const Slot& s) const;

    const ManagerOptions opts_;
    const std::vector<Provider> providers_;
    const HostFacts facts_;
    const std::vector<std::string> skipped_;

    mutable std::mutex mu_;  ///< slots_ and the counts below
    std::map<std::string, Slot> slots_;
    std::uint64_t allocations_ = 0;
    std::uint64_t fallbacks_ = 0;
    std::uint64_t bytes_allocated_ = 0;
    std::atomic<std::uint64_t> device_bytes_{0};
    std::atomic<std::uint64_t> host_staged_bytes_{0};
};

/// Why no buffer came from the choice's provider: "no provider suits
/// 0000:03:00.0: <explanation>".
std::string no_provider_reason(const Choice& choice);

} // namespace detail
} // namespace rpm::p2p
