// The pieces the server and the client share: names and the busy poll.
#include "floor.hpp"
#include "transport/rdma/loop.hpp"

namespace rpm::floor {

const char* name(Pattern p) noexcept {
    switch (p) {
    case Pattern::write: return "write";
    case Pattern::read: return "read";
    case Pattern::read_after_write: return "read_after_write";
    case Pattern::send_flush: return "send_flush";
    case Pattern::native_flush: return "native_flush";
    }
    return "?";
}

Result<Pattern> pattern_from(const std::string& s) {
    for (auto p : {Pattern::write, Pattern::read, Pattern::read_after_write, Pattern::send_flush,
                   Pattern::native_flush})
        if (s == name(p)) return p;
    return Error(errc::invalid_argument,
                 "unknown pattern '" + s + "' (write, read, read_after_write, send_flush or native_flush)");
}

Result<void> open_peer(const rdma::Api& api, const std::string& addr, rdma::ContextType type, rdma::Peer** peer) {
    ibv_context* ctx = nullptr;
    if (int ret = api.utils_get_ibv_context(addr.c_str(), type, &ctx); ret != 0 || ctx == nullptr)
        return Error(errc::rdma_unavailable, (type == rdma::kContextLocal ? "no RDMA device has the address "
                                                                          : "no RDMA device reaches ") + addr);
    if (int ret = api.peer_new(ctx, peer); ret != 0) return rdma::call_failure(errc::io_error, "device", "peer_new", ret);
    return {};
}

Result<void> make_conn_cfg(const rdma::Api& api, rdma::ConnCfg** cfg) {
    int ret = api.conn_cfg_new(cfg);
    if (ret == 0) ret = api.conn_cfg_set_sq_size(*cfg, kSq);
    if (ret == 0) ret = api.conn_cfg_set_rq_size(*cfg, kRecvs);
    if (ret == 0) ret = api.conn_cfg_set_cq_size(*cfg, kSq + kRecvs);
    if (ret != 0) return rdma::call_failure(errc::io_error, "connection configuration", "conn_cfg_*", ret);
    return {};
}

Result<void> await_established(const rdma::Api& api, rdma::Conn* conn) {
    int ev_fd = -1;
    if (int ret = api.conn_get_event_fd(conn, &ev_fd); ret != 0)
        return rdma::call_failure(errc::io_error, "connecting", "conn_get_event_fd", ret);
    auto ev = rdma::wait_event(api, conn, ev_fd, std::chrono::seconds(10));
    if (!ev) return ev.error();
    if (*ev != rdma::kConnEstablished) return Error(errc::io_error, std::string("connection ") + rdma::event_name(*ev));
    return {};
}

Result<int> poll_once(const rdma::Api& api, rdma::Cq* cq, ibv_wc* wc, int n) {
    int got = 0;
    const int ret = api.cq_get_wc(cq, n, wc, &got);
    if (ret == rdma::kErrNoCompletion) return 0;
    if (ret != 0) return rdma::call_failure(errc::io_error, "polling the completion queue", "cq_get_wc", ret);
    for (int i = 0; i < got; ++i)
        if (wc[i].status != IBV_WC_SUCCESS)
            return Error(errc::io_error, std::string("a work completion failed: ") + ibv_wc_status_str(wc[i].status) +
                                             " (opcode " + std::to_string(wc[i].opcode) + ")");
    return got;
}

Result<int> poll_some(const rdma::Api& api, rdma::Cq* cq, ibv_wc* wc, int n,
                      std::chrono::steady_clock::time_point deadline) {
    // The clock is read only every 4096 empty polls: in the lab VM every
    // read of it is a system call (the emulated HPET), and the floor must
    // not pay for reads that are not the operation's.
    for (unsigned spins = 0;; ++spins) {
        auto got = poll_once(api, cq, wc, n);
        if (!got || *got > 0) return got;
        if ((spins & 4095) == 4095 && std::chrono::steady_clock::now() > deadline)
            return Error(errc::io_error, "no completion before the time limit");
    }
}

} // namespace rpm::floor
