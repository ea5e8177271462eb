// One connection's message slots (SlotLayout): an entry of a message pool,
// held for the connection's life, or a registration of its own when the
// pool has none to give.
//
// Safe to pool: the slots are registered for SEND | RECV only (no remote
// access), and an entry goes back only after the connection whose receives
// point into it is deleted (release() after conn_delete), so no work
// request can still reach it when the next connection takes it.
#pragma once

#include "transport/rdma/buffers.hpp"

#include <rpm/mr_pool.hpp>

#include <optional>
#include <string_view>
#include <utility>

namespace rpm::rdma {

class MessageBuffer {
public:
    /// An entry of `pool` (at least `size` bytes), from the pool's free
    /// entries or, when there are none now, by growing it (blocking: the
    /// connect and accept paths only); past the pool's budget, or when its
    /// entries are too small for `size`, a dedicated registration with `peer`.
    /// ERRORS: errc::rdma_unavailable when the dedicated registration fails.
    static Result<MessageBuffer> take(MrPool* pool, const Api& api, Peer* peer, std::size_t size,
                                      std::string_view what);

    MessageBuffer(MessageBuffer&& o) noexcept;
    MessageBuffer& operator=(MessageBuffer&&) noexcept = delete;
    ~MessageBuffer() { release(); }

    [[nodiscard]] std::byte* data() const noexcept;
    [[nodiscard]] LocalMr* mr() const noexcept;
    [[nodiscard]] bool pooled() const noexcept { return entry_ != nullptr; }
    /// Give the entry back to its pool (or deregister the dedicated buffer).
    /// Only once the connection using it is deleted.
    void release() noexcept;

private:
    MessageBuffer() = default;
    static MrBuffer* take_entry(MrPool& pool, MrPoolUser& user);

    std::optional<MrPoolUser> user_;
    MrBuffer* entry_ = nullptr;
    std::optional<RegisteredBuffer> own_;
};

} // namespace rpm::rdma
