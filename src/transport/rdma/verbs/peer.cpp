// The device behind an address, the peer (its protection domain), and the
// record of the last rdma-core failure on this thread.
#include "transport/rdma/verbs/objects.hpp"

#include "platform/rdma_caps.hpp"

#include <cerrno>
#include <cstring>
#include <memory>
#include <utility>

namespace rpm::rdma::verbs {
namespace {

// The return code a failure was recorded with, and what rdma-core said: a
// later error with another code (a validation error records nothing) must
// not be blamed on it.
struct LastFailure {
    int code = 0;
    std::string text;
};
thread_local LastFailure last_failure;

// The cm id is needed only to learn the device: rdma_cm keeps the device
// open after the id is gone, for the life of the process.
struct TempId {
    const Verbs& v;
    rdma_cm_id* id = nullptr;
    ~TempId() {
        if (id) (void)v.destroy_id(id);
    }
};

} // namespace

int fail(const char* call, int err, int ret) {
    last_failure = {ret, std::string(call) + ": " + std::strerror(err)};
    return ret;
}

std::string take_last_failure(int ret) {
    LastFailure f = std::exchange(last_failure, {});
    return f.code == ret ? std::move(f.text) : std::string();
}

int lookup(const char* addr, const char* port, bool passive, AddrInfo& out) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    if (passive) hints.ai_flags = AI_PASSIVE;
    if (int rc = ::getaddrinfo(addr, port, &hints, &out.ai); rc != 0 || out.ai == nullptr) {
        last_failure = {kErrProvider, std::string("getaddrinfo(") + addr + "): " + ::gai_strerror(rc)};
        return kErrProvider;
    }
    return 0;
}

int get_ibv_context(const Verbs& v, const char* addr, ContextType type, ibv_context** ctx) {
    if (addr == nullptr || ctx == nullptr) return kErrInval;
    AddrInfo res;
    if (int r = lookup(addr, nullptr, type == kContextLocal, res); r != 0) return r;
    TempId t{v};
    // A NULL channel: the id works synchronously, resolve_addr waits.
    if (v.create_id(nullptr, &t.id, nullptr, RDMA_PS_TCP) != 0) return fail("rdma_create_id", errno);
    if (type == kContextLocal) {
        if (v.bind_addr(t.id, res.ai->ai_addr) != 0) return fail("rdma_bind_addr", errno);
    } else if (v.resolve_addr(t.id, nullptr, res.ai->ai_addr, 1000) != 0) {
        return fail("rdma_resolve_addr", errno);
    }
    *ctx = t.id->verbs;  // NULL for a wildcard address: no device
    return 0;
}

int peer_new(const Verbs& v, ibv_context* ctx, Peer** peer) {
    if (ctx == nullptr || peer == nullptr) return kErrInval;
    auto p = std::make_unique<PeerObj>();
    p->v = &v;
    p->ctx = ctx;
    p->pd = v.alloc_pd(ctx);
    if (p->pd == nullptr) return fail("ibv_alloc_pd", errno);
    ibv_device_attr_ex attr{};
    // Without the extended query (old providers) the device has neither
    // atomic write nor FLUSH. A FLUSH needs the build's rdma-core too.
    if (v.query_device_ex(ctx, &attr) == 0) {
        const auto caps = platform::caps_from_flags(attr.device_cap_flags_ex);
        p->atomic_write = caps.atomic_write;
        p->native_flush = caps.native_flush && v.post_chain_ex != nullptr;
    }
    *peer = handle<Peer>(p.release());
    return 0;
}

int peer_delete(Peer** peer) {
    if (peer == nullptr) return kErrInval;
    auto* p = obj<PeerObj>(*peer);
    *peer = nullptr;
    if (p == nullptr) return 0;
    const int ret = p->v->dealloc_pd(p->pd);
    delete p;
    return ret == 0 ? 0 : fail("ibv_dealloc_pd", ret);
}

} // namespace rpm::rdma::verbs
