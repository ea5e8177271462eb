// The verbs layer's objects behind the opaque handles of api.hpp, and the
// helpers its files share. Each handle type is a cast of one of these
// (handle<T>/obj()), so that the unit tests' fake may define the opaque
// types itself without two definitions meeting in one program.
#pragma once

#include "transport/rdma/api.hpp"
#include "transport/rdma/verbs/verbs.hpp"

#include <cstdint>
#include <netdb.h>
#include <string>
#include <vector>

namespace rpm::rdma::verbs {

struct PeerObj {
    const Verbs* v = nullptr;
    ibv_context* ctx = nullptr;
    ibv_pd* pd = nullptr;
    bool atomic_write = false;  ///< the device reports IB_UVERBS_DEVICE_ATOMIC_WRITE
    /// The device reports IB_UVERBS_DEVICE_FLUSH_PERSISTENT and this build's
    /// rdma-core can post a FLUSH (Verbs::post_chain_ex).
    bool native_flush = false;
};

struct PeerCfgObj {
    bool direct = false;
};

struct LocalMrObj {
    const Verbs* v = nullptr;
    ibv_mr* mr = nullptr;
    int usage = 0;
    /// The flush usages (kUsageFlushPersistent) whose native FLUSH the
    /// registration's access admits (IBV_ACCESS_FLUSH_PERSISTENT): 0 where
    /// the device or build has none, or the device refused the access.
    int native_flush = 0;
};

struct RemoteMrObj {
    std::uint64_t addr = 0;
    std::uint64_t size = 0;
    std::uint32_t rkey = 0;
    int usage = 0;
};

struct ConnCfgObj {
    std::uint32_t sq = 10;
    std::uint32_t rq = 10;
    std::uint32_t cq = 10;
    int timeout_ms = 1000;
};

struct CqObj {
    const Verbs* v = nullptr;
    ibv_comp_channel* ch = nullptr;
    ibv_cq* cq = nullptr;
};

/// A work request queued under kDeferDoorbell; linked when the doorbell rings.
using Pending = WorkRequest;

/// A connection from its request on: the request owns it until connect.
struct ConnObj {
    const Verbs* v = nullptr;
    PeerObj* peer = nullptr;
    rdma_cm_id* id = nullptr;
    rdma_event_channel* ch = nullptr;  ///< the connection's own, from connect on
    CqObj cq;
    bool qp = false;                   ///< id->qp was created (destroy_qp owed)
    std::uint32_t max_inline = 0;      ///< granted by the device for this queue pair
    bool native_atomic = false;        ///< the QP was created with IBV_QP_EX_WITH_ATOMIC_WRITE
    bool native_flush = false;         ///< the QP was created with IBV_QP_EX_WITH_FLUSH
    bool pending_flush = false;        ///< a FLUSH is in `pending`: the chain goes by post_chain_ex
    bool flush_admitted = false;       ///< the QP's access flags were given FLUSH once established
    bool direct_write = false;         ///< the remote peer cfg: rpma_flush(PERSISTENT) allowed
    bool passive = false;              ///< accepted by a listener
    ibv_mr* raw_mr = nullptr;          ///< where flush reads land
    alignas(8) std::uint64_t raw = 0;
    std::vector<Pending> pending;
};

struct ConnReqObj {
    ConnObj* conn = nullptr;
};

struct EpObj {
    PeerObj* peer = nullptr;
    rdma_event_channel* ch = nullptr;
    rdma_cm_id* id = nullptr;
};

template <class Obj, class Handle>
Obj* obj(Handle* h) noexcept {
    return reinterpret_cast<Obj*>(h);
}
template <class Obj, class Handle>
const Obj* obj(const Handle* h) noexcept {
    return reinterpret_cast<const Obj*>(h);
}
template <class Handle, class Obj>
Handle* handle(Obj* o) noexcept {
    return reinterpret_cast<Handle*>(o);
}

/// getaddrinfo's result, freed on scope exit.
struct AddrInfo {
    addrinfo* ai = nullptr;
    AddrInfo() = default;
    AddrInfo(const AddrInfo&) = delete;
    AddrInfo& operator=(const AddrInfo&) = delete;
    ~AddrInfo() {
        if (ai) ::freeaddrinfo(ai);
    }
};
/// getaddrinfo for a stream address (`passive`: to bind). RETURN VALUE: 0,
/// or kErrProvider with the resolver's message recorded (fail()).
int lookup(const char* addr, const char* port, bool passive, AddrInfo& out);

/// Record "<call>: <strerror(err)>" as this thread's last failure, and
/// return kErrProvider (or `ret`).
int fail(const char* call, int err, int ret = kErrProvider);
/// The last failure recorded on this thread when it was recorded with the
/// return code `ret` (empty otherwise); cleared by reading.
std::string take_last_failure(int ret);

/// Queue sizes, completion channel, CQ, queue pair and flush buffer for a
/// cm id. RETURN VALUE: 0 or a kErr code (the partial object is freed by
/// destroy_conn).
int build_conn(ConnObj& c, const ConnCfgObj& cfg);
/// Free everything build_conn and connect made; the cm id too when `id`.
void destroy_conn(ConnObj* c) noexcept;
/// O_NONBLOCK on a channel's fd. RETURN VALUE: 0 or kErrProvider.
int nonblocking(int fd);

/// Post one receive on c's queue pair. RETURN VALUE: 0 or a kErr code.
int post_recv(ConnObj& c, const LocalMrObj& mr, std::size_t offset, std::size_t len, const void* ctx);

int get_ibv_context(const Verbs& v, const char* addr, ContextType type, ibv_context** ctx);
int peer_new(const Verbs& v, ibv_context* ctx, Peer** peer);
/// Every Api entry that needs no Verbs table of its own (the objects it
/// takes carry theirs).
Api base_api() noexcept;

/// The Api table over the Verbs table V() returns: real_api() is
/// make_api<&real_verbs>(); the layer's unit tests pass their fake's.
template <const Verbs& (*V)()>
Api make_api() noexcept {
    Api a = base_api();
    a.utils_get_ibv_context = [](const char* addr, ContextType t, ibv_context** ctx) {
        return get_ibv_context(V(), addr, t, ctx);
    };
    a.peer_new = [](ibv_context* ctx, Peer** peer) { return peer_new(V(), ctx, peer); };
    a.cm_create_id = [](rdma_event_channel* ch, rdma_cm_id** id, void* c, rdma_port_space ps) {
        return V().create_id(ch, id, c, ps);
    };
    a.cm_bind_addr = [](rdma_cm_id* id, sockaddr* addr) { return V().bind_addr(id, addr); };
    a.cm_get_src_port = [](rdma_cm_id* id) { return V().get_src_port(id); };
    a.cm_destroy_id = [](rdma_cm_id* id) { return V().destroy_id(id); };
    return a;
}

} // namespace rpm::rdma::verbs
