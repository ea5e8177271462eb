// Registered memory of a connection: message slots for control frames and
// the bounce buffer every RDMA write and read goes through.
//
// The bounce buffer is one registration per connection (1 MiB): user spans
// are copied in (write) or out (read) rather than registered per call.
// Registered-buffer pools that avoid the copy are a later issue.
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
inline constexpr int kMessageUsage = RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV;

/// Page-aligned memory registered with one peer.
class RegisteredBuffer {
public:
    /// ERRORS: errc::rdma_unavailable when rpma_mr_reg fails (detail: what).
    static Result<RegisteredBuffer> create(const Api& api, rpma_peer* peer, std::size_t size, int usage,
                                           std::string_view what);
    [[nodiscard]] std::byte* data() const noexcept { return mem_.get(); }
    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    [[nodiscard]] rpma_mr_local* mr() const noexcept { return mr_.get(); }

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

/// A ring allocator over the bounce buffer. Reservations are released in
/// the order they were made (operations retire in posting order), so a
/// head and a tail suffice.
class BounceRing {
public:
    struct Reservation {
        std::size_t offset = 0;  ///< into the buffer
        std::uint64_t end = 0;   ///< release(end) frees it and everything before
    };
    explicit BounceRing(std::size_t capacity) noexcept : cap_(capacity) {}
    /// 0 < n <= capacity. nullopt while not enough is free.
    std::optional<Reservation> reserve(std::size_t n) noexcept;
    void release(std::uint64_t end) noexcept;
    [[nodiscard]] std::size_t in_use() const noexcept { return static_cast<std::size_t>(head_ - tail_); }
    [[nodiscard]] std::size_t capacity() const noexcept { return cap_; }

private:
    std::size_t cap_;
    std::uint64_t head_ = 0;
    std::uint64_t tail_ = 0;
};

} // namespace rpm::rdma
