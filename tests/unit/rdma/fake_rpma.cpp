// The fake fabric: its Api table, its records and the helpers every fake
// call shares.
#include "fake_rpma_fns.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <sys/eventfd.h>
#include <unistd.h>

namespace rpm::rdma::fake {
namespace {

Fabric* g_current = nullptr;

// The table Fabric::api() hands out: every entry a fake call (fake_rpma_fns.hpp).
Api fake_api() noexcept {
    return Api{
        .utils_get_ibv_context = &fn::get_ibv_context,
        .peer_new = &fn::peer_new,
        .peer_delete = &fn::peer_delete,
        .peer_cfg_new = &fn::peer_cfg_new,
        .peer_cfg_delete = &fn::peer_cfg_delete,
        .peer_cfg_set_direct_write_to_pmem = &fn::peer_cfg_set_direct,
        .peer_cfg_get_direct_write_to_pmem = &fn::peer_cfg_get_direct,
        .peer_cfg_get_descriptor_size = &fn::peer_cfg_desc_size,
        .peer_cfg_get_descriptor = &fn::peer_cfg_desc,
        .peer_cfg_from_descriptor = &fn::peer_cfg_from_desc,
        .mr_reg = &fn::mr_reg,
        .mr_dereg = &fn::mr_dereg,
        .mr_get_native_flush = &fn::mr_native_flush,
        .mr_get_descriptor_size = &fn::mr_desc_size,
        .mr_get_descriptor = &fn::mr_desc,
        .mr_remote_from_descriptor = &fn::mr_remote_from_desc,
        .mr_remote_get_size = &fn::mr_remote_size,
        .mr_remote_get_flush_type = &fn::mr_remote_flush_type,
        .mr_remote_delete = &fn::mr_remote_delete,
        .conn_cfg_new = &fn::conn_cfg_new,
        .conn_cfg_delete = &fn::conn_cfg_delete,
        .conn_cfg_set_sq_size = &fn::conn_cfg_sq,
        .conn_cfg_set_rq_size = &fn::conn_cfg_rq,
        .conn_cfg_set_cq_size = &fn::conn_cfg_cq,
        .conn_cfg_set_timeout = &fn::conn_cfg_timeout,
        .conn_req_new = &fn::conn_req_new,
        .conn_req_delete = &fn::conn_req_delete,
        .conn_req_recv = &fn::conn_req_recv,
        .conn_req_connect = &fn::conn_req_connect,
        .ep_listen = &fn::ep_listen,
        .ep_get_fd = &fn::ep_get_fd,
        .ep_next_conn_req = &fn::ep_next_conn_req,
        .ep_shutdown = &fn::ep_shutdown,
        .conn_get_event_fd = &fn::conn_get_event_fd,
        .conn_next_event = &fn::conn_next_event,
        .conn_apply_remote_peer_cfg = &fn::conn_apply,
        .conn_get_cq = &fn::conn_get_cq,
        .conn_atomic_write_kind = &fn::conn_atomic_write_kind,
        .conn_native_flush = &fn::conn_native_flush,
        .conn_disconnect = &fn::conn_disconnect,
        .conn_delete = &fn::conn_delete,
        .write = &fn::write,
        .read = &fn::read,
        .atomic_write = &fn::atomic_write,
        .flush = &fn::flush,
        .flush_native = &fn::flush_native,
        .send = &fn::send,
        .recv = &fn::recv,
        .ring = &fn::ring,
        .cq_get_fd = &fn::cq_get_fd,
        .cq_wait = &fn::cq_wait,
        .cq_get_wc = &fn::cq_get_wc,
        .cm_create_id = &fn::cm_create_id,
        .cm_bind_addr = &fn::cm_bind_addr,
        .cm_get_src_port = &fn::cm_get_src_port,
        .cm_destroy_id = &fn::cm_destroy_id,
    };
}

} // namespace

Fabric::Fabric() {
    if (g_current) throw std::logic_error("one fake fabric at a time");
    context_.device = &device_;
    g_current = this;
}

Fabric::~Fabric() { g_current = nullptr; }

Fabric& Fabric::current() {
    if (!g_current) throw std::logic_error("no fake fabric");
    return *g_current;
}

const Api& Fabric::api() noexcept {
    static const Api api = fake_api();
    return api;
}

void Fabric::fail_next(const std::string& call, int code) {
    std::lock_guard lock(mu_);
    fail_calls_[call] = code;
}

void Fabric::fail_wc_next(const std::string& kind, ibv_wc_status status) {
    std::lock_guard lock(mu_);
    fail_wcs_[kind] = status;
}

void Fabric::hold_client_completions(bool on) {
    std::lock_guard lock(mu_);
    hold_ = on;
    for (auto* c : conns_)
        if (!c->passive) c->hold = on;
}

void Fabric::hold_server_completions(bool on) {
    std::lock_guard lock(mu_);
    for (auto* c : conns_)
        if (c->passive) c->hold = on;
}

void Fabric::release_held() {
    std::lock_guard lock(mu_);
    for (auto* c : conns_) {
        for (const auto& wc : c->held) c->cq.wcs.push_back(wc);
        if (!c->held.empty()) fn::bump(c->cq.fd);
        c->held.clear();
    }
}

void Fabric::drop_all() {
    std::lock_guard lock(mu_);
    for (auto* c : conns_) {
        if (!c->remote) continue;
        fn::push_event(c, kConnLost);
        fn::unlink(c, kConnLost);
    }
}

void Fabric::release_held_then_drop_all() {
    std::lock_guard lock(mu_);
    std::vector<int> fds;
    for (auto* c : conns_) {
        for (const auto& wc : c->held) c->cq.wcs.push_back(wc);
        if (!c->held.empty()) fds.push_back(c->cq.fd);
        c->held.clear();
    }
    for (auto* c : conns_) {
        if (!c->remote) continue;
        fn::push_event(c, kConnLost);
        fn::unlink(c, kConnLost);
    }
    for (int fd : fds) fn::bump(fd);
}

void Fabric::inject_to_server(std::vector<std::byte> bytes) {
    std::lock_guard lock(mu_);
    for (auto* c : conns_) {
        if (!c->passive || !c->remote) continue;
        fn::deliver(c, std::move(bytes));
        return;
    }
}

int take_failure(Fabric& f, const std::string& call) {
    f.calls_.push_back(call);
    auto it = f.fail_calls_.find(call);
    if (it == f.fail_calls_.end()) return 0;
    const int code = it->second;
    f.fail_calls_.erase(it);
    return code;
}

#define RPM_FAKE_GETTER(type, name, member) \
    type Fabric::name() const {             \
        std::lock_guard lock(mu_);          \
        return member;                      \
    }
RPM_FAKE_GETTER(std::vector<WriteCall>, writes, writes_)
RPM_FAKE_GETTER(std::vector<ReadCall>, reads, reads_)
RPM_FAKE_GETTER(std::vector<AtomicCall>, atomics, atomics_)
RPM_FAKE_GETTER(std::vector<FlushCall>, flushes, flushes_)
RPM_FAKE_GETTER(std::vector<FlushCall>, native_flushes, native_flushes_)
RPM_FAKE_GETTER(std::vector<SendCall>, sends, sends_)
RPM_FAKE_GETTER(std::vector<RecvCall>, recvs, recvs_)
RPM_FAKE_GETTER(std::vector<MrRegCall>, mr_regs, mr_regs_)
RPM_FAKE_GETTER(std::vector<ConnReqCall>, conn_reqs, conn_reqs_)
RPM_FAKE_GETTER(std::vector<std::string>, calls, calls_)
using PeerCfgSets = std::vector<std::pair<PeerCfg*, bool>>;
using Applied = std::vector<std::pair<Conn*, bool>>;
RPM_FAKE_GETTER(PeerCfgSets, peer_cfg_sets, peer_cfg_sets_)
RPM_FAKE_GETTER(Applied, applied_peer_cfgs, applied_)
#undef RPM_FAKE_GETTER

std::size_t Fabric::live_objects() const {
    std::lock_guard lock(mu_);
    return static_cast<std::size_t>(live_);
}

namespace fn {

void bump(int fd) noexcept {
    const std::uint64_t one = 1;
    (void)!::write(fd, &one, sizeof one);
}

bool take(int fd) noexcept {
    std::uint64_t n = 0;
    return ::read(fd, &n, sizeof n) == static_cast<ssize_t>(sizeof n);
}

void push_event(Conn* c, ConnEvent e) {
    c->events.push_back(e);
    bump(c->event_fd);
}

void push_wc(Conn* c, const ibv_wc& wc, bool send_queue) {
    if (send_queue && c->hold) {
        c->held.push_back(wc);
        return;
    }
    c->cq.wcs.push_back(wc);
    bump(c->cq.fd);
}

void deliver(Conn* to, std::vector<std::byte> bytes) {
    if (to->recvs.empty()) {
        to->unmatched.push_back(std::move(bytes));  // RNR: the sender retries until a receive is posted
        return;
    }
    FakeRecv r = to->recvs.front();
    to->recvs.pop_front();
    ibv_wc wc{};
    wc.wr_id = reinterpret_cast<std::uint64_t>(r.ctx);
    wc.opcode = IBV_WC_RECV;
    if (bytes.size() > r.len) {
        wc.status = IBV_WC_LOC_LEN_ERR;
    } else {
        std::memcpy(static_cast<std::byte*>(r.mr->ptr) + r.offset, bytes.data(), bytes.size());
        wc.status = IBV_WC_SUCCESS;
        wc.byte_len = static_cast<std::uint32_t>(bytes.size());
    }
    push_wc(to, wc, false);
}

Conn* new_conn(Fabric& f, Peer* peer, bool passive) {
    auto* c = new Conn;
    c->peer = peer;
    c->passive = passive;
    c->hold = !passive && f.hold_;
    c->cq.fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    c->event_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC | EFD_SEMAPHORE);
    f.conns_.push_back(c);
    ++f.live_;
    return c;
}

void unlink(Conn* c, ConnEvent remote_event) {
    Conn* r = c->remote;
    c->remote = nullptr;
    if (!r) return;
    r->remote = nullptr;
    if (!r->disconnected) push_event(r, remote_event);
}

} // namespace fn
} // namespace rpm::rdma::fake
