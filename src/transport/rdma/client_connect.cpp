// ClientConn set-up: device, registrations, connection, handshake; and
// tear-down. The client's steps (the verbs layer keeps librpma's order):
// utils_get_ibv_context -> peer_new -> mr_reg (both done
// once per device, by DevicePools; connections take pool entries) ->
// conn_req_new -> conn_req_recv (receives posted before the
// server can send its Hello) -> conn_req_connect -> kConnEstablished.
#include "transport/rdma/client.hpp"

#include <algorithm>

namespace rpm::client {

Result<std::unique_ptr<Transport>> connect_rdma(const std::string& host, std::uint16_t port,
                                                const ClientOptions& opts) {
    return rdma::connect_rdma_with(rdma::real_api(), host, port, opts);
}

} // namespace rpm::client

namespace rpm::rdma {

Result<std::unique_ptr<client::Transport>> connect_rdma_with(const Api& api, const std::string& host,
                                                             std::uint16_t port, const ClientOptions& opts,
                                                             const ClientLimits& limits) {
    auto conn = std::make_shared<ClientConn>(api, opts, limits);
    if (auto r = conn->connect(host, port); !r) {
        conn->close();
        conn->finish();
        return r.error();
    }
    return std::unique_ptr<client::Transport>(std::make_unique<RdmaClient>(std::move(conn)));
}

RdmaClient::~RdmaClient() {
    c_->close();
    c_->finish();
}

ClientConn::ClientConn(const Api& api, ClientOptions opts, ClientLimits limits)
    : api_(api), opts_(std::move(opts)), lim_(limits),
      layout_(limits.recv_slots, limits.send_slots, limits.slot_size), cfg_(api), req_(api), conn_(api),
      drive_waiter_(opts_.completion),
      ops_(limits.sq_depth, limits.send_slots) {
    lim_.chunk = std::max<std::size_t>(1, lim_.chunk);
}

ClientConn::~ClientConn() {
    finish();
    release_buffers();
}

void ClientConn::release_buffers() noexcept {
    // The queue pair goes first: once it is destroyed no work request can
    // reach a bounce entry or a receive slot, and they may serve another
    // connection of the device.
    req_.reset();
    conn_.reset();
    // An entry a direct operation still held (the connection was never failed).
    if (direct_.hold.entry || direct_.hold.slot) ops_.end_direct(direct_.hold, true);
    ops_.release_buffers();
    if (msgs_) msgs_->release();
}

Result<void> ClientConn::connect(const std::string& host, std::uint16_t port) {
    where_ = "rdma://" + host + ":" + std::to_string(port);
    if (!wake_.ok() || !drive_wake_.ok()) return Error(errc::io_error, where_ + ": eventfd failed");
    if (auto r = open_device(where_, host); !r) return r;
    if (auto r = make_buffers(); !r) return r;
    if (auto r = make_request(where_, host, port); !r) return r;
    if (auto r = establish(where_); !r) return r;
    start_thread();
    return await_handshake(where_);
}

Result<void> ClientConn::open_device(const std::string& where, const std::string& host) {
    ibv_context* ctx = nullptr;
    // The local RNIC that routes to the server's address.
    if (int ret = api_.utils_get_ibv_context(host.c_str(), kContextRemote, &ctx); ret != 0 || !ctx)
        return Error(errc::rdma_unavailable,
                     where + ": no RDMA device can reach " + host + " (utils_get_ibv_context: " +
                         (ret != 0 ? error_name(ret) : std::string("no device")) +
                         "); rdma:// needs an RNIC or Soft-RoCE (rdma link add rxe0 type rxe netdev IFACE) "
                         "with an address on the server's network; use tcp:// otherwise");
    MrPoolOptions bounce = lim_.bounce_pool;
    bounce.buffer_size = lim_.chunk;
    MrPoolOptions messages = lim_.message_pool;
    messages.buffer_size = layout_.total_bytes();
    auto pools = DevicePools::acquire(api_, ctx, bounce, messages, where);
    if (!pools) return pools.error();
    device_ = std::move(*pools);
    return {};
}

Result<void> ClientConn::make_buffers() {
    auto user = device_->bounce().create_user();
    if (!user) return Error(user.error().code(), where_ + ": bounce pool: " + user.error().detail());
    bounce_user_.emplace(std::move(*user));
    ops_.use_bounce(&*bounce_user_);
    // The device's pool may predate this connection's limits: a chunk is
    // never larger than an entry.
    lim_.chunk = std::min(lim_.chunk, device_->bounce().options().buffer_size);
    auto msgs = MessageBuffer::take(&device_->messages(), api_, device_->peer(), layout_.total_bytes(), where_);
    if (!msgs) return msgs.error();
    msgs_.emplace(std::move(*msgs));
    return {};
}

Result<void> ClientConn::make_request(const std::string& where, const std::string& host, std::uint16_t port) {
    if (int ret = api_.conn_cfg_new(cfg_.out()); ret != 0)
        return call_failure(errc::rdma_unavailable, where, "conn_cfg_new", ret);
    // One CQ for everything: the send queue's completions plus every posted receive.
    int ret = api_.conn_cfg_set_sq_size(cfg_.get(), lim_.sq_depth);
    if (ret == 0) ret = api_.conn_cfg_set_rq_size(cfg_.get(), lim_.recv_slots);
    if (ret == 0) ret = api_.conn_cfg_set_cq_size(cfg_.get(), lim_.sq_depth + lim_.recv_slots);
    if (ret == 0) ret = api_.conn_cfg_set_timeout(cfg_.get(), to_ms(opts_.timeout));
    if (ret != 0) return call_failure(errc::invalid_argument, where, "conn_cfg_set_*", ret);
    const std::string service = std::to_string(port);
    if (ret = api_.conn_req_new(device_->peer(), host.c_str(), service.c_str(), cfg_.get(), req_.out()); ret != 0)
        return call_failure(errc::io_error, where + " (cannot resolve a route)", "conn_req_new", ret);
    for (std::uint32_t i = 0; i < layout_.recv_slots(); ++i) {
        const auto* ctx = reinterpret_cast<const void*>(kRecvTag | i);
        ret = api_.conn_req_recv(req_.get(), msgs_->mr(), layout_.recv_offset(i), layout_.slot_size(), ctx);
        if (ret != 0) return call_failure(errc::io_error, where, "conn_req_recv", ret);
    }
    return {};
}

Result<void> ClientConn::establish(const std::string& where) {
    // conn_req_connect consumes the request whatever it returns.
    if (int ret = api_.conn_req_connect(req_.consume(), nullptr, conn_.out()); ret != 0)
        return call_failure(errc::io_error, where + ": cannot connect", "conn_req_connect", ret);
    if (int ret = api_.conn_get_event_fd(conn_.get(), &event_fd_); ret != 0)
        return call_failure(errc::io_error, where, "conn_get_event_fd", ret);
    auto ev = wait_event(api_, conn_.get(), event_fd_, opts_.timeout);
    if (!ev) return Error(errc::io_error, where + ": connecting: " + ev.error().detail());
    if (*ev != kConnEstablished)
        return Error(errc::io_error, where + ": connection " + event_name(*ev) +
                                         " (is an rpm server listening on that address?)");
    if (int ret = api_.conn_atomic_write_kind(conn_.get(), &atomic_kind_); ret != 0)
        return call_failure(errc::io_error, where, "conn_atomic_write_kind", ret);
    if (int ret = api_.conn_native_flush(conn_.get(), &native_flush_); ret != 0)
        return call_failure(errc::io_error, where, "conn_native_flush", ret);
    if (int ret = api_.conn_get_cq(conn_.get(), &cq_); ret != 0)
        return call_failure(errc::io_error, where, "conn_get_cq", ret);
    if (int ret = api_.cq_get_fd(cq_, &cq_fd_); ret != 0)
        return call_failure(errc::io_error, where, "cq_get_fd", ret);
    return set_nonblocking(cq_fd_);
}

void ClientConn::start_thread() {
    std::lock_guard lock(mu_);
    stage_ = Stage::awaiting_hello;
    // The thread owns a reference: a Transport destroyed from one of its
    // own callbacks detaches it, and it finishes on its own.
    thread_ = std::thread([self = shared_from_this()] { self->run(); });
}

Result<void> ClientConn::await_handshake(const std::string& where) {
    auto f = ready_.get_future();
    if (f.wait_for(opts_.timeout) != std::future_status::ready)
        return Error(errc::io_error, where + ": no handshake from the server within " +
                                         std::to_string(opts_.timeout.count()) + " ms");
    return f.get();
}

void ClientConn::close() noexcept {
    {
        std::lock_guard lock(mu_);
        if (closing_) return;
        closing_ = true;
        fail_locked(errc::io_error, "the connection was closed");
        // Under the lock: nothing is being posted while the QP goes to error.
        conn_.disconnect();
    }
    // The I/O thread stays until finish(): callbacks of operations posted
    // after close() still run on it, exactly once, with the error.
    notify_all();
    // As tcp://'s close(): when this returns, every operation posted before
    // it has had its callback. A caller lets go of what the callbacks touch
    // right after closing (the Replicator, its members' state: a flush that
    // a majority commit left outstanding called back into a destroyed
    // member, rpm-bench --replication in the lab). drive_mu_ waits for a
    // delivery round in progress, on the I/O thread or a synchronous
    // caller's; what is left, this thread hands out. Not where this thread
    // holds drive_mu_ already (a callback's close(), on the I/O thread, in a
    // synchronous call or under a polling hold): those callbacks run on it
    // as soon as the one calling this returns.
    if (!can_drive()) return;
    const InlineLock drive(drive_mu_);
    deliver();
}

void ClientConn::finish() noexcept {
    stop_ = true;
    notify_all();
    if (!thread_.joinable()) return;
    if (std::this_thread::get_id() == thread_.get_id())
        thread_.detach();
    else
        thread_.join();
}

void ClientConn::await_closed() noexcept {
    // The order: disconnect, wait for kConnClosed, delete. The
    // wait is bounded: a dead peer must not hang close().
    if (!conn_ || closed_event_ || event_fd_ < 0) return;
    (void)wait_event(api_, conn_.get(), event_fd_, std::chrono::milliseconds(1000));
    closed_event_ = true;
}

} // namespace rpm::rdma
