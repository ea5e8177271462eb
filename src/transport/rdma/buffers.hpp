// Registered memory of a connection: the layout of its message slots for
// control frames, and a registration of its own for when the message pool
// (message_buffer.hpp) has nothing to give. Writes and reads go through
// entries of the device's bounce pool (device_pools.hpp): user spans are
// copied in (write) or out (read) rather than registered per call.
#pragma once

#include "transport/rdma/handles.hpp"

#include <rpm/result.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace rpm::rdma {

/// Usage of the message slots, on both sides.
inline constexpr int kMessageUsage = kUsageSend | kUsageRecv;
/// Usage of the client's bounce entries: sources of writes, targets of reads.
inline constexpr int kBounceUsage = kUsageWriteSrc | kUsageReadDst;

/// Page-aligned memory registered with one peer.
class RegisteredBuffer {
public:
    /// ERRORS: errc::rdma_unavailable when mr_reg fails (detail: what).
    static Result<RegisteredBuffer> create(const Api& api, Peer* peer, std::size_t size, int usage,
                                           std::string_view what);
    [[nodiscard]] std::byte* data() const noexcept { return mem_.get(); }
    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    [[nodiscard]] LocalMr* mr() const noexcept { return mr_.get(); }

private:
    struct Free {
        void operator()(std::byte* p) const noexcept { std::free(p); }
    };
    RegisteredBuffer(std::unique_ptr<std::byte, Free> mem, std::size_t size, MrHandle mr) noexcept
        : mem_(std::move(mem)), size_(size), mr_(std::move(mr)) {}
    // Declared before mr_: the registration goes first, then the memory.
    std::unique_ptr<std::byte, Free> mem_;
    std::size_t size_ = 0;
    MrHandle mr_;
};

/// Message slots in one registered buffer: receive slots first, then send
/// slots. A slot holds exactly one frame.
class SlotLayout {
public:
    SlotLayout(std::uint32_t recv_slots, std::uint32_t send_slots, std::size_t slot_size) noexcept
        : recv_(recv_slots), send_(send_slots), size_(slot_size) {}
    [[nodiscard]] std::size_t total_bytes() const noexcept { return (recv_ + send_) * size_; }
    [[nodiscard]] std::size_t recv_offset(std::uint32_t i) const noexcept { return i * size_; }
    [[nodiscard]] std::size_t send_offset(std::uint32_t i) const noexcept { return (recv_ + i) * size_; }
    [[nodiscard]] std::uint32_t recv_slots() const noexcept { return recv_; }
    [[nodiscard]] std::uint32_t send_slots() const noexcept { return send_; }
    [[nodiscard]] std::size_t slot_size() const noexcept { return size_; }

private:
    std::uint32_t recv_;
    std::uint32_t send_;
    std::size_t size_;
};

/// Free send slots.
class SlotPool {
public:
    explicit SlotPool(std::uint32_t n);
    std::optional<std::uint32_t> acquire() noexcept;
    void release(std::uint32_t slot);
    [[nodiscard]] std::size_t free_count() const noexcept { return free_.size(); }

private:
    std::vector<std::uint32_t> free_;
};

} // namespace rpm::rdma
