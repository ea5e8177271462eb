// The socket read buffer of a tcp:// connection, client or server session:
// an entry of a process-wide MrPool of pinned (mlock'ed) buffers, so the
// memory tcp:// keeps resident is accounted like RDMA registrations are;
// a plain heap buffer when the pool has none now (the pool counts those as
// none_now). The frame reader copies out of it as before.
#pragma once

#include <rpm/mr_pool.hpp>

#include <cstddef>
#include <memory>
#include <optional>
#include <span>

namespace rpm::tcp {

/// Bytes one read_some may deliver (the pool's entry size).
inline constexpr std::size_t kReadBufferSize = 64 * 1024;

/// The pool's options: 64 KiB entries, at most 4 MiB pinned (half of a
/// default RLIMIT_MEMLOCK, which RDMA registrations share), one entry in
/// each connection's L1.
MrPoolOptions read_pool_options();

/// The process-wide pool, made on first use; null when it cannot be made
/// (then every connection reads into a heap buffer).
MrPool* read_pool();

class ReadBuffer {
public:
    /// Takes an entry of read_pool(), or allocates kReadBufferSize bytes.
    ReadBuffer();
    ReadBuffer(const ReadBuffer&) = delete;
    ReadBuffer& operator=(const ReadBuffer&) = delete;
    /// Gives the entry back. The socket must not be reading into it any more
    /// (Asio's handler has run: the owner's lifetime guarantees it).
    ~ReadBuffer();

    [[nodiscard]] std::span<std::byte> bytes() const noexcept { return {data_, kReadBufferSize}; }
    [[nodiscard]] bool pooled() const noexcept { return entry_ != nullptr; }

private:
    std::optional<MrPoolUser> user_;
    MrBuffer* entry_ = nullptr;
    std::unique_ptr<std::byte[]> heap_;
    std::byte* data_ = nullptr;
};

} // namespace rpm::tcp
