#include "transport/rdma/buffers.hpp"

#include <algorithm>
#include <cstring>

namespace rpm::rdma {
namespace {

constexpr std::size_t kPage = 4096;

std::size_t round_up(std::size_t n, std::size_t to) noexcept { return (n + to - 1) / to * to; }

} // namespace

Result<RegisteredBuffer> RegisteredBuffer::create(const Api& api, Peer* peer, std::size_t size, int usage,
                                                  std::string_view what) {
    const std::size_t bytes = round_up(std::max<std::size_t>(size, 1), kPage);
    std::unique_ptr<std::byte, Free> mem(static_cast<std::byte*>(std::aligned_alloc(kPage, bytes)));
    if (!mem) return Error(errc::rdma_unavailable, std::string(what) + ": out of memory");
    std::memset(mem.get(), 0, bytes);
    MrHandle mr(api);
    if (int ret = api.mr_reg(peer, mem.get(), bytes, usage, mr.out()); ret != 0)
        return call_failure(errc::rdma_unavailable, what, "mr_reg", ret);
    return RegisteredBuffer(std::move(mem), bytes, std::move(mr));
}

SlotPool::SlotPool(std::uint32_t n) {
    // Handed out lowest first: easier to read in traces and tests.
    for (std::uint32_t i = n; i > 0; --i) free_.push_back(i - 1);
}

std::optional<std::uint32_t> SlotPool::acquire() noexcept {
    if (free_.empty()) return std::nullopt;
    const auto s = free_.back();
    free_.pop_back();
    return s;
}

void SlotPool::release(std::uint32_t slot) { free_.push_back(slot); }

} // namespace rpm::rdma
