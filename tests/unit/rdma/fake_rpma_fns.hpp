// The fake's implementations of the Api entries (fake_objects.cpp,
// fake_data.cpp), and the helpers they share.
#pragma once

#include "fake_rpma.hpp"

namespace rpm::rdma::fake::fn {

/// The fabric the calls act on (the test's Harness installs it).
inline Fabric& F() { return Fabric::current(); }

// helpers (caller holds Fabric::mu_)
void bump(int fd) noexcept;
bool take(int fd) noexcept;  // consume one count of an eventfd
void push_event(Conn* c, ConnEvent e);
void push_wc(Conn* c, const ibv_wc& wc, bool send_queue);
void deliver(Conn* to, std::vector<std::byte> bytes);
Conn* new_conn(Fabric& f, Peer* peer, bool passive);
void unlink(Conn* c, ConnEvent remote_event);

// device, peer, peer cfg
int get_ibv_context(const char* addr, ContextType type, ibv_context** ctx);
int peer_new(ibv_context* ctx, Peer** peer);
int peer_delete(Peer** peer);
int peer_cfg_new(PeerCfg** cfg);
int peer_cfg_delete(PeerCfg** cfg);
int peer_cfg_set_direct(PeerCfg* cfg, bool direct);
int peer_cfg_get_direct(const PeerCfg* cfg, bool* direct);
int peer_cfg_desc_size(const PeerCfg* cfg, std::size_t* n);
int peer_cfg_desc(const PeerCfg* cfg, void* desc);
int peer_cfg_from_desc(const void* desc, std::size_t n, PeerCfg** cfg);
// memory
int mr_reg(Peer* peer, void* ptr, std::size_t size, int usage, LocalMr** mr);
int mr_dereg(LocalMr** mr);
int mr_native_flush(const LocalMr* mr, int* usage);
int mr_desc_size(const LocalMr* mr, std::size_t* n);
int mr_desc(const LocalMr* mr, void* desc);
int mr_remote_from_desc(const void* desc, std::size_t n, RemoteMr** mr);
int mr_remote_size(const RemoteMr* mr, std::size_t* n);
int mr_remote_flush_type(const RemoteMr* mr, int* type);
int mr_remote_delete(RemoteMr** mr);
// connection configuration and set-up
int conn_cfg_new(ConnCfg** cfg);
int conn_cfg_delete(ConnCfg** cfg);
int conn_cfg_sq(ConnCfg* cfg, std::uint32_t n);
int conn_cfg_rq(ConnCfg* cfg, std::uint32_t n);
int conn_cfg_cq(ConnCfg* cfg, std::uint32_t n);
int conn_cfg_timeout(ConnCfg* cfg, int ms);
int conn_req_new(Peer* peer, const char* addr, const char* port, const ConnCfg* cfg, ConnReq** req);
int conn_req_delete(ConnReq** req);
int conn_req_recv(ConnReq* req, LocalMr* dst, std::size_t off, std::size_t len, const void* ctx);
int conn_req_connect(ConnReq** req, const void* pdata, Conn** conn);
int ep_listen(Peer* peer, const char* addr, const char* port, Ep** ep);
int ep_get_fd(const Ep* ep, int* fd);
int ep_next_conn_req(Ep* ep, const ConnCfg* cfg, ConnReq** req);
int ep_shutdown(Ep** ep);
// connection
int conn_get_event_fd(const Conn* c, int* fd);
int conn_next_event(Conn* c, ConnEvent* ev);
int conn_apply(Conn* c, const PeerCfg* cfg);
int conn_get_cq(const Conn* c, Cq** cq);
int conn_atomic_write_kind(const Conn* c, AtomicWriteKind* kind);
int conn_native_flush(const Conn* c, bool* native);
int conn_disconnect(Conn* c);
int conn_delete(Conn** c);
// data path and completions
int write(Conn* c, const RemoteMr* dst, std::size_t dst_off, const LocalMr* src, std::size_t src_off,
          std::size_t len, int flags, const void* ctx);
int read(Conn* c, LocalMr* dst, std::size_t dst_off, const RemoteMr* src, std::size_t src_off,
         std::size_t len, int flags, const void* ctx);
int atomic_write(Conn* c, const RemoteMr* dst, std::size_t dst_off, const char src[8], int flags,
                 const void* ctx);
int flush(Conn* c, const RemoteMr* dst, std::size_t dst_off, std::size_t len, FlushType type, int flags,
          const void* ctx);
int flush_native(Conn* c, const RemoteMr* dst, std::size_t dst_off, std::size_t len, FlushType type, int flags,
                 const void* ctx);
int send(Conn* c, const LocalMr* src, std::size_t off, std::size_t len, int flags, const void* ctx);
int recv(Conn* c, LocalMr* dst, std::size_t off, std::size_t len, const void* ctx);
int ring(Conn* c);
int cq_get_fd(const Cq* cq, int* fd);
int cq_wait(Cq* cq);
int cq_get_wc(Cq* cq, int n, ibv_wc* wc, int* got);
// rdma_cm
int cm_create_id(rdma_event_channel* ch, rdma_cm_id** id, void* ctx, rdma_port_space ps);
int cm_bind_addr(rdma_cm_id* id, sockaddr* addr);
std::uint16_t cm_get_src_port(rdma_cm_id* id);
int cm_destroy_id(rdma_cm_id* id);

} // namespace rpm::rdma::fake::fn
