// ClientConn's life: connect (the connection's set-up is ClientLink's,
// client_link.hpp; the handshake's, Handshake's), the I/O thread's start,
// close and tear-down.
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
    : api_(api), opts_(std::move(opts)), lim_(limits), link_(api, limits), drive_(opts_.completion),
      ops_(limits.sq_depth, limits.send_slots) {
    lim_.chunk = std::max<std::size_t>(1, lim_.chunk);
}

ClientConn::~ClientConn() {
    finish();
    release_buffers();
}

void ClientConn::release_buffers() noexcept {
    // The queue pair goes first (ClientLink::release_connection).
    link_.release_connection();
    // An entry a direct operation still held (the connection was never failed).
    direct_.release(ops_);
    ops_.release_buffers();
    link_.release_messages();
}

Result<void> ClientConn::connect(const std::string& host, std::uint16_t port) {
    link_.name(host, port);
    if (!io_.wake.ok() || !drive_.wake.ok()) return Error(errc::io_error, link_.where() + ": eventfd failed");
    auto opened = link_.open(host, port, opts_, lim_);
    ops_.use_bounce(link_.bounce_user());
    if (!opened) return opened;
    start_thread();
    return handshake_.await(opts_.timeout, link_.where());
}

void ClientConn::start_thread() {
    std::lock_guard lock(mu_);
    handshake_.expect_hello();
    // The thread owns a reference: a Transport destroyed from one of its
    // own callbacks detaches it, and it finishes on its own.
    io_.thread = std::thread([self = shared_from_this()] { self->run(); });
}

void ClientConn::close() noexcept {
    {
        std::lock_guard lock(mu_);
        if (closing_) return;
        closing_ = true;
        fail_locked(errc::io_error, "the connection was closed");
        // Under the lock: nothing is being posted while the QP goes to error.
        link_.disconnect();
    }
    // The I/O thread stays until finish(): callbacks of operations posted
    // after close() still run on it, exactly once, with the error.
    notify_all();
    // As tcp://'s close(): when this returns, every operation posted before
    // it has had its callback. A caller lets go of what the callbacks touch
    // right after closing (the Replicator, its members' state: a flush that
    // a majority commit left outstanding called back into a destroyed
    // member, rpm-bench --replication in the lab). drive_.mu waits for a
    // delivery round in progress, on the I/O thread or a synchronous
    // caller's; what is left, this thread hands out. Not where this thread
    // holds drive_.mu already (a callback's close(), on the I/O thread, in a
    // synchronous call or under a polling hold): those callbacks run on it
    // as soon as the one calling this returns.
    if (!can_drive()) return;
    const InlineLock drive(drive_.mu);
    deliver();
}

void ClientConn::finish() noexcept {
    io_.stop = true;
    notify_all();
    if (!io_.thread.joinable()) return;
    if (std::this_thread::get_id() == io_.thread.get_id())
        io_.thread.detach();
    else
        io_.thread.join();
}

} // namespace rpm::rdma
