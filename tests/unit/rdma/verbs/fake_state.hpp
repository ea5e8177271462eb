// The fake rdma-core's internals, shared by its three files: the state
// (fake_verbs.cpp, with the control functions and the table), the rdma_cm
// calls (fake_cm.cpp) and the ibverbs calls (fake_ibv.cpp).
#pragma once

#include "fake_verbs.hpp"

#include <deque>
#include <functional>
#include <map>
#include <set>

namespace rpm::rdma::verbs::fake::detail {

struct QpInfo {
    rdma_cm_id* id = nullptr;
    std::uint32_t max_inline = 0;  ///< granted
    std::uint32_t max_send_wr = 0;
    std::uint64_t send_ops_flags = 0;
    std::uint32_t comp_mask = 0;
    /// qp_access_flags: what rdma_cm gives an RC queue pair, until modify_qp.
    unsigned access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
};

struct CqInfo {
    unsigned delivered = 0;  ///< events handed out by get_cq_event
    unsigned acked = 0;
    bool armed = false;
    std::deque<ibv_wc> wcs;
};

struct Failure {
    int err = 0;
    int times = 0;
};

struct State {
    Config cfg;
    std::vector<std::string> calls;
    std::map<std::string, Failure, std::less<>> failures;
    std::vector<std::string> violations;
    // live objects
    std::set<ibv_pd*> pds;
    std::map<ibv_mr*, int> mrs;  ///< with the access it was registered with
    std::set<ibv_comp_channel*> comp_channels;
    std::map<int, int> cq_event_queue;  ///< completion channel fd -> events raised, not taken
    std::map<ibv_cq*, CqInfo> cqs;
    std::set<rdma_event_channel*> channels;
    std::map<int, std::deque<rdma_cm_event*>> cm_queue;  ///< event channel fd -> queued events
    std::set<rdma_cm_id*> ids;
    std::set<const rdma_cm_id*> resolved, bound, listening, incoming;
    std::map<ibv_qp*, QpInfo> qps;
    std::set<rdma_cm_event*> events_out;  ///< handed out, not acknowledged
    // records
    std::vector<PostSend> sends;
    std::vector<PostRecv> recvs;
    std::vector<AtomicWrite> atomics;
    std::vector<ibv_qp_init_attr_ex> qp_attrs;
    std::vector<Registration> regs, deregs;
    std::vector<Connect> connects;
    std::vector<rdma_cm_id*> rejects, disconnects;
    std::vector<rdma_cm_event_type> acked;
    CmArgs cm;
    unsigned cq_acks = 0;
    std::uint32_t next = 1;  ///< handles, qp numbers, keys
};

State& st();
/// Record a call by name; the error injected for it, or 0.
int enter(const char* call);
void violation(std::string what);
/// Whether a read of fd would block (O_NONBLOCK not set).
bool blocking(int fd);
/// A new eventfd standing in for a channel's file descriptor.
int new_fd();
/// errno = err; -1 (the rdma_cm convention).
int fail_errno(int err);

// rdma_cm (fake_cm.cpp)
rdma_event_channel* create_event_channel();
void destroy_event_channel(rdma_event_channel* ch);
int create_id(rdma_event_channel* ch, rdma_cm_id** id, void* ctx, rdma_port_space ps);
int destroy_id(rdma_cm_id* id);
int bind_addr(rdma_cm_id* id, sockaddr* addr);
int resolve_addr(rdma_cm_id* id, sockaddr* src, sockaddr* dst, int timeout_ms);
int resolve_route(rdma_cm_id* id, int timeout_ms);
int listen(rdma_cm_id* id, int backlog);
int get_cm_event(rdma_event_channel* ch, rdma_cm_event** ev);
int ack_cm_event(rdma_cm_event* ev);
int migrate_id(rdma_cm_id* id, rdma_event_channel* ch);
int create_qp_ex(rdma_cm_id* id, ibv_qp_init_attr_ex* attr);
int query_qp(ibv_qp* qp, ibv_qp_attr* attr, int mask, ibv_qp_init_attr* init);
int modify_qp(ibv_qp* qp, ibv_qp_attr* attr, int mask);
void destroy_qp(rdma_cm_id* id);
int connect(rdma_cm_id* id, rdma_conn_param* param);
int accept(rdma_cm_id* id, rdma_conn_param* param);
int reject(rdma_cm_id* id, const void* pdata, std::uint8_t len);
int disconnect(rdma_cm_id* id);
std::uint16_t get_src_port(rdma_cm_id* id);

// ibverbs (fake_ibv.cpp)
int query_device_ex(ibv_context* ctx, ibv_device_attr_ex* attr);
ibv_pd* alloc_pd(ibv_context* ctx);
int dealloc_pd(ibv_pd* pd);
ibv_mr* reg_mr(ibv_pd* pd, void* addr, std::size_t len, int access);
int dereg_mr(ibv_mr* mr);
ibv_comp_channel* create_comp_channel(ibv_context* ctx);
int destroy_comp_channel(ibv_comp_channel* ch);
ibv_cq* create_cq(ibv_context* ctx, int cqe, void* cq_ctx, ibv_comp_channel* ch, int vector);
int destroy_cq(ibv_cq* cq);
int req_notify_cq(ibv_cq* cq, int solicited_only);
int get_cq_event(ibv_comp_channel* ch, ibv_cq** cq, void** cq_ctx);
void ack_cq_events(ibv_cq* cq, unsigned n);
int poll_cq(ibv_cq* cq, int n, ibv_wc* wc);
int post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad);
int post_recv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad);
int post_atomic_write(ibv_qp* qp, std::uint64_t wr_id, unsigned wr_flags, std::uint32_t rkey,
                      std::uint64_t remote_addr, const void* value);
int post_chain_ex(ibv_qp* qp, const WorkRequest* wrs, std::size_t n);

} // namespace rpm::rdma::verbs::fake::detail
