// The verbs layer's implementations of the Api entries (api.hpp documents
// each), one file per object: peer.cpp, config.cpp, mr.cpp, conn_req.cpp,
// ep.cpp, conn.cpp, post.cpp. api_table.cpp puts them in the table.
#pragma once

#include "transport/rdma/api.hpp"

namespace rpm::rdma::verbs {

int peer_delete(Peer** peer);
int peer_cfg_new(PeerCfg** cfg);
int peer_cfg_delete(PeerCfg** cfg);
int peer_cfg_set_direct(PeerCfg* cfg, bool direct);
int peer_cfg_get_direct(const PeerCfg* cfg, bool* direct);
int peer_cfg_descriptor_size(const PeerCfg* cfg, std::size_t* n);
int peer_cfg_descriptor(const PeerCfg* cfg, void* desc);
int peer_cfg_from_descriptor(const void* desc, std::size_t n, PeerCfg** cfg);
int mr_reg(Peer* peer, void* ptr, std::size_t size, int usage, LocalMr** mr);
int mr_dereg(LocalMr** mr);
int mr_get_native_flush(const LocalMr* mr, int* usage);
int mr_get_descriptor_size(const LocalMr* mr, std::size_t* n);
int mr_get_descriptor(const LocalMr* mr, void* desc);
int mr_remote_from_descriptor(const void* desc, std::size_t n, RemoteMr** mr);
int mr_remote_get_size(const RemoteMr* mr, std::size_t* n);
int mr_remote_get_flush_type(const RemoteMr* mr, int* type);
int mr_remote_delete(RemoteMr** mr);
int conn_cfg_new(ConnCfg** cfg);
int conn_cfg_delete(ConnCfg** cfg);
int conn_cfg_set_sq_size(ConnCfg* cfg, std::uint32_t n);
int conn_cfg_set_rq_size(ConnCfg* cfg, std::uint32_t n);
int conn_cfg_set_cq_size(ConnCfg* cfg, std::uint32_t n);
int conn_cfg_set_timeout(ConnCfg* cfg, int ms);
int conn_req_new(Peer* peer, const char* addr, const char* port, const ConnCfg* cfg, ConnReq** req);
int conn_req_delete(ConnReq** req);
int conn_req_recv(ConnReq* req, LocalMr* dst, std::size_t offset, std::size_t len, const void* ctx);
int conn_req_connect(ConnReq** req, const void* pdata, Conn** conn);
int ep_listen(Peer* peer, const char* addr, const char* port, Ep** ep);
int ep_get_fd(const Ep* ep, int* fd);
int ep_next_conn_req(Ep* ep, const ConnCfg* cfg, ConnReq** req);
int ep_shutdown(Ep** ep);
int conn_get_event_fd(const Conn* conn, int* fd);
int conn_next_event(Conn* conn, ConnEvent* ev);
int conn_apply_remote_peer_cfg(Conn* conn, const PeerCfg* cfg);
int conn_get_cq(const Conn* conn, Cq** cq);
int conn_atomic_write_kind(const Conn* conn, AtomicWriteKind* kind);
int conn_native_flush(const Conn* conn, bool* native);
int conn_disconnect(Conn* conn);
int conn_delete(Conn** conn);
int write(Conn* conn, const RemoteMr* dst, std::size_t dst_off, const LocalMr* src, std::size_t src_off,
          std::size_t len, int flags, const void* ctx);
int read(Conn* conn, LocalMr* dst, std::size_t dst_off, const RemoteMr* src, std::size_t src_off,
         std::size_t len, int flags, const void* ctx);
int atomic_write(Conn* conn, const RemoteMr* dst, std::size_t dst_off, const char src[8], int flags,
                 const void* ctx);
int flush(Conn* conn, const RemoteMr* dst, std::size_t dst_off, std::size_t len, FlushType type, int flags,
          const void* ctx);
int flush_native(Conn* conn, const RemoteMr* dst, std::size_t dst_off, std::size_t len, FlushType type, int flags,
                 const void* ctx);
int send(Conn* conn, const LocalMr* src, std::size_t offset, std::size_t len, int flags, const void* ctx);
int recv(Conn* conn, LocalMr* dst, std::size_t offset, std::size_t len, const void* ctx);
int ring(Conn* conn);
int cq_get_fd(const Cq* cq, int* fd);
int cq_wait(Cq* cq);
int cq_get_wc(Cq* cq, int num_entries, ibv_wc* wc, int* num_entries_got);

} // namespace rpm::rdma::verbs
