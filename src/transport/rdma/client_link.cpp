#include "transport/rdma/client_link.hpp"
#include "transport/rdma/loop.hpp"
#include "transport/rdma/wr_tags.hpp"

#include <algorithm>

namespace rpm::rdma {

ClientLink::ClientLink(const Api& api, const ClientLimits& limits)
    : api_(api), layout_(limits.recv_slots, limits.send_slots, limits.slot_size), cfg_(api), req_(api), conn_(api) {}

void ClientLink::name(const std::string& host, std::uint16_t port) {
    where_ = "rdma://" + host + ":" + std::to_string(port);
}

Result<void> ClientLink::open(const std::string& host, std::uint16_t port, const ClientOptions& opts,
                              ClientLimits& lim) {
    if (auto r = open_device(host, lim); !r) return r;
    if (auto r = make_buffers(lim); !r) return r;
    if (auto r = make_request(host, port, opts, lim); !r) return r;
    return establish(opts);
}

Result<void> ClientLink::open_device(const std::string& host, ClientLimits& lim) {
    ibv_context* ctx = nullptr;
    // The local RNIC that routes to the server's address.
    if (int ret = api_.utils_get_ibv_context(host.c_str(), kContextRemote, &ctx); ret != 0 || !ctx)
        return Error(errc::rdma_unavailable,
                     where_ + ": no RDMA device can reach " + host + " (utils_get_ibv_context: " +
                         (ret != 0 ? error_name(ret) : std::string("no device")) +
                         "); rdma:// needs an RNIC or Soft-RoCE (rdma link add rxe0 type rxe netdev IFACE) "
                         "with an address on the server's network; use tcp:// otherwise");
    MrPoolOptions bounce = lim.bounce_pool;
    bounce.buffer_size = lim.chunk;
    MrPoolOptions messages = lim.message_pool;
    messages.buffer_size = layout_.total_bytes();
    auto pools = DevicePools::acquire(api_, ctx, bounce, messages, where_);
    if (!pools) return pools.error();
    device_ = std::move(*pools);
    return {};
}

Result<void> ClientLink::make_buffers(ClientLimits& lim) {
    auto user = device_->bounce().create_user();
    if (!user) return Error(user.error().code(), where_ + ": bounce pool: " + user.error().detail());
    bounce_user_.emplace(std::move(*user));
    // The device's pool may predate this connection's limits: a chunk is
    // never larger than an entry.
    lim.chunk = std::min(lim.chunk, device_->bounce().options().buffer_size);
    auto msgs = MessageBuffer::take(&device_->messages(), api_, device_->peer(), layout_.total_bytes(), where_);
    if (!msgs) return msgs.error();
    msgs_.emplace(std::move(*msgs));
    return {};
}

Result<void> ClientLink::make_request(const std::string& host, std::uint16_t port, const ClientOptions& opts,
                                      const ClientLimits& lim) {
    if (int ret = api_.conn_cfg_new(cfg_.out()); ret != 0)
        return call_failure(errc::rdma_unavailable, where_, "conn_cfg_new", ret);
    // One CQ for everything: the send queue's completions plus every posted receive.
    int ret = api_.conn_cfg_set_sq_size(cfg_.get(), lim.sq_depth);
    if (ret == 0) ret = api_.conn_cfg_set_rq_size(cfg_.get(), lim.recv_slots);
    if (ret == 0) ret = api_.conn_cfg_set_cq_size(cfg_.get(), lim.sq_depth + lim.recv_slots);
    if (ret == 0) ret = api_.conn_cfg_set_timeout(cfg_.get(), to_ms(opts.timeout));
    if (ret != 0) return call_failure(errc::invalid_argument, where_, "conn_cfg_set_*", ret);
    const std::string service = std::to_string(port);
    if (ret = api_.conn_req_new(device_->peer(), host.c_str(), service.c_str(), cfg_.get(), req_.out()); ret != 0)
        return call_failure(errc::io_error, where_ + " (cannot resolve a route)", "conn_req_new", ret);
    for (std::uint32_t i = 0; i < layout_.recv_slots(); ++i) {
        ret = api_.conn_req_recv(req_.get(), msgs_->mr(), layout_.recv_offset(i), layout_.slot_size(),
                                 wr_tag(kRecvTag | i));
        if (ret != 0) return call_failure(errc::io_error, where_, "conn_req_recv", ret);
    }
    return {};
}

Result<void> ClientLink::establish(const ClientOptions& opts) {
    // conn_req_connect consumes the request whatever it returns.
    if (int ret = api_.conn_req_connect(req_.consume(), nullptr, conn_.out()); ret != 0)
        return call_failure(errc::io_error, where_ + ": cannot connect", "conn_req_connect", ret);
    if (int ret = api_.conn_get_event_fd(conn_.get(), &event_fd_); ret != 0)
        return call_failure(errc::io_error, where_, "conn_get_event_fd", ret);
    auto ev = wait_event(api_, conn_.get(), event_fd_, opts.timeout);
    if (!ev) return Error(errc::io_error, where_ + ": connecting: " + ev.error().detail());
    if (*ev != kConnEstablished)
        return Error(errc::io_error, where_ + ": connection " + event_name(*ev) +
                                         " (is an rpm server listening on that address?)");
    if (int ret = api_.conn_atomic_write_kind(conn_.get(), &atomic_kind_); ret != 0)
        return call_failure(errc::io_error, where_, "conn_atomic_write_kind", ret);
    if (int ret = api_.conn_native_flush(conn_.get(), &native_flush_); ret != 0)
        return call_failure(errc::io_error, where_, "conn_native_flush", ret);
    if (int ret = api_.conn_get_cq(conn_.get(), &cq_); ret != 0)
        return call_failure(errc::io_error, where_, "conn_get_cq", ret);
    if (int ret = api_.cq_get_fd(cq_, &cq_fd_); ret != 0)
        return call_failure(errc::io_error, where_, "cq_get_fd", ret);
    return set_nonblocking(cq_fd_);
}

void ClientLink::await_closed() noexcept {
    if (!conn_ || closed_event_ || event_fd_ < 0) return;
    (void)wait_event(api_, conn_.get(), event_fd_, std::chrono::milliseconds(1000));
    closed_event_ = true;
}

void ClientLink::release_connection() noexcept {
    req_.reset();
    conn_.reset();
}

void ClientLink::release_messages() noexcept {
    if (msgs_) msgs_->release();
}

} // namespace rpm::rdma
