// The host's NVMe/RDMA queue, connecting (nvmf/rdma/queue.hpp):
// address and route resolved, the queue pair and its buffers made, the
// request sent with the binding's private data, the answer checked.
#include "nvmf/host/rdma_queue.hpp"

#include "nvmf/rdma_wire.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>

namespace rpm::nvmf::host {

namespace {

// Capsule data this host sends at most (the target's IOCCSZ may allow less).
constexpr std::uint32_t max_capsule_data = 8192;

const char* cm_status_text(std::uint16_t s) {
    switch (s) {
    case 0x01: return "invalid private data length";
    case 0x02: return "invalid RECFMT";
    case 0x03: return "invalid QID";
    case 0x04: return "invalid HSQSIZE";
    case 0x05: return "invalid HRQSIZE";
    case 0x06: return "no resources";
    case 0x07: return "invalid IRD";
    case 0x08: return "invalid ORD";
    case 0x09: return "invalid CNTLID";
    default: return "unknown status";
    }
}

} // namespace

RdmaHostQueue::RdmaHostQueue(const HostOptions& o, std::uint16_t qid)
    : v_(rdma::verbs::real_verbs()), o_(o), qid_(qid) {}

Result<std::unique_ptr<Queue>> RdmaHostQueue::open(const HostOptions& o, std::uint16_t qid, std::uint16_t depth) {
    std::unique_ptr<RdmaHostQueue> q(new RdmaHostQueue(o, qid));
    if (auto ok = q->connect(depth); !ok) return ok.error();
    return std::unique_ptr<Queue>(std::move(q));
}

RdmaHostQueue::~RdmaHostQueue() {
    if (id_ && !broken_) v_.disconnect(id_);
    if (qp_) v_.destroy_qp(id_);
    if (cq_) {
        if (unacked_) v_.ack_cq_events(cq_, unacked_);
        v_.destroy_cq(cq_);
    }
    if (channel_) v_.destroy_comp_channel(channel_);
    for (auto* b : {&capsule_, &responses_, &data_})
        if (b->mr) v_.dereg_mr(b->mr);
    if (pd_) v_.dealloc_pd(pd_);
    if (id_) v_.destroy_id(id_);
    if (cm_) v_.destroy_event_channel(cm_);
}

Error RdmaHostQueue::verb_failed(const char* verb, int err) {
    broken_ = true;
    return Error(errc::io_error, o_.address + ":" + std::to_string(o_.port) + ": " + verb + ": " +
                                     std::strerror(err ? err : EIO));
}

Result<void> RdmaHostQueue::expect_cm(rdma_cm_event_type want, const char* step) {
    const auto deadline = std::chrono::steady_clock::now() + o_.timeout;
    rdma_cm_event* ev = nullptr;
    while (v_.get_cm_event(cm_, &ev) != 0) {
        if (errno != EAGAIN) return verb_failed("rdma_get_cm_event", errno);
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        pollfd p{cm_->fd, POLLIN, 0};
        if (left.count() <= 0 || ::poll(&p, 1, int(left.count())) == 0)
            return fail(errc::io_error, std::string(step) + ": no answer within the timeout");
    }
    const auto got = ev->event;
    std::uint16_t reject = 0;
    const auto* pd = static_cast<const std::uint8_t*>(ev->param.conn.private_data);
    if (got == RDMA_CM_EVENT_REJECTED && pd && ev->param.conn.private_data_len >= rdma_wire::cm_rej_len)
        reject = wire::get16(pd + 2);
    const int status = ev->status;
    v_.ack_cm_event(ev);
    if (got == want) return {};
    std::string why = std::string(step) + ": " + ::rdma_event_str(got);
    if (got == RDMA_CM_EVENT_REJECTED)
        why += reject ? std::string(" by the controller: NVMe/RDMA status ") + std::to_string(reject) + " (" +
                            cm_status_text(reject) + ")"
                      : " (no NVMe/RDMA target listens there, status " + std::to_string(status) + ")";
    return fail(errc::io_error, why);
}

Result<void> RdmaHostQueue::connect(std::uint16_t depth) {
    depth_ = depth;
    if (!(cm_ = v_.create_event_channel())) return verb_failed("rdma_create_event_channel", errno);
    if (::fcntl(cm_->fd, F_SETFL, ::fcntl(cm_->fd, F_GETFL) | O_NONBLOCK) != 0) return verb_failed("fcntl", errno);
    if (v_.create_id(cm_, &id_, nullptr, RDMA_PS_TCP) != 0) return verb_failed("rdma_create_id", errno);
    addrinfo hints{};
    hints.ai_family = AF_INET;
    hints.ai_flags = AI_NUMERICHOST;
    addrinfo* ai = nullptr;
    const auto service = std::to_string(o_.port);
    if (int rc = ::getaddrinfo(o_.address.c_str(), service.c_str(), &hints, &ai); rc != 0)
        return Error(errc::invalid_argument, "address '" + o_.address + "': " + ::gai_strerror(rc));
    const int ms = int(std::min<long long>(o_.timeout.count(), 60000));
    const int resolved = v_.resolve_addr(id_, nullptr, ai->ai_addr, ms);
    const int err = errno;
    ::freeaddrinfo(ai);
    if (resolved != 0) return verb_failed("rdma_resolve_addr", err);
    if (auto ok = expect_cm(RDMA_CM_EVENT_ADDR_RESOLVED, "resolving the address"); !ok) return ok;
    if (v_.resolve_route(id_, ms) != 0) return verb_failed("rdma_resolve_route", errno);
    if (auto ok = expect_cm(RDMA_CM_EVENT_ROUTE_RESOLVED, "resolving the route"); !ok) return ok;
    if (auto ok = build(depth); !ok) return ok;
    std::array<std::uint8_t, rdma_wire::cm_req_len> req{};
    wire::put16(&req[2], qid_);
    wire::put16(&req[4], depth);                      // HRQSIZE: the responses we posted for
    wire::put16(&req[6], std::uint16_t(depth - 1));   // HSQSIZE, 0's based
    rdma_conn_param param{};
    param.private_data = req.data();
    param.private_data_len = std::uint8_t(req.size());
    // The controller reads and writes our buffer: it is the initiator of
    // RDMA READs, we only answer them.
    param.responder_resources = max_rd_atom_;
    param.initiator_depth = 0;
    param.retry_count = 7;
    param.rnr_retry_count = 7;
    param.flow_control = 1;
    if (v_.connect(id_, &param) != 0) return verb_failed("rdma_connect", errno);
    return expect_cm(RDMA_CM_EVENT_ESTABLISHED, "connecting");
}

Result<void> RdmaHostQueue::build(std::uint16_t depth) {
    ibv_context* ctx = id_->verbs;
    ibv_device_attr_ex attr{};
    if (int rc = v_.query_device_ex(ctx, &attr); rc != 0) return verb_failed("ibv_query_device_ex", rc);
    max_rd_atom_ = std::uint8_t(std::clamp(attr.orig_attr.max_qp_rd_atom, 1, 16));
    if (!(pd_ = v_.alloc_pd(ctx))) return verb_failed("ibv_alloc_pd", errno);
    if (!(channel_ = v_.create_comp_channel(ctx))) return verb_failed("ibv_create_comp_channel", errno);
    if (::fcntl(channel_->fd, F_SETFL, ::fcntl(channel_->fd, F_GETFL) | O_NONBLOCK) != 0)
        return verb_failed("fcntl", errno);
    // A SEND per command (one at a time) and a receive per response slot.
    if (!(cq_ = v_.create_cq(ctx, int(depth) + 4, nullptr, channel_, 0))) return verb_failed("ibv_create_cq", errno);
    ibv_qp_init_attr_ex qa{};
    qa.qp_type = IBV_QPT_RC;
    qa.send_cq = cq_;
    qa.recv_cq = cq_;
    qa.cap.max_send_wr = 4;
    qa.cap.max_recv_wr = depth;
    qa.cap.max_send_sge = 1;
    qa.cap.max_recv_sge = 1;
    qa.comp_mask = IBV_QP_INIT_ATTR_PD;
    qa.pd = pd_;
    if (v_.create_qp_ex(id_, &qa) != 0) return verb_failed("rdma_create_qp_ex", errno);
    qp_ = true;
    capsule_room_ = max_capsule_data;
    if (!reg(capsule_, wire::sqe_len + capsule_room_, IBV_ACCESS_LOCAL_WRITE) ||
        !reg(responses_, std::size_t(depth) * wire::cqe_len, IBV_ACCESS_LOCAL_WRITE))
        return verb_failed("ibv_reg_mr", errno);
    for (std::uint32_t i = 0; i < depth; ++i)
        if (!post_recv(i)) return verb_failed("ibv_post_recv", errno);
    return {};
}

} // namespace rpm::nvmf::host
