// The host's NVMe/RDMA queue, running commands (nvmf/rdma/queue.hpp).
#include "nvmf/host/rdma_queue.hpp"

#include "nvmf/rdma_wire.hpp"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>

namespace rpm::nvmf::host {

namespace {
// wr_id of the capsule's SEND; receives carry their response slot.
constexpr std::uint64_t send_wr = ~0ull;
// How long a response may trail the controller's disconnect.
constexpr auto closed_grace = std::chrono::milliseconds(200);
} // namespace

bool RdmaHostQueue::reg(Buffer& b, std::size_t n, int access) {
    if (b.mr && b.bytes.size() >= n) return true;
    if (b.mr) v_.dereg_mr(b.mr);
    b.mr = nullptr;
    b.bytes.assign((n + 4095) / 4096 * 4096, 0);
    b.mr = v_.reg_mr(pd_, b.bytes.data(), b.bytes.size(), access);
    return b.mr != nullptr;
}

bool RdmaHostQueue::post_recv(std::uint32_t slot) {
    ibv_sge sge{reinterpret_cast<std::uintptr_t>(responses_.bytes.data()) + std::uint64_t(slot) * wire::cqe_len,
                std::uint32_t(wire::cqe_len), responses_.mr->lkey};
    ibv_recv_wr wr{};
    wr.wr_id = slot;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    return v_.post_recv(id_->qp, &wr, &bad) == 0;
}

void RdmaHostQueue::set_in_capsule_limit(std::uint32_t bytes) { in_capsule_ = std::min(bytes, capsule_room_); }

void RdmaHostQueue::close() {
    // The queue pair goes to the error state: a waiting submit() sees its
    // work requests flushed.
    if (id_) v_.disconnect(id_);
}

Error RdmaHostQueue::fail(errc e, std::string why) {
    broken_ = true;
    if (id_) v_.disconnect(id_);
    return Error(e, o_.address + ":" + std::to_string(o_.port) + ": " + why);
}

Result<Completion> RdmaHostQueue::submit(wire::Sqe sqe, std::span<const std::byte> out, std::span<std::byte> in) {
    std::lock_guard lock(mu_);
    if (broken_) return Error(errc::io_error, "the queue's connection failed earlier");
    const auto cid = stamp(sqe, next_cid_);
    const bool inline_data = !out.empty() && out.size() <= in_capsule_;
    const auto len = out.empty() ? in.size() : out.size();
    if (inline_data) {
        sqe.set_sgl(wire::sgl_incapsule, 0, std::uint32_t(out.size()));
        std::memcpy(capsule_.bytes.data() + wire::sqe_len, out.data(), out.size());
    } else if (len > 0) {
        if (len >= (1u << 24)) return Error(errc::invalid_argument, "a transfer of 16 MiB or more (keyed SGL length)");
        if (!reg(data_, len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE))
            return fail(errc::io_error, "ibv_reg_mr of the data buffer: " + std::string(std::strerror(errno)));
        if (!out.empty()) std::memcpy(data_.bytes.data(), out.data(), out.size());
        sqe.set_sgl(rdma_wire::sgl_keyed, reinterpret_cast<std::uintptr_t>(data_.bytes.data()), 0);
        // Keyed data block: length in bytes 8..10, key in 11..14.
        sqe.b[32] = std::uint8_t(len);
        sqe.b[33] = std::uint8_t(len >> 8);
        sqe.b[34] = std::uint8_t(len >> 16);
        wire::put32(&sqe.b[35], data_.mr->rkey);
    } else {
        // No data: a null keyed SGL, as Linux's host sends (its target
        // takes an offset SGL only for writes).
        sqe.set_sgl(rdma_wire::sgl_keyed, 0, 0);
    }
    std::memcpy(capsule_.bytes.data(), sqe.b.data(), wire::sqe_len);
    auto c = send_capsule(wire::sqe_len + (inline_data ? out.size() : 0), cid);
    if (c && !in.empty() && c->status == 0) std::memcpy(in.data(), data_.bytes.data(), in.size());
    return c;
}

Result<Completion> RdmaHostQueue::submit_raw(std::span<const std::uint8_t> capsule) {
    std::lock_guard lock(mu_);
    if (broken_) return Error(errc::io_error, "the queue's connection failed earlier");
    if (capsule.size() > capsule_.bytes.size()) return Error(errc::invalid_argument, "a capsule larger than the buffer");
    std::memcpy(capsule_.bytes.data(), capsule.data(), capsule.size());
    const auto cid = capsule.size() >= 4 ? wire::get16(&capsule[2]) : std::uint16_t(0);
    return send_capsule(capsule.size(), cid);
}

Result<Completion> RdmaHostQueue::send_capsule(std::size_t len, std::uint16_t cid) {
    ibv_sge sge{reinterpret_cast<std::uintptr_t>(capsule_.bytes.data()), std::uint32_t(len), capsule_.mr->lkey};
    ibv_send_wr wr{};
    wr.wr_id = send_wr;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_send_wr* bad = nullptr;
    if (v_.post_send(id_->qp, &wr, &bad) != 0) return fail(errc::io_error, "ibv_post_send failed");
    return await(cid);
}

Result<Completion> RdmaHostQueue::await(std::uint16_t cid) {
    const auto deadline = std::chrono::steady_clock::now() + o_.timeout;
    bool sent = false, armed = false;
    std::optional<Completion> done;
    // Set when the controller disconnects: a response it sent just before
    // may still be on its way (the CM's message and the queue pair's are not
    // ordered), so the CQ is polled a little longer, then the wait ends
    // instead of running into the timeout.
    std::optional<std::chrono::steady_clock::time_point> closed_at;
    while (!sent || !done) {
        ibv_wc wc[8];
        const int n = v_.poll_cq(cq_, 8, wc);
        if (n < 0) return fail(errc::io_error, "ibv_poll_cq failed");
        for (int i = 0; i < n; ++i) {
            const auto& w = wc[i];
            if (w.status != IBV_WC_SUCCESS)
                return fail(errc::io_error, std::string("the connection failed: ") + ::ibv_wc_status_str(w.status));
            if (w.wr_id == send_wr) {
                sent = true;
                continue;
            }
            const auto slot = std::uint32_t(w.wr_id);
            if (slot >= depth_ || w.byte_len < wire::cqe_len)
                return fail(errc::protocol_error, "a response of " + std::to_string(w.byte_len) + " bytes");
            wire::Cqe cqe;
            std::memcpy(cqe.b.data(), responses_.bytes.data() + std::size_t(slot) * wire::cqe_len, wire::cqe_len);
            if (!post_recv(slot)) return fail(errc::io_error, "ibv_post_recv failed");
            if (cqe.cid() != cid)
                return fail(errc::protocol_error, "a response for cid " + std::to_string(cqe.cid()) + ", expected " +
                                                      std::to_string(cid));
            done = Completion{cqe.status(), cqe.dw0(), cqe.dw1()};
        }
        if (n > 0) continue;
        // Arm, then poll once more before sleeping: a completion that came
        // between the last poll and the arming raises no event.
        if (!armed) {
            if (v_.req_notify_cq(cq_, 0) != 0) return fail(errc::io_error, "ibv_req_notify_cq failed");
            armed = true;
            continue;
        }
        armed = false;
        const auto now = std::chrono::steady_clock::now();
        if (closed_at && now - *closed_at >= closed_grace)
            return fail(errc::io_error, "the controller closed the connection (" + closed_by_ + ") before answering");
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
        if (left.count() <= 0) return fail(errc::io_error, "no reply within the timeout");
        pollfd p[2] = {{channel_->fd, POLLIN, 0}, {cm_->fd, POLLIN, 0}};
        if (::poll(p, 2, int(std::min<long long>(left.count(), closed_at ? 10 : 100))) > 0) {
            ibv_cq* cq = nullptr;
            void* ctx = nullptr;
            while (v_.get_cq_event(channel_, &cq, &ctx) == 0) ++unacked_;
            if (!closed_at && peer_left()) closed_at = std::chrono::steady_clock::now();
        }
    }
    return *done;
}

bool RdmaHostQueue::peer_left() {
    rdma_cm_event* ev = nullptr;
    bool left = false;
    while (v_.get_cm_event(cm_, &ev) == 0) {
        const auto e = ev->event;
        v_.ack_cm_event(ev);
        if (e == RDMA_CM_EVENT_DISCONNECTED || e == RDMA_CM_EVENT_DEVICE_REMOVAL ||
            e == RDMA_CM_EVENT_TIMEWAIT_EXIT) {
            closed_by_ = ::rdma_event_str(e);
            left = true;
        }
    }
    return left;
}

} // namespace rpm::nvmf::host
