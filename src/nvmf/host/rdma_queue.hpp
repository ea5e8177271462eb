#pragma once
// One NVMe/RDMA queue of the host: an RC queue pair through rdma_cm, the
// request's private data naming the queue (qid, HRQSIZE, HSQSIZE) as the
// RDMA transport binding says. A command goes as a SEND of its capsule (the
// SQE, and its data when it fits in the capsule: an offset SGL); other data
// sits in a buffer registered for remote access, named by a keyed SGL, which
// the controller reads with RDMA READ or fills with RDMA WRITE before it
// SENDs the response. Commands run one at a time (a mutex serialises
// callers); responses land in receive buffers posted before connecting.
//
// The data buffer's key stays valid while the queue lives (no per-command
// registration and invalidation, which Linux's host does with fast
// registration): only the controller this queue connected to knows it.

#include "nvmf/host/queue.hpp"
#include "transport/rdma/verbs/verbs.hpp"

#include <mutex>
#include <string>
#include <vector>

namespace rpm::nvmf::host {

class RdmaHostQueue final : public Queue {
public:
    /// Resolve the address and route, make the queue pair, connect.
    /// ERRORS: errc::invalid_argument (address), errc::io_error (no route,
    /// no RDMA device, a verb failed, no answer within o.timeout, the
    /// controller rejected the request: its NVMe/RDMA status is named).
    static Result<std::unique_ptr<Queue>> open(const HostOptions& o, std::uint16_t qid, std::uint16_t depth);
    ~RdmaHostQueue() override;
    RdmaHostQueue(const RdmaHostQueue&) = delete;
    RdmaHostQueue& operator=(const RdmaHostQueue&) = delete;

    Result<Completion> submit(wire::Sqe sqe, std::span<const std::byte> out, std::span<std::byte> in) override;
    void set_in_capsule_limit(std::uint32_t bytes) override;
    bool broken() const override { return broken_; }
    void close() override;

    /// Send `capsule` as it is (an SQE, maybe with data after it) and wait
    /// for the response to the cid in its bytes 2..3: for tests of how a
    /// target takes what a well-behaved host never sends.
    /// ERRORS: as submit().
    Result<Completion> submit_raw(std::span<const std::uint8_t> capsule);

private:
    /// SEND capsule_'s first `len` bytes and wait for `cid`'s response.
    Result<Completion> send_capsule(std::size_t len, std::uint16_t cid);
    struct Buffer {
        std::vector<std::uint8_t> bytes;
        ibv_mr* mr = nullptr;
    };
    RdmaHostQueue(const HostOptions& o, std::uint16_t qid);
    // connecting (rdma_connect.cpp)
    Result<void> connect(std::uint16_t depth);
    /// The next CM event, which must be `want`. RETURN VALUE: the event's
    /// private data (a reject's status), or an error naming what came.
    Result<void> expect_cm(rdma_cm_event_type want, const char* step);
    Result<void> build(std::uint16_t depth);
    Error verb_failed(const char* verb, int err);
    // commands (rdma_queue.cpp)
    bool reg(Buffer& b, std::size_t n, int access);
    bool post_recv(std::uint32_t slot);
    /// Poll until the response to `cid` and the SEND's completion are in.
    Result<Completion> await(std::uint16_t cid);
    /// Take the CM's pending events; true if one says the connection ended
    /// (the controller disconnected, the device went), its name in closed_by_.
    bool peer_left();
    Error fail(errc e, std::string why);

    const rdma::verbs::Verbs& v_;
    HostOptions o_;
    std::uint16_t qid_;
    std::uint16_t depth_ = 0;
    rdma_event_channel* cm_ = nullptr;
    rdma_cm_id* id_ = nullptr;
    ibv_pd* pd_ = nullptr;
    ibv_comp_channel* channel_ = nullptr;
    ibv_cq* cq_ = nullptr;
    bool qp_ = false;
    unsigned unacked_ = 0;
    std::uint8_t max_rd_atom_ = 1;   ///< RDMA READs the controller may have in flight to us
    Buffer capsule_, responses_, data_;
    std::uint32_t in_capsule_ = 0;   ///< what the controller takes (IOCCSZ), within capsule_
    std::uint32_t capsule_room_ = 0; ///< data capsule_ holds after the SQE
    std::uint16_t next_cid_ = 0;
    bool broken_ = false;
    std::string closed_by_;
    std::mutex mu_;
};

} // namespace rpm::nvmf::host
