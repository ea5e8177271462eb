// The NVMe/TCP session's commands: where a capsule's data comes from
// (in the capsule, or pulled with R2T / H2CData), and where the command goes
// (Connect to the registry, admin commands to the controller, I/O to the
// engine: its offload queue once enabled, its software path otherwise).
#include "nvmf/detail/session.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace rpm::nvmf::target {

int trace_level() {
    static const int level = [] {
        const char* v = std::getenv("RPM_NVMF_TRACE");
        if (!v) return 0;
        return std::string_view(v) == "errors" ? 1 : 2;
    }();
    return level;
}

namespace {

constexpr std::uint32_t admin_in_capsule = 8192;  // the kernel host's NVME_TCP_ADMIN_CCSZ

bool is_fabrics(const wire::Sqe& s) { return s.opcode() == wire::admin::fabrics; }

/// Whether the command moves data from host to controller (opcode or, for
/// Fabrics commands, fctype bits 1:0 = 01 or 11).
bool host_to_controller(const wire::Sqe& s) {
    const auto bits = is_fabrics(s) ? s.fctype() : s.opcode();
    return (bits & 0x1) != 0;
}

bool is_io_data(const wire::Sqe& s) { return s.opcode() == wire::io::write || s.opcode() == wire::io::read; }

bool tracing() { return trace_level() == 2; }

void trace(std::uint16_t qid, const wire::Sqe& s, std::size_t in_capsule) {
    std::fprintf(stderr, "nvmf: qid %u cid %#x op %#x fctype %#x nsid %u cdw10 %#x cdw11 %#x cdw12 %#x sgl %#x len %u inline %zu\n",
                 qid, s.cid(), s.opcode(), s.fctype(), s.nsid(), s.cdw(10), s.cdw(11), s.cdw(12), s.sgl_type(),
                 s.sgl_length(), in_capsule);
}

} // namespace

std::span<std::uint8_t> Session::io_buffer() {
    if (offload_) {
        auto s = offload_->staging();
        return {reinterpret_cast<std::uint8_t*>(s.data()), s.size()};
    }
    const auto max = env_.registry->limits().max_io_size;
    if (software_buf_.empty()) software_buf_.resize(max + 4096);
    auto addr = reinterpret_cast<std::uintptr_t>(software_buf_.data());
    const auto pad = (4096 - addr % 4096) % 4096;  // O_DIRECT wants aligned buffers
    return {software_buf_.data() + pad, max};
}

std::uint32_t Session::block_size(std::uint32_t nsid) {
    for (auto [id, bs] : block_sizes_)
        if (id == nsid) return bs;
    auto& sub = controller_->subsystem();
    block_sizes_.clear();
    for (const auto& v : sub.namespaces()) block_sizes_.emplace_back(v.nsid, v.block_size);
    for (auto [id, bs] : block_sizes_)
        if (id == nsid) return bs;
    return 0;
}

bool Session::on_capsule(const pdu::Pdu& p) {
    const auto sqe = pdu::decode_capsule_cmd(p.header);
    const auto len = sqe.sgl_length();
    if (tracing()) trace(qid_, sqe, p.data.size());
    if ((sqe.flags() & 0xC0) != wire::psdt_sgl) return respond(sqe, wire::sc::invalid_field);
    // FUSE (CDW0 bits 9:8): fused operations are not supported, and running
    // half of a compare-and-write as a plain command would be wrong.
    if ((sqe.flags() & 0x03) != 0) return respond(sqe, wire::sc::invalid_field);
    const bool io_queue = connected_ && qid_ != 0;
    if (!p.data.empty()) {
        if (sqe.sgl_type() != wire::sgl_incapsule) return respond(sqe, wire::sc::sgl_descriptor_type_invalid);
        if (sqe.sgl_addr() != 0) return respond(sqe, wire::sc::sgl_offset_invalid);
        const auto limit = io_queue ? env_.registry->limits().in_capsule_data : admin_in_capsule;
        if (len != p.data.size() || len > limit) return respond(sqe, wire::sc::sgl_data_length_invalid);
        if (!p.data_digest_ok) return respond(sqe, wire::sc::transient_transport_error);
        if (!io_queue || !is_io_data(sqe)) return dispatch(sqe, p.data, len);
        auto buf = io_buffer();
        if (len > buf.size()) return respond(sqe, wire::sc::sgl_data_length_invalid);
        std::memcpy(buf.data(), p.data.data(), len);
        return dispatch(sqe, buf.first(len), len);
    }
    if (sqe.sgl_type() == wire::sgl_incapsule && len == 0) return dispatch(sqe, {}, 0);
    if (sqe.sgl_type() != wire::sgl_transport) return respond(sqe, wire::sc::sgl_descriptor_type_invalid);
    if (!host_to_controller(sqe) || len == 0) return dispatch(sqe, {}, len);
    // Pull the data with R2T, but never more than we could hold.
    const bool to_io = io_queue && is_io_data(sqe);
    const auto cap = to_io ? env_.registry->limits().max_io_size : admin_in_capsule;
    if (len > cap) return respond(sqe, wire::sc::invalid_field);
    std::span<std::uint8_t> into;
    if (to_io) {
        into = io_buffer().first(len);
    } else {
        data_buf_.resize(len);
        into = data_buf_;
    }
    bool digest_ok = true;
    if (!receive_r2t_data(sqe, into, digest_ok)) return false;
    if (!digest_ok) return respond(sqe, wire::sc::transient_transport_error);
    return dispatch(sqe, into, len);
}

bool Session::receive_r2t_data(const wire::Sqe& sqe, std::span<std::uint8_t> into, bool& digest_ok) {
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
        if (p.info.type == wire::PduType::capsule_cmd && pending_.size() <= sqsize_) {
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
        digest_ok = digest_ok && p.data_digest_ok;
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

bool Session::dispatch(const wire::Sqe& sqe, std::span<const std::uint8_t> data, std::uint32_t data_len) {
    const bool connect = is_fabrics(sqe) && sqe.fctype() == wire::fctype::connect;
    if (!connected_) return connect ? on_connect(sqe, data) : respond(sqe, wire::sc::command_sequence_error);
    if (connect) return respond(sqe, wire::sc::command_sequence_error);
    if (qid_ == 0) return on_admin(sqe, data);
    if (is_fabrics(sqe)) return respond(sqe, wire::sc::invalid_opcode);
    return on_io(sqe, data_len);
}

bool Session::on_connect(const wire::Sqe& sqe, std::span<const std::uint8_t> data) {
    auto [c, o] = env_.registry->connect(sqe, data);
    if (!c) return respond(sqe, o.status, o.dw0, o.dw1);
    const auto cmd = wire::connect_cmd(sqe);
    {
        std::lock_guard lock(mu_);
        controller_ = c;
        qid_ = cmd.qid;
    }
    sqsize_ = cmd.sqsize;
    connected_ = true;
    set_up_.store(true, std::memory_order_release);
    if (cmd.qid == 0) ++env_.stats->controllers;
    auto* engine = c->subsystem().engine();
    if (cmd.qid != 0 && engine) {
        // The seed's ibv_modify_qp_nvmf(ENABLE), after Connect: from here the
        // queue's I/O goes to the engine; without a staging slot it stays in
        // software (counted by the engine as a refused enable).
        if (auto q = engine->enable(c->subsystem().handle())) offload_ = std::move(*q);
    }
    return respond(sqe, o.status, o.dw0, o.dw1);
}

bool Session::finish(const wire::Sqe& sqe, const Outcome& o) {
    if (o.deferred) return true;
    std::span<const std::uint8_t> data;
    if (o.status == wire::sc::success) data = std::span(o.data).first(std::min<std::size_t>(o.data.size(), sqe.sgl_length()));
    return respond(sqe, o.status, o.dw0, o.dw1, data);
}

bool Session::on_admin(const wire::Sqe& sqe, std::span<const std::uint8_t> data) {
    ++env_.stats->admin;
    if (is_fabrics(sqe)) {
        if (sqe.fctype() == wire::fctype::property_get) return finish(sqe, controller_->property_get(sqe));
        if (sqe.fctype() == wire::fctype::property_set) return finish(sqe, controller_->property_set(sqe));
        return respond(sqe, wire::sc::invalid_field);
    }
    return finish(sqe, controller_->admin(sqe, data));
}

bool Session::on_io(const wire::Sqe& sqe, std::uint32_t data_len) {
    if (!controller_->ready()) return respond(sqe, wire::sc::command_sequence_error);
    const auto op = sqe.opcode();
    std::uint64_t bytes = 0;
    if (op == wire::io::read || op == wire::io::write) {
        const auto bs = block_size(sqe.nsid());
        bytes = std::uint64_t((sqe.cdw(12) & 0xFFFF) + 1) * bs;
        // A transfer that disagrees with the blocks asked for would read
        // stale staging bytes (write) or overrun the host's buffer (read);
        // like nvmet, any difference is Data SGL Length Invalid.
        if (bs != 0 && bytes != data_len) return respond(sqe, wire::sc::sgl_data_length_invalid);
    }
    auto buf = io_buffer();
    std::uint16_t status;
    const std::span<const std::uint8_t, 64> raw(sqe.b.data(), 64);
    if (offload_) {
        ++env_.stats->offloaded;
        status = offload_->execute(raw);
    } else {
        ++env_.stats->io;
        auto* engine = controller_->subsystem().engine();
        status = engine->execute_software(controller_->subsystem().handle(), raw,
                                          {reinterpret_cast<std::byte*>(buf.data()), buf.size()});
    }
    if (status == wire::sc::success && bytes) controller_->record_io(op == wire::io::write, bytes);
    const bool data = status == wire::sc::success && op == wire::io::read;
    return respond(sqe, status, 0, 0, data ? buf.first(bytes) : std::span<const std::uint8_t>{});
}

} // namespace rpm::nvmf::target
