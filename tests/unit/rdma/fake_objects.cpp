// The fake's objects: device, peers, peer configurations, registrations,
// connection requests, endpoints and connections.
#include "fake_rpma_fns.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <cstring>
#include <sys/eventfd.h>
#include <unistd.h>

namespace rpm::rdma::fake::fn {
namespace {

template <class T>
int destroy(Fabric& f, T** p) {
    if (p == nullptr) return kErrInval;
    if (*p != nullptr) --f.live_;
    delete *p;
    *p = nullptr;
    return 0;
}

constexpr std::size_t kMrDescSize = 8;  // id u32 + usage u32

} // namespace

int get_ibv_context(const char* addr, ContextType type, ibv_context** ctx) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    if (int e = take_failure(f, "rpma_utils_get_ibv_context")) return e;
    if (!addr || !ctx || (type != kContextLocal && type != kContextRemote))
        return kErrInval;
    if (f.no_device) return kErrProvider;
    std::snprintf(f.device_.name, sizeof f.device_.name, "%s", f.device_name.c_str());
    *ctx = &f.context_;
    return 0;
}

int peer_new(ibv_context* ctx, Peer** peer) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    if (int e = take_failure(f, "rpma_peer_new")) return e;
    if (!ctx || !peer) return kErrInval;
    *peer = new Peer{static_cast<int>(++f.live_)};
    return 0;
}

int peer_delete(Peer** peer) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    take_failure(f, "rpma_peer_delete");
    return destroy(f, peer);
}

int peer_cfg_new(PeerCfg** cfg) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    if (int e = take_failure(f, "rpma_peer_cfg_new")) return e;
    *cfg = new PeerCfg;
    ++f.live_;
    return 0;
}

int peer_cfg_delete(PeerCfg** cfg) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    take_failure(f, "rpma_peer_cfg_delete");
    return destroy(f, cfg);
}

int peer_cfg_set_direct(PeerCfg* cfg, bool direct) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    f.peer_cfg_sets_.emplace_back(cfg, direct);
    if (int e = take_failure(f, "rpma_peer_cfg_set_direct_write_to_pmem")) return e;
    if (!cfg) return kErrInval;
    cfg->direct = direct;
    return 0;
}

int peer_cfg_get_direct(const PeerCfg* cfg, bool* direct) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    if (int e = take_failure(f, "rpma_peer_cfg_get_direct_write_to_pmem")) return e;
    if (!cfg || !direct) return kErrInval;
    *direct = cfg->direct;
    return 0;
}

int peer_cfg_desc_size(const PeerCfg* cfg, std::size_t* n) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    if (int e = take_failure(f, "rpma_peer_cfg_get_descriptor_size")) return e;
    if (!cfg || !n) return kErrInval;
    *n = 1;  // as the verbs layer: one byte
    return 0;
}

int peer_cfg_desc(const PeerCfg* cfg, void* desc) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    if (int e = take_failure(f, "rpma_peer_cfg_get_descriptor")) return e;
    if (!cfg || !desc) return kErrInval;
    *static_cast<std::uint8_t*>(desc) = cfg->direct ? 1 : 0;
    return 0;
}

int peer_cfg_from_desc(const void* desc, std::size_t n, PeerCfg** cfg) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    if (int e = take_failure(f, "rpma_peer_cfg_from_descriptor")) return e;
    if (!desc || !cfg || n != 1) return kErrInval;
    *cfg = new PeerCfg{*static_cast<const std::uint8_t*>(desc) == 1};
    ++f.live_;
    return 0;
}

int mr_reg(Peer* peer, void* ptr, std::size_t size, int usage, LocalMr** mr) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    f.mr_regs_.push_back({peer, ptr, size, usage});
    if (int e = take_failure(f, "rpma_mr_reg")) return e;
    if (!peer || !ptr || size == 0 || !mr || usage == 0) return kErrInval;
    // As the verbs layer: native persistent FLUSH where the device has it,
    // unless the device refuses it for this memory.
    const bool native = f.native_flush && !f.refuse_native_flush_mr && (usage & kUsageFlushPersistent) != 0;
    *mr = new LocalMr{ptr, size, usage, f.next_mr_id_++, peer, native ? kUsageFlushPersistent : 0};
    f.mrs_[(*mr)->id] = *mr;
    ++f.live_;
    return 0;
}

int mr_dereg(LocalMr** mr) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    take_failure(f, "rpma_mr_dereg");
    if (mr && *mr) f.mrs_.erase((*mr)->id);
    return destroy(f, mr);
}

int mr_native_flush(const LocalMr* mr, int* usage) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    if (int e = take_failure(f, "rpma_mr_get_native_flush")) return e;
    if (!mr || !usage) return kErrInval;
    *usage = mr->native_flush;
    return 0;
}

int mr_desc_size(const LocalMr* mr, std::size_t* n) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    if (int e = take_failure(f, "rpma_mr_get_descriptor_size")) return e;
    if (!mr || !n) return kErrInval;
    *n = kMrDescSize;
    return 0;
}

int mr_desc(const LocalMr* mr, void* desc) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    if (int e = take_failure(f, "rpma_mr_get_descriptor")) return e;
    if (!mr || !desc) return kErrInval;
    const std::uint32_t words[2] = {mr->id, static_cast<std::uint32_t>(mr->usage)};
    std::memcpy(desc, words, sizeof words);
    return 0;
}

int mr_remote_from_desc(const void* desc, std::size_t n, RemoteMr** mr) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    if (int e = take_failure(f, "rpma_mr_remote_from_descriptor")) return e;
    if (!desc || !mr || n != kMrDescSize) return kErrInval;
    std::uint32_t words[2];
    std::memcpy(words, desc, sizeof words);
    auto it = f.mrs_.find(words[0]);
    if (it == f.mrs_.end()) return kErrNoSupp;
    *mr = new RemoteMr{words[0], it->second->size, static_cast<int>(words[1])};
    ++f.live_;
    return 0;
}

int mr_remote_size(const RemoteMr* mr, std::size_t* n) {
    if (!mr || !n) return kErrInval;
    *n = mr->size;
    return 0;
}

int mr_remote_flush_type(const RemoteMr* mr, int* type) {
    if (!mr || !type) return kErrInval;
    *type = mr->usage & (kUsageFlushPersistent | kUsageFlushVisibility);
    return 0;
}

int mr_remote_delete(RemoteMr** mr) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    take_failure(f, "rpma_mr_remote_delete");
    return destroy(f, mr);
}

int conn_cfg_new(ConnCfg** cfg) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    if (int e = take_failure(f, "rpma_conn_cfg_new")) return e;
    *cfg = new ConnCfg;
    ++f.live_;
    return 0;
}

int conn_cfg_delete(ConnCfg** cfg) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    return destroy(f, cfg);
}

int conn_cfg_sq(ConnCfg* cfg, std::uint32_t n) { return cfg ? (cfg->sq = n, 0) : kErrInval; }
int conn_cfg_rq(ConnCfg* cfg, std::uint32_t n) { return cfg ? (cfg->rq = n, 0) : kErrInval; }
int conn_cfg_cq(ConnCfg* cfg, std::uint32_t n) { return cfg ? (cfg->cq = n, 0) : kErrInval; }
int conn_cfg_timeout(ConnCfg* cfg, int ms) { return cfg ? (cfg->timeout = ms, 0) : kErrInval; }

int cm_create_id(rdma_event_channel*, rdma_cm_id** id, void*, rdma_port_space ps) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    if (int e = take_failure(f, "rdma_create_id")) return e;
    if (!id || ps != RDMA_PS_TCP) return -1;
    *id = new rdma_cm_id{};
    ++f.live_;
    return 0;
}

int cm_bind_addr(rdma_cm_id* id, sockaddr* addr) { return id && addr ? 0 : -1; }

std::uint16_t cm_get_src_port(rdma_cm_id*) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    return htons(f.next_port_++);
}

int cm_destroy_id(rdma_cm_id* id) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    --f.live_;
    delete id;
    return 0;
}

} // namespace rpm::rdma::fake::fn
