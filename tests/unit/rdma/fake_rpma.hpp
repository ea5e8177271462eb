// A fake of the transport's Api (rpm::rdma::Api, once librpma's calls) for
// machines without an RDMA device.
//
// It implements rpm::rdma::Api over an in-process "fabric": connection
// requests find listening endpoints by port, sends land in the peer's posted
// receives, RDMA writes / reads / atomic writes copy between registered
// memory (checking bounds and usage, as an RNIC checks rkeys), rpma_flush
// behaves like the verbs layer (kErrNoSupp unless the connection's remote
// peer cfg declares direct write to PMem), and completions and connection
// events arrive through eventfds, so the transport's real poll() loops run.
// Every call is recorded with its arguments; tests can make the next call of
// a kind fail, fail a completion, hold completions back, or drop a link.
#pragma once

#include "transport/rdma/api.hpp"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace rpm::rdma {

// The Api's opaque types, completed for the fake (the verbs layer keeps
// its own objects behind casts, so the two never meet).
struct Peer {
    int id = 0;
};
struct PeerCfg {
    bool direct = false;
};
struct LocalMr {
    void* ptr = nullptr;
    std::size_t size = 0;
    int usage = 0;
    std::uint32_t id = 0;
    Peer* peer = nullptr;
    int native_flush = 0;  ///< the flush usages its access admits a native FLUSH for
};
struct RemoteMr {
    std::uint32_t id = 0;
    std::size_t size = 0;
    int usage = 0;
};
struct ConnCfg {
    std::uint32_t sq = 10, rq = 10, cq = 10;
    int timeout = 1000;
};
struct Cq {
    int fd = -1;
    std::deque<ibv_wc> wcs;
};
struct FakeRecv {
    LocalMr* mr = nullptr;
    std::size_t offset = 0;
    std::size_t len = 0;
    const void* ctx = nullptr;
};
struct Conn {
    Peer* peer = nullptr;
    Conn* remote = nullptr;
    Cq cq;
    int event_fd = -1;
    std::deque<ConnEvent> events;
    std::deque<FakeRecv> recvs;
    std::deque<std::vector<std::byte>> unmatched;  // sends waiting for a receive
    std::vector<ibv_wc> held;                      // send-queue completions held back
    bool hold = false;
    bool direct_write = false;
    bool disconnected = false;
    bool passive = false;
};
struct ConnReq {
    Conn* conn = nullptr;
    Conn* client = nullptr;  // passive side: the connecting conn
    bool passive = false;
    std::string addr;  // active side: where to connect
    std::string port;
};
struct Ep {
    std::string addr;
    std::string port;
    int fd = -1;
    Peer* peer = nullptr;
    std::deque<Conn*> incoming;
};

} // namespace rpm::rdma

namespace rpm::rdma::fake {

struct WriteCall {
    Conn* conn;
    const RemoteMr* dst;
    std::size_t dst_offset;
    const LocalMr* src;
    std::size_t src_offset;
    std::size_t len;
    int flags;
    const void* ctx;
    std::vector<std::byte> data;  // what the source held when posted
};
struct ReadCall {
    Conn* conn;
    LocalMr* dst;
    std::size_t dst_offset;
    const RemoteMr* src;
    std::size_t src_offset;
    std::size_t len;
    int flags;
    const void* ctx;
};
struct AtomicCall {
    Conn* conn;
    const RemoteMr* dst;
    std::size_t dst_offset;
    std::uint64_t value;
    int flags;
    const void* ctx;
};
struct FlushCall {
    Conn* conn;
    const RemoteMr* dst;
    std::size_t dst_offset;
    std::size_t len;
    FlushType type;
    int flags;
    const void* ctx;
    bool direct_write;  // the connection's applied peer cfg at the time
};
struct SendCall {
    Conn* conn;
    const LocalMr* src;
    std::size_t offset;
    std::size_t len;
    int flags;
    const void* ctx;
    std::vector<std::byte> bytes;
    bool passive;  // sent by the server side
};
struct RecvCall {
    Conn* conn;
    LocalMr* dst;
    std::size_t offset;
    std::size_t len;
    const void* ctx;
    bool before_connect;
};
struct MrRegCall {
    Peer* peer;
    void* ptr;
    std::size_t size;
    int usage;
};
struct ConnReqCall {
    std::string addr;
    std::string port;
    ConnCfg cfg;
};

class Fabric {
public:
    Fabric();  ///< becomes the current fabric
    ~Fabric();
    Fabric(const Fabric&) = delete;
    Fabric& operator=(const Fabric&) = delete;

    static const Api& api() noexcept;
    static Fabric& current();

    // Configuration (set before use, or under lock()).
    bool no_device = false;
    /// What conn_atomic_write_kind reports (the device's capability).
    bool native_atomic_write = false;
    /// The device (and build) have native FLUSH: conn_native_flush reports
    /// it, and memory registered for persistent flush takes it.
    bool native_flush = false;
    /// Registrations take no native FLUSH even so (rxe on memory that is
    /// not PM): mr_get_native_flush reports 0 and a FLUSH to them fails
    /// with IBV_WC_REM_ACCESS_ERR.
    bool refuse_native_flush_mr = false;
    std::string device_name = "fake0";
    /// A poll that finds a completion queue empty takes this long (a slow
    /// device): it stretches a caller's bounded spin (ClientConn::spin_own)
    /// past what a test needs to do meanwhile. Any time.
    std::atomic<std::chrono::microseconds> empty_poll_delay{std::chrono::microseconds(0)};
    /// The next call named here ("rpma_write", "rpma_mr_reg", ...) returns the code.
    void fail_next(const std::string& call, int code);
    /// The next completion of this kind ("write", "read", "atomic", "flush",
    /// "native_flush", "send") fails.
    void fail_wc_next(const std::string& kind, ibv_wc_status status);
    /// Hold back the send-queue completions of every client connection.
    void hold_client_completions(bool on);
    /// Hold back the send-queue completions of the server's connections
    /// open now (their send slots stay taken until release_held()).
    void hold_server_completions(bool on);
    void release_held();
    /// Both ends of every connection see kConnLost.
    void drop_all();
    /// Under one lock: the held completions go into their queues, both ends
    /// of every connection see kConnLost, and only then does any completion
    /// channel fire, so a client finds its completions and the loss at once.
    void release_held_then_drop_all();
    /// Deliver raw bytes as a message to the first server-side connection.
    void inject_to_server(std::vector<std::byte> bytes);

    // Records (copies, taken under the lock).
    std::vector<WriteCall> writes() const;
    std::vector<ReadCall> reads() const;
    std::vector<AtomicCall> atomics() const;
    std::vector<FlushCall> flushes() const;
    std::vector<FlushCall> native_flushes() const;  ///< flush_native calls
    std::vector<SendCall> sends() const;
    std::vector<RecvCall> recvs() const;
    std::vector<MrRegCall> mr_regs() const;
    std::vector<std::pair<PeerCfg*, bool>> peer_cfg_sets() const;
    std::vector<std::pair<Conn*, bool>> applied_peer_cfgs() const;
    std::vector<ConnReqCall> conn_reqs() const;
    std::vector<std::string> calls() const;  ///< every call's name, in order
    std::size_t live_objects() const;        ///< peers, MRs, conns, eps, cfgs not yet freed

    // Internal state, under mu_ (used by the fake's functions).
    mutable std::mutex mu_;
    std::map<std::string, int> fail_calls_;
    std::map<std::string, ibv_wc_status> fail_wcs_;
    bool hold_ = false;
    std::vector<WriteCall> writes_;
    std::vector<ReadCall> reads_;
    std::vector<AtomicCall> atomics_;
    std::vector<FlushCall> flushes_;
    std::vector<FlushCall> native_flushes_;
    std::vector<SendCall> sends_;
    std::vector<RecvCall> recvs_;
    std::vector<MrRegCall> mr_regs_;
    std::vector<std::pair<PeerCfg*, bool>> peer_cfg_sets_;
    std::vector<std::pair<Conn*, bool>> applied_;
    std::vector<ConnReqCall> conn_reqs_;
    std::vector<std::string> calls_;
    std::map<std::uint32_t, LocalMr*> mrs_;
    std::vector<Conn*> conns_;
    std::vector<Ep*> eps_;
    std::uint32_t next_mr_id_ = 1;
    std::uint16_t next_port_ = 20000;
    long live_ = 0;
    ibv_device device_{};
    ibv_context context_{};
};

/// Take a failure armed with fail_next (0: none). Caller holds mu_.
int take_failure(Fabric& f, const std::string& call);

} // namespace rpm::rdma::fake
