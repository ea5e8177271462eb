// The NVMe/TCP session's capsules: where a command's data is, as NVMe/TCP
// carries it (in the capsule, or pulled with R2T / H2CData and pushed with
// C2HData), and capsules that arrive while a command waits for its data.
// What the command does is the queue's command core (queue_commands.cpp).
#include "nvmf/target/session.hpp"

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

bool Session::on_capsule(const pdu::Pdu& p) {
    const auto sqe = pdu::decode_capsule_cmd(p.header);
    return core_.on_command(sqe, tcp_data(sqe, p));
}

bool Session::pull(const wire::Sqe& sqe, std::span<std::uint8_t> into, bool& intact) {
    const auto ttag = next_ttag_++;
    if (next_ttag_ == 0xFFFF) next_ttag_ = 1;
    pdu::DataHeader r2t{.cccid = sqe.cid(), .ttag = ttag, .offset = 0, .length = std::uint32_t(into.size())};
    std::array<std::uint8_t, pdu::max_header_bytes> out{};
    if (!send(std::span(out.data(), pdu::encode_r2t(out, r2t, ctx_.hdgst)), {})) return false;
    std::vector<std::uint8_t> buf;
    std::uint32_t got = 0;
    while (got < into.size()) {
        pdu::Pdu p;
        if (!read_pdu(buf, p)) return false;
        if (p.info.type == wire::PduType::capsule_cmd && pending_.size() < core_.depth()) {
            pending_.push_back(buf);
            continue;
        }
        if (p.info.type != wire::PduType::h2c_data) {
            terminate({wire::Fes::pdu_sequence_error, 0, "expected H2CData"}, p.header);
            return false;
        }
        const auto h = pdu::decode_data(p.header);
        // Data must arrive in order, for this command and transfer, inside
        // what the R2T asked for: anything else is a fatal transport error.
        if (h.cccid != sqe.cid() || h.ttag != ttag) {
            terminate({wire::Fes::invalid_header_field, 8, "H2CData for another command"}, p.header);
            return false;
        }
        if (h.offset != got || std::uint64_t(h.offset) + h.length > into.size()) {
            terminate({wire::Fes::data_out_of_range, 12, "H2CData outside the R2T"}, p.header);
            return false;
        }
        // LAST_PDU marks the PDU that completes the R2T's transfer, and only it.
        if (h.last != (got + h.length == into.size())) {
            terminate({wire::Fes::pdu_sequence_error, 1,
                       h.last ? "H2CData LAST_PDU before the end of the transfer" : "H2CData ends the transfer without LAST_PDU"},
                      p.header);
            return false;
        }
        std::memcpy(into.data() + got, p.data.data(), h.length);
        got += h.length;
        intact = intact && p.data_digest_ok;
    }
    return true;
}

bool Session::run_pending() {
    while (!pending_.empty()) {
        // Run from a copy: the command may queue more capsules behind it.
        const auto bytes = std::move(pending_.front());
        pending_.pop_front();
        auto parsed = pdu::parse_pdu(bytes, ctx_);
        if (!std::holds_alternative<pdu::Pdu>(parsed) || !on_capsule(std::get<pdu::Pdu>(parsed))) return false;
    }
    return true;
}

} // namespace rpm::nvmf::target
