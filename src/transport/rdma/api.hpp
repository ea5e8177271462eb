// Every RDMA call the transport makes, as a table of function pointers.
//
// real_api() points at rpm's own connection and memory layer on rdma-core
// (src/transport/rdma/verbs/): librpma 1.2.0, archived upstream, could not
// chain work requests under one doorbell, send inline or post a native
// atomic write. The vocabulary (peer, memory registration, connection
// request, connection, completion queue) and the calling conventions are
// librpma's, which the transport was built on, so nothing above this table
// changed with it. This machine class has no RDMA device: the unit tests
// (tests/unit/rdma/) substitute a fake table that simulates the fabric, and
// the verbs layer itself is tested against a fake of rdma-core
// (tests/unit/rdma/verbs/), which checks every work request's fields.
#pragma once

#include <rpm/error.hpp>
#include <rpm/transport.hpp>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>

namespace rpm::rdma {

// The objects, opaque here. The verbs layer defines its own behind casts
// (verbs/objects.hpp); the unit tests' fake defines these.
struct Peer;      ///< a device's protection domain
struct PeerCfg;   ///< what the remote side declares: direct write to PMem
struct LocalMr;   ///< local registered memory
struct RemoteMr;  ///< the peer's registered memory, from its descriptor
struct ConnCfg;   ///< queue sizes and the connection timeout
struct ConnReq;   ///< a connection being set up (client) or offered (server)
struct Ep;        ///< a listening endpoint
struct Conn;      ///< an established connection: queue pair, CQ, events
struct Cq;        ///< a connection's completion queue and channel

// Return codes (librpma's values, so logs read the same).
inline constexpr int kErrUnknown = -100000;
inline constexpr int kErrNoSupp = -100001;
inline constexpr int kErrProvider = -100002;
inline constexpr int kErrNoMem = -100003;
inline constexpr int kErrInval = -100004;
inline constexpr int kErrNoCompletion = -100005;
inline constexpr int kErrNoEvent = -100006;
inline constexpr int kErrAgain = -100007;

// Posting flags.
inline constexpr int kCompletionOnError = 1 << 0;  ///< unsignaled: a completion only on failure
inline constexpr int kCompletionAlways = kCompletionOnError | (1 << 1);
/// Queue the work request without ringing the doorbell: the next ring()
/// posts every queued one as one chain (one ibv_post_send).
inline constexpr int kDeferDoorbell = 1 << 2;

// What memory is registered for (librpma's RPMA_MR_USAGE_* values).
inline constexpr int kUsageReadSrc = 1 << 0;
inline constexpr int kUsageReadDst = 1 << 1;
inline constexpr int kUsageWriteSrc = 1 << 2;
inline constexpr int kUsageWriteDst = 1 << 3;
inline constexpr int kUsageFlushVisibility = 1 << 4;
inline constexpr int kUsageFlushPersistent = 1 << 5;
inline constexpr int kUsageSend = 1 << 6;
inline constexpr int kUsageRecv = 1 << 7;

enum FlushType : int { kFlushPersistent = 0, kFlushVisibility = 1 };
enum ContextType : int { kContextLocal = 0, kContextRemote = 1 };
enum ConnEvent : int {
    kConnUndefined = -1,
    kConnEstablished = 0,
    kConnClosed,
    kConnLost,
    kConnRejected,
    kConnUnreachable,
};
/// An atomic write's destination must be aligned so (IBTA: 8 bytes).
inline constexpr std::uint64_t kAtomicWriteAlignment = 8;

/// The completion opcode of a FLUSH (IBV_WC_FLUSH, rdma-core 45 on; Debian
/// 12's v44 headers lack the name).
inline constexpr auto kWcFlush = static_cast<ibv_wc_opcode>(8);

// How a connection's atomic writes go on the wire (conn_atomic_write_kind)
// is the public rpm::AtomicWriteKind (include/rpm/transport.hpp): native
// (ibv_wr_atomic_write, where the device reports
// IB_UVERBS_DEVICE_ATOMIC_WRITE) or fenced_write; never server here.

struct Api {
    // device and peer
    int (*utils_get_ibv_context)(const char* addr, ContextType type, ibv_context** ctx);
    int (*peer_new)(ibv_context* ctx, Peer** peer);
    int (*peer_delete)(Peer** peer);
    // peer configuration (direct write to PMem)
    int (*peer_cfg_new)(PeerCfg** cfg);
    int (*peer_cfg_delete)(PeerCfg** cfg);
    int (*peer_cfg_set_direct_write_to_pmem)(PeerCfg* cfg, bool direct);
    int (*peer_cfg_get_direct_write_to_pmem)(const PeerCfg* cfg, bool* direct);
    int (*peer_cfg_get_descriptor_size)(const PeerCfg* cfg, std::size_t* n);
    int (*peer_cfg_get_descriptor)(const PeerCfg* cfg, void* desc);
    int (*peer_cfg_from_descriptor)(const void* desc, std::size_t n, PeerCfg** cfg);
    // memory registration
    int (*mr_reg)(Peer* peer, void* ptr, std::size_t size, int usage, LocalMr** mr);
    int (*mr_dereg)(LocalMr** mr);
    /// The flush usages (kUsageFlushPersistent) whose native FLUSH the
    /// registration admits: 0 where the device or this build has no native
    /// FLUSH, or the device refused it for this memory (not PM).
    int (*mr_get_native_flush)(const LocalMr* mr, int* usage);
    int (*mr_get_descriptor_size)(const LocalMr* mr, std::size_t* n);
    int (*mr_get_descriptor)(const LocalMr* mr, void* desc);
    int (*mr_remote_from_descriptor)(const void* desc, std::size_t n, RemoteMr** mr);
    int (*mr_remote_get_size)(const RemoteMr* mr, std::size_t* n);
    int (*mr_remote_get_flush_type)(const RemoteMr* mr, int* type);
    int (*mr_remote_delete)(RemoteMr** mr);
    // connection configuration
    int (*conn_cfg_new)(ConnCfg** cfg);
    int (*conn_cfg_delete)(ConnCfg** cfg);
    int (*conn_cfg_set_sq_size)(ConnCfg* cfg, std::uint32_t n);
    int (*conn_cfg_set_rq_size)(ConnCfg* cfg, std::uint32_t n);
    int (*conn_cfg_set_cq_size)(ConnCfg* cfg, std::uint32_t n);
    int (*conn_cfg_set_timeout)(ConnCfg* cfg, int ms);
    // connection set-up
    int (*conn_req_new)(Peer* peer, const char* addr, const char* port, const ConnCfg* cfg, ConnReq** req);
    int (*conn_req_delete)(ConnReq** req);
    int (*conn_req_recv)(ConnReq* req, LocalMr* dst, std::size_t offset, std::size_t len, const void* ctx);
    /// Consumes *req whatever it returns (sets it to NULL).
    int (*conn_req_connect)(ConnReq** req, const void* pdata, Conn** conn);
    int (*ep_listen)(Peer* peer, const char* addr, const char* port, Ep** ep);
    int (*ep_get_fd)(const Ep* ep, int* fd);
    /// kErrNoEvent when nothing is pending; kErrInval for an event that is
    /// not a connection request (consumed).
    int (*ep_next_conn_req)(Ep* ep, const ConnCfg* cfg, ConnReq** req);
    int (*ep_shutdown)(Ep** ep);
    // connection
    int (*conn_get_event_fd)(const Conn* conn, int* fd);
    /// kErrNoEvent when nothing is pending (the channel is non-blocking).
    int (*conn_next_event)(Conn* conn, ConnEvent* ev);
    int (*conn_apply_remote_peer_cfg)(Conn* conn, const PeerCfg* cfg);
    int (*conn_get_cq)(const Conn* conn, Cq** cq);
    int (*conn_atomic_write_kind)(const Conn* conn, AtomicWriteKind* kind);
    /// Whether the connection can post flush_native (its queue pair was
    /// made for FLUSH: the device reports it and this build can post it).
    int (*conn_native_flush)(const Conn* conn, bool* native);
    int (*conn_disconnect)(Conn* conn);
    int (*conn_delete)(Conn** conn);
    // data path: each queues one work request (kDeferDoorbell) or posts it
    int (*write)(Conn* conn, const RemoteMr* dst, std::size_t dst_off, const LocalMr* src, std::size_t src_off,
                 std::size_t len, int flags, const void* ctx);
    int (*read)(Conn* conn, LocalMr* dst, std::size_t dst_off, const RemoteMr* src, std::size_t src_off,
                std::size_t len, int flags, const void* ctx);
    /// Always rings: a native atomic write cannot join a deferred chain.
    int (*atomic_write)(Conn* conn, const RemoteMr* dst, std::size_t dst_off, const char src[8], int flags,
                        const void* ctx);
    /// kFlushPersistent: an 8-byte read at dst_off behind the writes
    /// (kErrNoSupp unless the peer declared direct write to PMem).
    int (*flush)(Conn* conn, const RemoteMr* dst, std::size_t dst_off, std::size_t len, FlushType type, int flags,
                 const void* ctx);
    /// IBTA FLUSH of [dst_off, dst_off + len) (placement type persistent
    /// or global, selectivity range): the responder makes the range durable
    /// (visible) itself. kErrNoSupp unless conn_native_flush and the region
    /// is registered for that flush type; kErrInval for an empty range or
    /// one outside the region.
    int (*flush_native)(Conn* conn, const RemoteMr* dst, std::size_t dst_off, std::size_t len, FlushType type,
                        int flags, const void* ctx);
    int (*send)(Conn* conn, const LocalMr* src, std::size_t offset, std::size_t len, int flags, const void* ctx);
    int (*recv)(Conn* conn, LocalMr* dst, std::size_t offset, std::size_t len, const void* ctx);
    /// Post every work request queued with kDeferDoorbell, as one chain.
    int (*ring)(Conn* conn);
    // completions
    int (*cq_get_fd)(const Cq* cq, int* fd);
    /// Acknowledge the channel's event and re-arm; kErrNoCompletion when
    /// no event was pending.
    int (*cq_wait)(Cq* cq);
    /// kErrNoCompletion when the queue is empty.
    int (*cq_get_wc)(Cq* cq, int num_entries, ibv_wc* wc, int* num_entries_got);
    // rdma_cm, only to find a free port for "port 0"
    int (*cm_create_id)(rdma_event_channel* ch, rdma_cm_id** id, void* ctx, rdma_port_space ps);
    int (*cm_bind_addr)(rdma_cm_id* id, sockaddr* addr);
    std::uint16_t (*cm_get_src_port)(rdma_cm_id* id);  ///< network byte order
    int (*cm_destroy_id)(rdma_cm_id* id);
};

/// The table of rpm's verbs layer over the real rdma-core.
const Api& real_api() noexcept;

/// "provider error (rdma_resolve_addr: No route to host)" for a return
/// code: with the rdma-core call and errno when the verbs layer failed on
/// this thread.
std::string error_name(int ret);

/// The rpm code for a failed data-path call: kErrInval -> invalid_argument,
/// kErrNoSupp -> unsupported, anything else -> io_error.
std::error_code code_of(int ret) noexcept;

/// An Error whose detail names what was being done and the failing call:
/// "<what>: <call> failed: <error_name(ret)>".
Error call_failure(errc code, std::string_view what, std::string_view call, int ret);

} // namespace rpm::rdma
