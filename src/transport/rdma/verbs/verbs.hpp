// Every rdma-core call (libibverbs, librdmacm) the verbs layer makes, as a
// table of function pointers: real_verbs() points at the libraries (inline
// verbs wrapped in functions), and tests/unit/rdma/verbs/ substitutes a
// fake that records each work request with all its fields.
#pragma once

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <cstddef>
#include <cstdint>

namespace rpm::rdma::verbs {

// rdma-core's names for native FLUSH (v45 on; Debian 12's v44 headers lack
// them). The layer and its fake rdma-core use these on every build;
// verbs.cpp checks them against the real headers where those have them.
inline constexpr auto kWrFlush = static_cast<ibv_wr_opcode>(14);  ///< IBV_WR_FLUSH
inline constexpr int kAccessFlushGlobal = 1 << 8;                 ///< IBV_ACCESS_FLUSH_GLOBAL
inline constexpr int kAccessFlushPersistent = 1 << 9;             ///< IBV_ACCESS_FLUSH_PERSISTENT
inline constexpr std::uint64_t kQpExWithFlush = 1 << 11;          ///< IBV_QP_EX_WITH_FLUSH
inline constexpr std::uint8_t kFlushGlobal = 1U << 0;             ///< IBV_FLUSH_GLOBAL (placement type)
inline constexpr std::uint8_t kFlushPersistentType = 1U << 1;     ///< IBV_FLUSH_PERSISTENT (placement type)
inline constexpr std::uint8_t kFlushRange = 0;                    ///< IBV_FLUSH_RANGE (selectivity level)
inline constexpr std::uint8_t kFlushMr = 1;                       ///< IBV_FLUSH_MR (selectivity level)

/// One send work request as the layer queues it: the ibv_send_wr with its
/// one scatter entry, and for a FLUSH (opcode kWrFlush) what ibv_send_wr
/// has no field for. rdma-core posts a FLUSH only through the extended
/// post API (ibv_wr_flush), so a chain holding one goes by post_chain_ex.
struct WorkRequest {
    ibv_send_wr wr{};
    ibv_sge sge{};
    std::uint64_t flush_len = 0;   ///< FLUSH: bytes from wr.rdma.remote_addr
    std::uint8_t flush_type = 0;   ///< FLUSH: kFlushPersistentType or kFlushGlobal
    std::uint8_t flush_level = 0;  ///< FLUSH: kFlushRange or kFlushMr
};

struct Verbs {
    // rdma_cm
    rdma_event_channel* (*create_event_channel)();
    void (*destroy_event_channel)(rdma_event_channel* ch);
    int (*create_id)(rdma_event_channel* ch, rdma_cm_id** id, void* ctx, rdma_port_space ps);
    int (*destroy_id)(rdma_cm_id* id);
    int (*bind_addr)(rdma_cm_id* id, sockaddr* addr);
    int (*resolve_addr)(rdma_cm_id* id, sockaddr* src, sockaddr* dst, int timeout_ms);
    int (*resolve_route)(rdma_cm_id* id, int timeout_ms);
    int (*listen)(rdma_cm_id* id, int backlog);
    int (*get_cm_event)(rdma_event_channel* ch, rdma_cm_event** ev);
    int (*ack_cm_event)(rdma_cm_event* ev);
    int (*migrate_id)(rdma_cm_id* id, rdma_event_channel* ch);
    int (*create_qp_ex)(rdma_cm_id* id, ibv_qp_init_attr_ex* attr);
    int (*query_qp)(ibv_qp* qp, ibv_qp_attr* attr, int mask, ibv_qp_init_attr* init);
    int (*modify_qp)(ibv_qp* qp, ibv_qp_attr* attr, int mask);
    void (*destroy_qp)(rdma_cm_id* id);
    int (*connect)(rdma_cm_id* id, rdma_conn_param* param);
    int (*accept)(rdma_cm_id* id, rdma_conn_param* param);
    int (*reject)(rdma_cm_id* id, const void* pdata, std::uint8_t len);
    int (*disconnect)(rdma_cm_id* id);
    std::uint16_t (*get_src_port)(rdma_cm_id* id);  ///< network byte order
    // device and memory
    int (*query_device_ex)(ibv_context* ctx, ibv_device_attr_ex* attr);
    ibv_pd* (*alloc_pd)(ibv_context* ctx);
    int (*dealloc_pd)(ibv_pd* pd);
    ibv_mr* (*reg_mr)(ibv_pd* pd, void* addr, std::size_t len, int access);
    int (*dereg_mr)(ibv_mr* mr);
    // completions
    ibv_comp_channel* (*create_comp_channel)(ibv_context* ctx);
    int (*destroy_comp_channel)(ibv_comp_channel* ch);
    ibv_cq* (*create_cq)(ibv_context* ctx, int cqe, void* cq_ctx, ibv_comp_channel* ch, int vector);
    int (*destroy_cq)(ibv_cq* cq);
    int (*req_notify_cq)(ibv_cq* cq, int solicited_only);
    int (*get_cq_event)(ibv_comp_channel* ch, ibv_cq** cq, void** cq_ctx);
    void (*ack_cq_events)(ibv_cq* cq, unsigned n);
    int (*poll_cq)(ibv_cq* cq, int n, ibv_wc* wc);
    // posting
    int (*post_send)(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad);
    int (*post_recv)(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad);
    /// ibv_wr_start, ibv_wr_atomic_write (8 bytes from `value`), ibv_wr_complete.
    int (*post_atomic_write)(ibv_qp* qp, std::uint64_t wr_id, unsigned wr_flags, std::uint32_t rkey,
                             std::uint64_t remote_addr, const void* value);
    /// One chain through the extended post API, under one doorbell:
    /// ibv_wr_start; per work request its wr_id and flags, then
    /// ibv_wr_rdma_write / ibv_wr_rdma_read / ibv_wr_send / ibv_wr_flush
    /// with its scatter entry or inline data; ibv_wr_complete. Returns
    /// ibv_wr_complete's result (EINVAL for an opcode it does not post).
    /// nullptr where this build's rdma-core has no ibv_wr_flush
    /// (RPM_HAVE_IBV_WR_FLUSH): the layer then has no native FLUSH.
    int (*post_chain_ex)(ibv_qp* qp, const WorkRequest* wrs, std::size_t n);
    // shared receive queues (the NVMe/RDMA target's capsule buffers)
    ibv_srq* (*create_srq)(ibv_pd* pd, ibv_srq_init_attr* attr);
    int (*destroy_srq)(ibv_srq* srq);
    int (*post_srq_recv)(ibv_srq* srq, ibv_recv_wr* wr, ibv_recv_wr** bad);
};

const Verbs& real_verbs() noexcept;

} // namespace rpm::rdma::verbs
