// Bytes waiting to be sent on a tcp:// connection, in order: frames we
// built (headers, small bodies, answers) in one reused arena, and callers'
// data (a write's payload) sent from where it lies, between them. Whatever
// is queued leaves in one gathered write (sendmsg), so frames posted
// together, or the answers to one read batch, share a segment; in steady
// state nothing is allocated.
#pragma once

#include <sys/uio.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace rpm::tcp {

class OutQueue {
public:
    /// The arena: encoders append to it. Call commit() after appending.
    std::vector<std::byte>& arena() noexcept { return arena_; }
    /// Queue the arena bytes appended since the last commit().
    void commit();
    /// Queue `data` by reference: it must stay valid until sent (or the
    /// queue is cleared).
    void borrow(std::span<const std::byte> data);

    [[nodiscard]] bool empty() const noexcept { return head_ == pieces_.size(); }
    /// Bytes queued and not yet sent.
    [[nodiscard]] std::size_t bytes() const noexcept { return bytes_; }

    /// The next buffers to send (at most 64), valid until the next call on
    /// this queue.
    std::span<const iovec> iovecs();
    /// `n` bytes of iovecs() were sent.
    void consume(std::size_t n);
    void clear() noexcept;

private:
    struct Piece {
        const std::byte* ptr = nullptr;  ///< borrowed data; nullptr = arena bytes at `offset`
        std::size_t offset = 0;
        std::size_t length = 0;
    };
    void reset_if_drained() noexcept;

    std::vector<std::byte> arena_;
    std::size_t committed_ = 0;  ///< arena bytes already queued
    std::vector<Piece> pieces_;
    std::size_t head_ = 0;       ///< first piece not fully sent
    std::size_t bytes_ = 0;
    std::array<iovec, 64> iov_{};
};

} // namespace rpm::tcp
