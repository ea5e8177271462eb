#pragma once
// One NVMe/RDMA queue pair on the target: one queue (admin or I/O) of one
// controller. Command capsules arrive as RDMA SENDs into the port's shared
// receive queue (port.hpp); the queue's own completion queue
// reports them, and its completion channel is the descriptor the Workers
// wait on (no thread per queue). Host-to-controller data is pulled by RDMA
// READ from the command's keyed SGL, controller-to-host data pushed by RDMA
// WRITE chained before the response's SEND (with invalidate when the host
// asked). What a command does is QueueCommands' (serve/queue_commands.hpp).
// NVMe/RDMA's FabricQueue (serve/fabric.hpp).
//
// Commands of a queue run on the worker serving it: those that arrived
// together as one round (their reads and in-capsule writes at the backend
// at once), answered in order. Capsules that arrive while a command waits
// for its RDMA READ wait in arrived_ for the next round.

#include "nvmf/rdma/port.hpp"
#include "nvmf/serve/fabric.hpp"
#include "nvmf/rdma_wire.hpp"
#include "transport/rdma/verbs/verbs.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rpm::nvmf::target {

/// A registered buffer that grows on demand (data of RDMA READ and WRITE).
struct RdmaBuffer {
    std::vector<std::uint8_t> bytes;
    ibv_mr* mr = nullptr;
};

class RdmaQueue final : public QueueBase {
public:
    /// `id` carries the connection request: the queue creates its CQ and
    /// its QP on the pool's SRQ. RETURN VALUE of ok(): false when that
    /// failed (error() says why); the caller rejects the request.
    RdmaQueue(const RdmaEnv& env, rdma_cm_id* id, std::shared_ptr<CapsulePool> pool, const rdma_wire::CmRequest& req);
    ~RdmaQueue() override;
    RdmaQueue(const RdmaQueue&) = delete;
    RdmaQueue& operator=(const RdmaQueue&) = delete;

    bool ok() const { return error_.empty(); }
    const std::string& error() const { return error_; }
    rdma_cm_id* id() const { return id_; }
    /// For a request the port rejects: the queue pair goes now, and the
    /// cm id is the port's to destroy (the destructor leaves it).
    void release_id();

    // FabricQueue: serving and bookkeeping (the rest is QueueBase's)
    int fd() const override;
    bool serve() override;
    void close() override;

private:
    struct Arrival {
        std::uint32_t slot;  ///< the pool's buffer
        std::uint32_t len;   ///< bytes received
    };
    bool build(const rdma_wire::CmRequest& req);
    /// Poll the CQ once: arrivals queued, sends and READs accounted.
    /// RETURN VALUE: completions seen, or -1 when the queue failed.
    int poll_once();
    /// Wait until the CQ has something (or close()). RETURN VALUE: false on close or failure.
    bool wait_cq();
    /// Poll (and wait) until done() holds. RETURN VALUE: false when the queue failed or closed.
    template <class Done>
    bool poll_until(Done done);
    /// Take the channel's events (acked in the destructor) and close()'s wake.
    void consume_events();
    /// Run every capsule that has arrived, together (QueueCommands::on_commands).
    bool run_arrivals();
    bool end();
    /// Before end() disconnects: wait (at most 200 ms) for the SENDs already
    /// posted, so that the last answers (an AUTH_Failure1 before the queue
    /// ends) reach the host instead of being flushed by the queue pair's
    /// error state. A host that stopped reading does not hold the queue.
    void drain_sends();
    /// FabricQueue: moving data and completions (queue_data.cpp). pull()
    /// waits for its RDMA READ: never Pulled::later.
    bool complete(const wire::Sqe& sqe, const wire::Cqe& cqe, std::span<const std::uint8_t> c2h) override;
    Pulled pull(const wire::Sqe& sqe, std::span<std::uint8_t> into, bool& intact) override;
    bool ensure(RdmaBuffer& b, std::size_t n);
    /// Copy a response's data into out_. RETURN VALUE: its offset there, or
    /// nothing when waiting for out_ to be free failed.
    std::optional<std::size_t> place_out(std::span<const std::uint8_t> c2h);
    /// A send-side completion (READ, or a SEND and the WRITE before it).
    void on_send_done(std::uint64_t wr_id, bool ok);
    /// Send-side wr_ids have bit 63 set; receives carry the pool's slot.
    static constexpr std::uint64_t wr_send = 1ull << 63, wr_read = 1ull << 9, wr_frees_out = 1ull << 8;
    static bool is_send(std::uint64_t wr_id) { return (wr_id & wr_send) != 0; }
    bool room_to_send(std::uint32_t wrs);

    RdmaEnv env_;
    int epoll_ = -1;                 ///< the channel and wake_: what the Workers wait on
    int wake_ = -1;                  ///< an eventfd close() writes
    rdma_cm_id* id_ = nullptr;
    std::shared_ptr<CapsulePool> pool_;
    ibv_comp_channel* channel_ = nullptr;
    ibv_cq* cq_ = nullptr;
    bool qp_ = false;
    unsigned unacked_events_ = 0;
    std::string error_;
    std::uint32_t send_depth_ = 0;   ///< send WRs the QP holds
    std::uint32_t sends_out_ = 0;    ///< posted, completion not yet seen (signaled ones count all they cover)
    std::uint32_t unsignaled_ = 0;   ///< WRITEs posted unsignaled since the last signaled SEND
    bool read_done_ = false;
    bool read_failed_ = false;
    bool ended_ = false;
    std::deque<Arrival> arrived_;
    RdmaBuffer in_, out_;            ///< READ lands in in_, WRITEs leave from out_
    std::size_t out_used_ = 0;       ///< out_'s bytes taken since it was last free
    std::uint32_t out_sends_ = 0;    ///< SENDs whose WRITE reads out_, not yet completed
    std::vector<Arrival> round_;     ///< the capsules run together (kept: no allocation per round)
    std::vector<Capsule> capsules_;
};

} // namespace rpm::nvmf::target
