// The real ServedRegion: CPU stores into the mapping, and the persist steps of
// docs/flush-methods.md by the one executor (src/pmem/persist_step.hpp).
#include "server/served_region.hpp"

#include "pmem/persist_step.hpp"
#include "server/peer_memory.hpp"

#include <atomic>
#include <cstring>

namespace rpm::server {

void load_words(std::span<std::byte> out, const std::byte* src) noexcept {
    PeerMemoryAccess shared;
    std::size_t i = 0;
    const std::size_t n = out.size();
    const auto byte_at = [&](std::size_t k) {
        auto* p = reinterpret_cast<unsigned char*>(const_cast<std::byte*>(src + k));
        out[k] = static_cast<std::byte>(__atomic_load_n(p, __ATOMIC_RELAXED));
    };
    // Up to the first 8-byte boundary of the source, a byte at a time.
    for (; i < n && reinterpret_cast<std::uintptr_t>(src + i) % 8 != 0; ++i) byte_at(i);
    for (; i + 8 <= n; i += 8) {
        auto* w = reinterpret_cast<std::uint64_t*>(const_cast<std::byte*>(src + i));
        const std::uint64_t v = __atomic_load_n(w, __ATOMIC_RELAXED);
        std::memcpy(out.data() + i, &v, 8);  // the destination need not be aligned
    }
    for (; i < n; ++i) byte_at(i);
}

void PmemServedRegion::store(std::uint64_t offset, std::span<const std::byte> data) noexcept {
    PeerMemoryAccess shared;
    std::memcpy(region_.bytes().data() + offset, data.data(), data.size());
}

void PmemServedRegion::load(std::uint64_t offset, std::span<std::byte> out) const noexcept {
    load_words(out, region_.bytes().data() + offset);
}

void PmemServedRegion::store8(std::uint64_t offset, std::uint64_t value) noexcept {
    // One aligned 8-byte store is single-copy atomic on x86-64: a crash
    // leaves either the old or the new commit record, never a mix.
    auto* word = reinterpret_cast<std::uint64_t*>(region_.bytes().data() + offset);
    PeerMemoryAccess shared;
    std::atomic_ref<std::uint64_t>(*word).store(value, std::memory_order_release);
}

Result<void> PmemServedRegion::persist(flush::ServerPersist step, std::span<const Range> ranges) noexcept {
    return pmem::detail::run_persist_step(region_, step, ranges);
}

} // namespace rpm::server
