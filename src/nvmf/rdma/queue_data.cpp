// An NVMe/RDMA queue's data and completions (FabricQueue): RDMA READ
// from the host's keyed SGL, RDMA WRITE chained before the response SEND.
#include "nvmf/rdma/queue.hpp"
#include "core/log.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>

namespace rpm::nvmf::target {

bool RdmaQueue::ensure(RdmaBuffer& b, std::size_t n) {
    if (b.mr && b.bytes.size() >= n) return true;
    if (b.mr) env_.v->dereg_mr(b.mr);
    b.mr = nullptr;
    b.bytes.assign((n + 4095) / 4096 * 4096, 0);
    b.mr = env_.v->reg_mr(pool_->pd(), b.bytes.data(), b.bytes.size(), IBV_ACCESS_LOCAL_WRITE);
    if (!b.mr)
        rpm::detail::logf(LogLevel::debug, "nvmf rdma", "qid %u: ibv_reg_mr of %zu bytes: %s", commands_.qid(), b.bytes.size(),
                     std::strerror(errno));
    return b.mr != nullptr;
}

void RdmaQueue::on_send_done(std::uint64_t wr_id, bool ok) {
    sends_out_ -= std::min<std::uint32_t>(sends_out_, std::uint32_t(wr_id & 0xFF));
    if ((wr_id & wr_frees_out) && out_sends_ > 0) --out_sends_;
    if (wr_id & wr_read) {
        read_done_ = true;
        read_failed_ = !ok;
    }
}

template <class Done>
bool RdmaQueue::poll_until(Done done) {
    while (!done()) {
        const int n = poll_once();
        if (n < 0 || (n == 0 && !wait_cq())) return false;
    }
    return true;
}

bool RdmaQueue::room_to_send(std::uint32_t wrs) {
    return poll_until([&] { return sends_out_ + wrs <= send_depth_; });
}

Pulled RdmaQueue::pull(const wire::Sqe& sqe, std::span<std::uint8_t> into, bool& intact) {
    const auto sgl = rdma_wire::decode_sgl(sqe, {});
    if (!ensure(in_, into.size()) || !room_to_send(1)) return Pulled::failed;
    ibv_sge sge{reinterpret_cast<std::uintptr_t>(in_.bytes.data()), std::uint32_t(into.size()), in_.mr->lkey};
    ibv_send_wr wr{};
    wr.wr_id = wr_send | wr_read | 1;
    wr.opcode = IBV_WR_RDMA_READ;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.wr.rdma.remote_addr = sgl.addr;
    wr.wr.rdma.rkey = sgl.key;
    ibv_send_wr* bad = nullptr;
    if (env_.v->post_send(id_->qp, &wr, &bad) != 0) return Pulled::failed;
    ++sends_out_;
    read_done_ = read_failed_ = false;
    // Capsules that arrive meanwhile wait in arrived_, in order.
    if (!poll_until([&] { return read_done_; })) return Pulled::failed;
    if (read_failed_) return Pulled::failed;
    std::memcpy(into.data(), in_.bytes.data(), into.size());
    intact = true;
    return Pulled::done;
}

bool RdmaQueue::complete(const wire::Sqe& sqe, const wire::Cqe& done, std::span<const std::uint8_t> c2h) {
    wire::Cqe cqe = done;
    // This command's own SGL: a batch answers several in a row.
    const auto sgl = rdma_wire::decode_sgl(sqe, {});
    if (!c2h.empty() && sgl.data.where != CommandData::Where::host) {
        // Data for the host, but the command named no host memory (an
        // offset SGL): NVMe/RDMA has nowhere to put it.
        cqe.set_status(wire::sc::sgl_descriptor_type_invalid);
        c2h = {};
    }
    // QueueCommands bounds c2h by the SGL's length already; the WRITE never
    // goes past the host's buffer whatever a caller passes.
    if (c2h.size() > sgl.data.length) c2h = c2h.first(sgl.data.length);
    const std::uint32_t wrs = c2h.empty() ? 1 : 2;
    std::size_t at = 0;
    if (!c2h.empty()) {
        auto placed = place_out(c2h);
        if (!placed) return false;
        at = *placed;
    }
    if (!room_to_send(wrs)) return false;
    ibv_sge data{reinterpret_cast<std::uintptr_t>(out_.bytes.data() + at), std::uint32_t(c2h.size()),
                 out_.mr ? out_.mr->lkey : 0};
    ibv_sge resp{reinterpret_cast<std::uintptr_t>(cqe.b.data()), std::uint32_t(cqe.b.size()), 0};
    ibv_send_wr write{}, send{};
    // Unsignaled, but a WRITE that fails completes with its wr_id: it must
    // read as a send (covering no WRs), not as the receive of SRQ buffer 0.
    write.wr_id = wr_send;
    write.opcode = IBV_WR_RDMA_WRITE;
    write.sg_list = &data;
    write.num_sge = 1;
    write.wr.rdma.remote_addr = sgl.addr;
    write.wr.rdma.rkey = sgl.key;
    write.next = &send;
    send.wr_id = wr_send | wrs | (c2h.empty() ? 0 : wr_frees_out);
    send.sg_list = &resp;
    send.num_sge = 1;
    send.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
    // The host registered the key for this command only and asked us to
    // invalidate it with the response: it then skips its own LOCAL_INV.
    if (sgl.invalidate && sgl.key != 0) {
        send.opcode = IBV_WR_SEND_WITH_INV;
        send.invalidate_rkey = sgl.key;
    } else {
        send.opcode = IBV_WR_SEND;
    }
    ibv_send_wr* bad = nullptr;
    if (env_.v->post_send(id_->qp, c2h.empty() ? &send : &write, &bad) != 0) {
        rpm::detail::logf(LogLevel::debug, "nvmf rdma", "qid %u: ibv_post_send failed", commands_.qid());
        return false;
    }
    sends_out_ += wrs;
    if (!c2h.empty()) ++out_sends_;
    return true;
}

std::optional<std::size_t> RdmaQueue::place_out(std::span<const std::uint8_t> c2h) {
    // out_ fills response by response; WRITEs read it until their SENDs
    // complete. When the next one does not fit, wait for all of them and
    // start again at its beginning (sized for two full transfers, so a
    // batch of responses rarely waits).
    if (out_used_ + c2h.size() > out_.bytes.size() || !out_.mr) {
        if (!poll_until([&] { return out_sends_ == 0; })) return std::nullopt;
        out_used_ = 0;
        const std::size_t max_io = env_.queue.registry ? env_.queue.registry->limits().max_io_size : 0;
        if (!ensure(out_, std::max(c2h.size(), 2 * max_io))) return std::nullopt;
    }
    const auto at = out_used_;
    std::memcpy(out_.bytes.data() + at, c2h.data(), c2h.size());
    out_used_ += (c2h.size() + 63) / 64 * 64;
    return at;
}

} // namespace rpm::nvmf::target
