// The fake's implementations of the Api entries (fake_objects.cpp,
// fake_data.cpp), and the helpers they share.
#pragma once

#include "fake_rpma.hpp"

namespace rpm::rdma::fake::fn {

// helpers (caller holds Fabric::mu_)
void bump(int fd) noexcept;
bool take(int fd) noexcept;  // consume one count of an eventfd
void push_event(rpma_conn* c, rpma_conn_event e);
void push_wc(rpma_conn* c, const ibv_wc& wc, bool send_queue);
void deliver(rpma_conn* to, std::vector<std::byte> bytes);
rpma_conn* new_conn(Fabric& f, rpma_peer* peer, bool passive);
void unlink(rpma_conn* c, rpma_conn_event remote_event);

// device, peer, peer cfg
int get_ibv_context(const char* addr, rpma_util_ibv_context_type type, ibv_context** ctx);
int peer_new(ibv_context* ctx, rpma_peer** peer);
int peer_delete(rpma_peer** peer);
int peer_cfg_new(rpma_peer_cfg** cfg);
int peer_cfg_delete(rpma_peer_cfg** cfg);
int peer_cfg_set_direct(rpma_peer_cfg* cfg, bool direct);
int peer_cfg_get_direct(const rpma_peer_cfg* cfg, bool* direct);
int peer_cfg_desc_size(const rpma_peer_cfg* cfg, std::size_t* n);
int peer_cfg_desc(const rpma_peer_cfg* cfg, void* desc);
int peer_cfg_from_desc(const void* desc, std::size_t n, rpma_peer_cfg** cfg);
// memory
int mr_reg(rpma_peer* peer, void* ptr, std::size_t size, int usage, rpma_mr_local** mr);
int mr_dereg(rpma_mr_local** mr);
int mr_desc_size(const rpma_mr_local* mr, std::size_t* n);
int mr_desc(const rpma_mr_local* mr, void* desc);
int mr_remote_from_desc(const void* desc, std::size_t n, rpma_mr_remote** mr);
int mr_remote_size(const rpma_mr_remote* mr, std::size_t* n);
int mr_remote_flush_type(const rpma_mr_remote* mr, int* type);
int mr_remote_delete(rpma_mr_remote** mr);
// connection configuration and set-up
int conn_cfg_new(rpma_conn_cfg** cfg);
int conn_cfg_delete(rpma_conn_cfg** cfg);
int conn_cfg_sq(rpma_conn_cfg* cfg, std::uint32_t n);
int conn_cfg_rq(rpma_conn_cfg* cfg, std::uint32_t n);
int conn_cfg_cq(rpma_conn_cfg* cfg, std::uint32_t n);
int conn_cfg_timeout(rpma_conn_cfg* cfg, int ms);
int conn_req_new(rpma_peer* peer, const char* addr, const char* port, const rpma_conn_cfg* cfg, rpma_conn_req** req);
int conn_req_delete(rpma_conn_req** req);
int conn_req_recv(rpma_conn_req* req, rpma_mr_local* dst, std::size_t off, std::size_t len, const void* ctx);
int conn_req_connect(rpma_conn_req** req, const rpma_conn_private_data* pdata, rpma_conn** conn);
int ep_listen(rpma_peer* peer, const char* addr, const char* port, rpma_ep** ep);
int ep_get_fd(const rpma_ep* ep, int* fd);
int ep_next_conn_req(rpma_ep* ep, const rpma_conn_cfg* cfg, rpma_conn_req** req);
int ep_shutdown(rpma_ep** ep);
// connection
int conn_get_event_fd(const rpma_conn* c, int* fd);
int conn_next_event(rpma_conn* c, rpma_conn_event* ev);
int conn_apply(rpma_conn* c, const rpma_peer_cfg* cfg);
int conn_get_cq(const rpma_conn* c, rpma_cq** cq);
int conn_disconnect(rpma_conn* c);
int conn_delete(rpma_conn** c);
// data path and completions
int write(rpma_conn* c, rpma_mr_remote* dst, std::size_t dst_off, const rpma_mr_local* src, std::size_t src_off,
          std::size_t len, int flags, const void* ctx);
int read(rpma_conn* c, rpma_mr_local* dst, std::size_t dst_off, const rpma_mr_remote* src, std::size_t src_off,
         std::size_t len, int flags, const void* ctx);
int atomic_write(rpma_conn* c, rpma_mr_remote* dst, std::size_t dst_off, const char src[8], int flags,
                 const void* ctx);
int flush(rpma_conn* c, rpma_mr_remote* dst, std::size_t dst_off, std::size_t len, rpma_flush_type type, int flags,
          const void* ctx);
int send(rpma_conn* c, const rpma_mr_local* src, std::size_t off, std::size_t len, int flags, const void* ctx);
int recv(rpma_conn* c, rpma_mr_local* dst, std::size_t off, std::size_t len, const void* ctx);
int cq_get_fd(const rpma_cq* cq, int* fd);
int cq_wait(rpma_cq* cq);
int cq_get_wc(rpma_cq* cq, int n, ibv_wc* wc, int* got);
// rdma_cm
int cm_create_id(rdma_event_channel* ch, rdma_cm_id** id, void* ctx, rdma_port_space ps);
int cm_bind_addr(rdma_cm_id* id, sockaddr* addr);
__be16 cm_get_src_port(rdma_cm_id* id);
int cm_destroy_id(rdma_cm_id* id);

} // namespace rpm::rdma::fake::fn
