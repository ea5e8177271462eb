// The two configurations: a peer's (direct write to PMem, sent to the
// client in a one-byte descriptor) and a connection's (queue sizes, timeout).
#include "transport/rdma/verbs/objects.hpp"

namespace rpm::rdma::verbs {

int peer_cfg_new(PeerCfg** cfg) {
    if (cfg == nullptr) return kErrInval;
    *cfg = handle<PeerCfg>(new PeerCfgObj);
    return 0;
}

int peer_cfg_delete(PeerCfg** cfg) {
    if (cfg == nullptr) return kErrInval;
    delete obj<PeerCfgObj>(*cfg);
    *cfg = nullptr;
    return 0;
}

int peer_cfg_set_direct(PeerCfg* cfg, bool direct) {
    if (cfg == nullptr) return kErrInval;
    obj<PeerCfgObj>(cfg)->direct = direct;
    return 0;
}

int peer_cfg_get_direct(const PeerCfg* cfg, bool* direct) {
    if (cfg == nullptr || direct == nullptr) return kErrInval;
    *direct = obj<PeerCfgObj>(cfg)->direct;
    return 0;
}

int peer_cfg_descriptor_size(const PeerCfg* cfg, std::size_t* n) {
    if (cfg == nullptr || n == nullptr) return kErrInval;
    *n = 1;
    return 0;
}

int peer_cfg_descriptor(const PeerCfg* cfg, void* desc) {
    if (cfg == nullptr || desc == nullptr) return kErrInval;
    *static_cast<std::uint8_t*>(desc) = obj<PeerCfgObj>(cfg)->direct ? 1 : 0;
    return 0;
}

int peer_cfg_from_descriptor(const void* desc, std::size_t n, PeerCfg** cfg) {
    if (desc == nullptr || cfg == nullptr || n != 1) return kErrInval;
    const auto b = *static_cast<const std::uint8_t*>(desc);
    if (b > 1) return kErrInval;
    auto* c = new PeerCfgObj;
    c->direct = b == 1;
    *cfg = handle<PeerCfg>(c);
    return 0;
}

int conn_cfg_new(ConnCfg** cfg) {
    if (cfg == nullptr) return kErrInval;
    *cfg = handle<ConnCfg>(new ConnCfgObj);
    return 0;
}

int conn_cfg_delete(ConnCfg** cfg) {
    if (cfg == nullptr) return kErrInval;
    delete obj<ConnCfgObj>(*cfg);
    *cfg = nullptr;
    return 0;
}

int conn_cfg_set_sq_size(ConnCfg* cfg, std::uint32_t n) {
    if (cfg == nullptr || n == 0) return kErrInval;
    obj<ConnCfgObj>(cfg)->sq = n;
    return 0;
}

int conn_cfg_set_rq_size(ConnCfg* cfg, std::uint32_t n) {
    if (cfg == nullptr || n == 0) return kErrInval;
    obj<ConnCfgObj>(cfg)->rq = n;
    return 0;
}

int conn_cfg_set_cq_size(ConnCfg* cfg, std::uint32_t n) {
    if (cfg == nullptr || n == 0) return kErrInval;
    obj<ConnCfgObj>(cfg)->cq = n;
    return 0;
}

int conn_cfg_set_timeout(ConnCfg* cfg, int ms) {
    if (cfg == nullptr || ms < 0) return kErrInval;
    obj<ConnCfgObj>(cfg)->timeout_ms = ms;
    return 0;
}

} // namespace rpm::rdma::verbs
