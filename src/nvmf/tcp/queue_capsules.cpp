// The NVMe/TCP queue's capsules: where a command's data is, as NVMe/TCP
// carries it (in the capsule, or pulled with R2T / H2CData and pushed with
// C2HData), and capsules that arrive while a command waits for its data.
// What the command does is its QueueCommands (serve/queue_commands.cpp).
#include "nvmf/tcp/queue.hpp"

#include <array>
#include <cstring>

namespace rpm::nvmf::target {

namespace {

/// A capsule's SGL as NVMe/TCP allows it: an offset data block of offset 0
/// with the data in the capsule, or a transport data block (R2T / C2HData).
CommandData tcp_data(const wire::Sqe& sqe, const pdu::Pdu& p) {
    CommandData d;
    d.length = sqe.sgl_length();
    if (!p.data.empty()) {
        if (sqe.sgl_type() != wire::sgl_incapsule) d.status = wire::sc::sgl_descriptor_type_invalid;
        else if (sqe.sgl_addr() != 0) d.status = wire::sc::sgl_offset_invalid;
        d.where = CommandData::Where::in_capsule;
        d.bytes = p.data;
        d.intact = p.data_digest_ok;
        return d;
    }
    if (sqe.sgl_type() == wire::sgl_incapsule && d.length == 0) return d;
    if (sqe.sgl_type() != wire::sgl_transport) d.status = wire::sc::sgl_descriptor_type_invalid;
    d.where = CommandData::Where::host;
    return d;
}

} // namespace

bool TcpQueue::on_capsule(const pdu::Pdu& p) {
    const auto sqe = pdu::decode_capsule_cmd(p.header);
    return commands_.on_command(sqe, tcp_data(sqe, p));
}

bool TcpQueue::stash(const pdu::Pdu& p, const std::vector<std::uint8_t>& bytes) {
    if (pending_.size() >= commands_.depth()) {
        terminate({wire::Fes::pdu_sequence_error, 0, "more capsules than the queue holds"}, p.header);
        return false;
    }
    pending_.push_back(bytes);
    return true;
}

Pulled TcpQueue::pull(const wire::Sqe& sqe, std::span<std::uint8_t> into, bool& intact) {
    // run_pending() and on_pdu() hold back capsules that may pull while
    // r2t_ is outstanding: there is one transfer at a time.
    const auto ttag = next_ttag_++;
    if (next_ttag_ == 0xFFFF) next_ttag_ = 1;
    pdu::DataHeader r2t{.cccid = sqe.cid(), .ttag = ttag, .offset = 0, .length = std::uint32_t(into.size())};
    std::array<std::uint8_t, pdu::max_header_bytes> out{};
    if (!send(std::span(out.data(), pdu::encode_r2t(out, r2t, ctx_.hdgst)), {})) return Pulled::failed;
    r2t_.emplace(Transfer{.sqe = sqe, .ttag = ttag, .into = into, .got = 0, .intact = true, .saved = {}});
    while (!r2t_->complete()) {
        pdu::Pdu p;
        if (!read_pdu(r2t_buf_, p)) return Pulled::failed;
        if (p.info.type == wire::PduType::capsule_cmd) {
            // The host may wait for this capsule's answer before it sends
            // the data: the capsule runs now, and the data goes on arriving
            // in serve(), kept apart from the buffer other commands use.
            if (!stash(p, r2t_buf_)) return Pulled::failed;
            auto& t = *r2t_;
            t.saved.assign(t.into.begin(), t.into.end());
            t.into = t.saved;
            return Pulled::later;
        }
        if (p.info.type != wire::PduType::h2c_data) {
            terminate({wire::Fes::pdu_sequence_error, 0, "expected H2CData"}, p.header);
            return Pulled::failed;
        }
        if (!take_h2c(p)) return Pulled::failed;
    }
    intact = r2t_->intact;
    r2t_.reset();
    return Pulled::done;
}

bool TcpQueue::take_h2c(const pdu::Pdu& p) {
    auto& t = *r2t_;
    const auto h = pdu::decode_data(p.header);
    // Data must arrive in order, for this command and transfer, inside
    // what the R2T asked for: anything else is a fatal transport error.
    if (h.cccid != t.sqe.cid() || h.ttag != t.ttag) {
        terminate({wire::Fes::invalid_header_field, 8, "H2CData for another command"}, p.header);
        return false;
    }
    if (h.offset != t.got || std::uint64_t(h.offset) + h.length > t.into.size()) {
        terminate({wire::Fes::data_out_of_range, 12, "H2CData outside the R2T"}, p.header);
        return false;
    }
    // LAST_PDU marks the PDU that completes the R2T's transfer, and only it.
    if (h.last != (t.got + h.length == t.into.size())) {
        terminate({wire::Fes::pdu_sequence_error, 1,
                   h.last ? "H2CData LAST_PDU before the end of the transfer" : "H2CData ends the transfer without LAST_PDU"},
                  p.header);
        return false;
    }
    std::memcpy(t.into.data() + t.got, p.data.data(), h.length);
    t.got += h.length;
    t.intact = t.intact && p.data_digest_ok;
    return true;
}

bool TcpQueue::finish_transfer() {
    const auto t = std::move(*r2t_);
    r2t_.reset();
    return commands_.on_pulled(t.sqe, t.saved, t.intact) && run_pending();
}

bool TcpQueue::held_back(const std::vector<std::uint8_t>& bytes) {
    if (!r2t_) return false;
    auto parsed = pdu::parse_pdu(bytes, ctx_);
    if (!std::holds_alternative<pdu::Pdu>(parsed)) return false;  // run_pending refuses it
    const auto& p = std::get<pdu::Pdu>(parsed);
    const auto sqe = pdu::decode_capsule_cmd(p.header);
    return QueueCommands::may_pull(sqe, tcp_data(sqe, p));
}

bool TcpQueue::run_pending() {
    // Each runs from its own bytes, moved out of pending_: the command may
    // keep more capsules behind it.
    std::size_t held = 0;
    while (pending_.size() > held) {
        if (held_back(pending_[held])) {
            ++held;
            continue;
        }
        const auto bytes = std::move(pending_[held]);
        pending_.erase(pending_.begin() + std::ptrdiff_t(held));
        auto parsed = pdu::parse_pdu(bytes, ctx_);
        if (!std::holds_alternative<pdu::Pdu>(parsed) || !on_capsule(std::get<pdu::Pdu>(parsed))) return false;
    }
    return true;
}

} // namespace rpm::nvmf::target
