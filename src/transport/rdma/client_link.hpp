// A client connection's set-up and what it sets up: the device's pools and
// this connection's bounce-pool user and message buffer, the connection
// request with its receives posted, the established connection, its
// completion queue and the descriptors the I/O thread and a driving caller
// poll. The client's steps (the verbs layer keeps librpma's order):
// utils_get_ibv_context -> peer_new -> mr_reg (both done once per device,
// by DevicePools; connections take pool entries) -> conn_req_new ->
// conn_req_recv (receives posted before the server can send its Hello) ->
// conn_req_connect -> kConnEstablished.
//
// Set once by open(), before the I/O thread starts, and read-only after:
// no lock. The connection is disconnected under the ClientConn's mu_.
#pragma once

#include "transport/rdma/api.hpp"
#include "transport/rdma/buffers.hpp"
#include "transport/rdma/device_pools.hpp"
#include "transport/rdma/handles.hpp"
#include "transport/rdma/limits.hpp"
#include "transport/rdma/message_buffer.hpp"

#include <rpm/client.hpp>
#include <rpm/mr_pool.hpp>
#include <rpm/result.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace rpm::rdma {

/// The sizes of one client connection (tests make them small).
struct ClientLimits {
    std::uint32_t sq_depth = kSqDepth;
    std::uint32_t recv_slots = kRecvSlots;
    std::uint32_t send_slots = kSendSlots;
    std::size_t slot_size = kSlotSize;
    /// Work-request size of writes and reads; at most the bounce entry size.
    std::size_t chunk = kMaxChunk;
    /// Reads, writes and one-slice persists on an idle connection go direct
    /// (client_direct.cpp). Off, everything goes through the op queue: for
    /// tests of the queue's own work requests, and to compare the two.
    bool direct = true;
    /// The device's pools, applied only by the connection that creates them
    /// (the first on its device in this process). buffer_size is derived:
    /// `chunk` for bounce entries, the slot layout for message buffers.
    MrPoolOptions bounce_pool = bounce_pool_defaults();
    MrPoolOptions message_pool = message_pool_defaults();
};

class ClientLink {
public:
    ClientLink(const Api& api, const ClientLimits& limits);
    ClientLink(const ClientLink&) = delete;
    ClientLink& operator=(const ClientLink&) = delete;

    /// The connection's name in every error ("rdma://host:port"), set first.
    void name(const std::string& host, std::uint16_t port);
    /// Device pools, buffers, connection request, connection: up to
    /// kConnEstablished. `lim.chunk` shrinks to the device's entry size.
    Result<void> open(const std::string& host, std::uint16_t port, const ClientOptions& opts, ClientLimits& lim);
    /// The order of a tear-down: disconnect, wait (bounded: a dead peer
    /// must not hang close()) for kConnClosed, delete.
    void await_closed() noexcept;
    /// The connection event kConnClosed (or its failure) was seen.
    void mark_closed() noexcept { closed_event_ = true; }
    /// The queue pair goes first: once it is destroyed no work request can
    /// reach a bounce entry or a receive slot, and they may serve another
    /// connection of the device. The message buffer goes back after it.
    void release_connection() noexcept;
    void release_messages() noexcept;

    [[nodiscard]] const std::string& where() const noexcept { return where_; }
    [[nodiscard]] const SlotLayout& layout() const noexcept { return layout_; }
    [[nodiscard]] Conn* conn() const noexcept { return conn_.get(); }
    [[nodiscard]] bool connected() const noexcept { return static_cast<bool>(conn_); }
    void disconnect() noexcept { conn_.disconnect(); }
    [[nodiscard]] Cq* cq() const noexcept { return cq_; }
    [[nodiscard]] int cq_fd() const noexcept { return cq_fd_; }
    [[nodiscard]] int event_fd() const noexcept { return event_fd_; }
    [[nodiscard]] MessageBuffer& msgs() noexcept { return *msgs_; }
    [[nodiscard]] const std::shared_ptr<DevicePools>& device() const noexcept { return device_; }
    [[nodiscard]] MrPoolUser* bounce_user() noexcept { return bounce_user_ ? &*bounce_user_ : nullptr; }
    [[nodiscard]] AtomicWriteKind atomic_kind() const noexcept { return atomic_kind_; }
    /// The connection can post flush_native.
    [[nodiscard]] bool native_flush() const noexcept { return native_flush_; }

private:
    Result<void> open_device(const std::string& host, ClientLimits& lim);
    Result<void> make_buffers(ClientLimits& lim);
    Result<void> make_request(const std::string& host, std::uint16_t port, const ClientOptions& opts,
                              const ClientLimits& lim);
    Result<void> establish(const ClientOptions& opts);

    const Api& api_;
    SlotLayout layout_;
    std::string where_;
    // The device's peer and pools, then what this connection holds of them;
    // the connection is deleted before any entry goes back.
    std::shared_ptr<DevicePools> device_;
    std::optional<MrPoolUser> bounce_user_;
    std::optional<MessageBuffer> msgs_;
    ConnCfgHandle cfg_;
    ConnReqHandle req_;
    ConnHandle conn_;
    Cq* cq_ = nullptr;
    int cq_fd_ = -1;
    int event_fd_ = -1;
    bool closed_event_ = false;
    AtomicWriteKind atomic_kind_ = AtomicWriteKind::fenced_write;
    bool native_flush_ = false;
};

} // namespace rpm::rdma
