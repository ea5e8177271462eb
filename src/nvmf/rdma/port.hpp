#pragma once
// NVMe/RDMA on the target: the listening rdma_cm id, the shared receive
// queue the command capsules land in, and the connection manager's events
// on a thread of the port's own.
//
// Seed 004 makes a subsystem an SRQ and binds each host queue pair to it.
// A queue pair is bound to its SRQ when it is created, at the connection
// request, before its Connect command names the subsystem; so the SRQ
// belongs to the port, and with one subsystem on a port (rpm-nvmf's usual
// form) it is that subsystem's. The engine's subsystem, backends and
// namespace map are made at start, and each I/O queue is enabled on the
// engine after its Connect (QueueCommands), as the seed draws them.

#include "nvmf/serve/fabric.hpp"
#include "nvmf/rdma_wire.hpp"
#include "transport/rdma/verbs/verbs.hpp"

#include <rpm/result.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace rpm::nvmf::target {

class RdmaQueue;

/// What the port and its queues need.
struct RdmaEnv {
    const rdma::verbs::Verbs* v = nullptr;
    QueueEnv queue;
    std::uint16_t max_io_queues = 8;
    std::uint16_t max_queue_size = 128;  ///< I/O queue entries (CAP.MQES + 1)
    std::uint32_t in_capsule_data = 8192;
};

/// The protection domain, the SRQ and its capsule buffers (64-byte SQE
/// plus the in-capsule data an I/O queue takes), shared by the port's
/// queue pairs. Thread-safe (the provider serializes posts to an SRQ).
class CapsulePool {
public:
    /// ERRORS: errc::io_error naming the verb that failed.
    static Result<std::shared_ptr<CapsulePool>> make(const rdma::verbs::Verbs& v, ibv_context* ctx, std::uint32_t entries,
                                                     std::uint32_t capsule_len);
    ~CapsulePool();
    CapsulePool(const CapsulePool&) = delete;
    CapsulePool& operator=(const CapsulePool&) = delete;

    ibv_context* context() const { return ctx_; }
    ibv_pd* pd() const { return pd_; }
    ibv_srq* srq() const { return srq_; }
    std::uint32_t entries() const { return entries_; }
    /// The first `len` bytes of buffer `slot` (as a receive completion reported them).
    std::span<const std::uint8_t> capsule(std::uint32_t slot, std::uint32_t len) const;
    /// Give buffer `slot` back to the SRQ. RETURN VALUE: false when the post failed.
    bool repost(std::uint32_t slot);

private:
    CapsulePool() = default;
    const rdma::verbs::Verbs* v_ = nullptr;
    ibv_context* ctx_ = nullptr;
    ibv_pd* pd_ = nullptr;
    ibv_srq* srq_ = nullptr;
    ibv_mr* mr_ = nullptr;
    std::uint32_t entries_ = 0;
    std::uint32_t capsule_len_ = 0;
    std::vector<std::uint8_t> buf_;
};

class RdmaPort final : public FabricPort {
public:
    /// Takes a new queue into the target's bookkeeping and its Workers.
    /// RETURN VALUE: false when the target refuses it (a limit): the port
    /// rejects the connection.
    using Admit = std::function<bool(const std::shared_ptr<RdmaQueue>&)>;

    /// Bind `address`:`port` (port 0: the CM chooses), make the pool,
    /// listen. Requests wait in the connection manager until start().
    /// ERRORS: errc::io_error (no RDMA device at the address, a verb failed).
    static Result<std::unique_ptr<RdmaPort>> listen(const RdmaEnv& env, const std::string& address, std::uint16_t port,
                                                    Admit admit);
    /// Stops the event thread and frees the listener; the queues still
    /// open are destroyed here (the target has ended them first).
    ~RdmaPort() override;
    RdmaPort(const RdmaPort&) = delete;
    RdmaPort& operator=(const RdmaPort&) = delete;

    [[nodiscard]] std::uint16_t port() const override { return port_; }
    /// Take requests, on the port's thread, for the queues of `registry`.
    void start(Registry* registry) override;
    /// End the event thread (before the target ends its queues).
    void stop() override;

private:
    RdmaPort() = default;
    void run();
    void on_event(rdma_cm_event_type type, rdma_cm_id* id, std::span<const std::uint8_t> pdata,
                  std::uint8_t initiator_depth, std::uint8_t responder_resources);
    void on_request(rdma_cm_id* id, std::span<const std::uint8_t> pdata, std::uint8_t initiator_depth,
                    std::uint8_t responder_resources);
    void reject(rdma_cm_id* id, rdma_wire::CmStatus status, const char* why);
    RdmaQueue* find(rdma_cm_id* id) const;

    RdmaEnv env_;
    Admit admit_;
    rdma_event_channel* channel_ = nullptr;
    rdma_cm_id* listen_id_ = nullptr;
    std::shared_ptr<CapsulePool> pool_;
    std::uint8_t max_rd_atom_ = 1;       ///< the device's RDMA READs in flight per QP, as initiator
    std::uint16_t port_ = 0;
    std::vector<std::shared_ptr<RdmaQueue>> queues_;  // the event thread's (then the destructor's)
    std::atomic<bool> stopping_{false};
    std::thread thread_;
};

} // namespace rpm::nvmf::target
