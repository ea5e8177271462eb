// QueueCommands, the commands of a target queue: the checks every fabric shares,
// where a command's data lands, and where the command goes (Connect to the
// registry, admin commands to the controller, I/O to the engine: its
// offload queue once enabled, its software path otherwise).
#include "nvmf/serve/queue_commands.hpp"
#include "core/log.hpp"
#include "nvmf/serve/fabric.hpp"
#include "nvmf/controller/state.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace rpm::nvmf::target {

namespace {

// In-capsule data an admin queue takes: the kernel host's
// NVME_TCP_ADMIN_CCSZ (I/O queues take Limits::in_capsule_data).
constexpr std::uint32_t admin_in_capsule = 8192;

bool is_fabrics(const wire::Sqe& s) { return s.opcode() == wire::admin::fabrics; }

/// Whether the command moves data from host to controller (opcode or, for
/// Fabrics commands, fctype bits 1:0 = 01 or 11).
bool host_to_controller(const wire::Sqe& s) {
    const auto bits = is_fabrics(s) ? s.fctype() : s.opcode();
    return (bits & 0x1) != 0;
}

/// An I/O command whose data the engine takes from or leaves in the
/// queue's I/O buffer: Read, Write, and Dataset Management's ranges.
bool is_io_data(const wire::Sqe& s) {
    return s.opcode() == wire::io::write || s.opcode() == wire::io::read || s.opcode() == wire::io::dataset_management;
}

/// Dataset Management's ranges: NR (CDW10 7:0) + 1 of them.
std::uint32_t dsm_bytes(const wire::Sqe& s) { return ((s.cdw(10) & 0xFF) + 1) * wire::io::dsm_range_len; }

void trace(std::uint16_t qid, const wire::Sqe& s, std::uint32_t len, std::size_t in_capsule) {
    rpm::detail::logf(LogLevel::trace, "nvmf",
                 "qid %u cid %#x op %#x fctype %#x nsid %u cdw10 %#x cdw11 %#x cdw12 %#x sgl %#x len %u inline %zu", qid, s.cid(), s.opcode(), s.fctype(), s.nsid(), s.cdw(10), s.cdw(11), s.cdw(12), s.sgl_type(),
                 len, in_capsule);
}

} // namespace

std::shared_ptr<Controller> QueueCommands::controller() const {
    std::lock_guard lock(mu_);
    return controller_;
}

std::uint16_t QueueCommands::qid() const {
    std::lock_guard lock(mu_);
    return qid_;
}

bool QueueCommands::may_pull(const wire::Sqe& sqe, const CommandData& d) {
    return d.status == 0 && d.where == CommandData::Where::host && d.length != 0 && host_to_controller(sqe);
}

bool QueueCommands::on_command(const wire::Sqe& sqe, const CommandData& d) {
    if (rpm::detail::log_enabled(LogLevel::trace)) trace(qid_, sqe, d.length, d.bytes.size());
    if ((sqe.flags() & 0xC0) != wire::psdt_sgl) return respond(sqe, wire::sc::invalid_field);
    // FUSE (CDW0 bits 9:8): fused operations are not supported, and running
    // half of a compare-and-write as a plain command would be wrong.
    if ((sqe.flags() & 0x03) != 0) return respond(sqe, wire::sc::invalid_field);
    if (d.status != 0) return respond(sqe, d.status);
    const auto len = d.length;
    sgl_len_ = len;
    if (d.where == CommandData::Where::in_capsule) {
        const auto limit = io_queue() ? env_.registry->limits().in_capsule_data : admin_in_capsule;
        if (len != d.bytes.size() || len > limit) return respond(sqe, wire::sc::sgl_data_length_invalid);
        if (!d.intact) return respond(sqe, wire::sc::transient_transport_error);
        if (!io_queue() || !is_io_data(sqe)) return dispatch(sqe, d.bytes, len);
        auto buf = io_buffer();
        if (len > buf.size()) return respond(sqe, wire::sc::sgl_data_length_invalid);
        std::memcpy(buf.data(), d.bytes.data(), len);
        return dispatch(sqe, buf.first(len), len);
    }
    if (!may_pull(sqe, d)) return dispatch(sqe, {}, len);
    return pull_and_dispatch(sqe, len);
}

bool QueueCommands::pull_and_dispatch(const wire::Sqe& sqe, std::uint32_t len) {
    // Pull the data, but never more than we could hold.
    const bool to_io = io_queue() && is_io_data(sqe);
    const auto cap = to_io ? env_.registry->limits().max_io_size : admin_in_capsule;
    if (len > cap) return respond(sqe, wire::sc::invalid_field);
    // A Write whose data would be refused once it came is refused now:
    // the host's data is not asked for (nor its R2T sent) in vain.
    if (to_io) {
        if (const auto status = io_length_status(sqe, len)) return respond(sqe, status);
    }
    std::span<std::uint8_t> into;
    if (to_io) {
        into = io_buffer().first(len);
    } else {
        data_buf_.resize(len);
        into = data_buf_;
    }
    bool intact = true;
    switch (t_.pull(sqe, into, intact)) {
    case Pulled::failed: return false;
    case Pulled::later: return true;
    case Pulled::done: break;
    }
    if (!intact) return respond(sqe, wire::sc::transient_transport_error);
    return dispatch(sqe, into, len);
}

bool QueueCommands::on_pulled(const wire::Sqe& sqe, std::span<const std::uint8_t> data, bool intact) {
    const auto len = std::uint32_t(data.size());
    // Other commands ran while the data came: this one's length again.
    sgl_len_ = len;
    if (!intact) return respond(sqe, wire::sc::transient_transport_error);
    if (!io_queue() || !is_io_data(sqe)) return dispatch(sqe, data, len);
    auto buf = io_buffer();
    std::memcpy(buf.data(), data.data(), len);  // pull_and_dispatch bounded len by max_io_size
    return dispatch(sqe, buf.first(len), len);
}

bool QueueCommands::respond(const wire::Sqe& sqe, std::uint16_t status, std::uint32_t dw0, std::uint32_t dw1,
                        std::span<const std::uint8_t> c2h) {
    wire::Cqe cqe;
    cqe.set_dw0(dw0);
    cqe.set_dw1(dw1);
    sq_head_ = std::uint16_t(sqsize_ ? (sq_head_ + 1) % (sqsize_ + 1) : 0);
    cqe.set_sq_head(sq_head_);
    cqe.set_sq_id(qid_);
    cqe.set_cid(sqe.cid());
    cqe.set_status(status);
    if (status != wire::sc::success) {
        ++env_.stats->errors;
        if (rpm::detail::log_enabled(LogLevel::debug))
            rpm::detail::logf(LogLevel::debug, "nvmf", "qid %u cid %#x opcode %#x nsid %u cdw10 %#x failed: %s", qid_, sqe.cid(),
                         sqe.opcode(), sqe.nsid(), sqe.cdw(10), describe_status(status).c_str());
        if (controller_) controller_->record_error(qid_, sqe.cid(), status, sqe.nsid());
    }
    return t_.complete(sqe, cqe, c2h);
}

void QueueCommands::release() {
    offload_.reset();  // gives the staging slot back
    if (auto c = controller()) env_.registry->release(c, qid());
}

std::span<std::uint8_t> QueueCommands::io_buffer() {
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

std::uint32_t QueueCommands::block_size(std::uint32_t nsid) {
    for (auto [id, bs] : block_sizes_)
        if (id == nsid) return bs;
    auto& sub = controller_->subsystem();
    block_sizes_.clear();
    for (const auto& v : sub.namespaces()) block_sizes_.emplace_back(v.nsid, v.block_size);
    for (auto [id, bs] : block_sizes_)
        if (id == nsid) return bs;
    return 0;
}

bool QueueCommands::dispatch(const wire::Sqe& sqe, std::span<const std::uint8_t> data, std::uint32_t data_len) {
    const bool connect = is_fabrics(sqe) && sqe.fctype() == wire::fctype::connect;
    if (!connected_) return connect ? on_connect(sqe, data) : respond(sqe, wire::sc::command_sequence_error);
    if (connect) return respond(sqe, wire::sc::command_sequence_error);
    if (is_fabrics(sqe) && (sqe.fctype() == wire::fctype::auth_send || sqe.fctype() == wire::fctype::auth_receive))
        return on_auth(sqe, data);
    // Nothing else until the host proved its secret (nvmet does the same).
    if (auth_policy_ != nullptr && !authenticated_) return respond(sqe, wire::sc::auth_required);
    if (qid_ == 0) return on_admin(sqe, data);
    if (is_fabrics(sqe)) return respond(sqe, wire::sc::invalid_opcode);
    return on_io(sqe, data_len);
}

std::uint16_t QueueCommands::io_length_status(const wire::Sqe& sqe, std::uint32_t data_len) {
    // Only a command dispatch() would take to on_io, where these checks
    // stood first: any other gets the status it got before.
    if (!connected_ || qid_ == 0 || is_fabrics(sqe) || (auth_policy_ != nullptr && !authenticated_) ||
        !controller_->ready())
        return 0;
    const auto op = sqe.opcode();
    if (op == wire::io::read || op == wire::io::write) {
        const auto bs = block_size(sqe.nsid());
        const auto bytes = std::uint64_t((sqe.cdw(12) & 0xFFFF) + 1) * bs;
        // A transfer that disagrees with the blocks asked for would read
        // stale staging bytes (write) or overrun the host's buffer (read);
        // like nvmet, any difference is Data SGL Length Invalid.
        if (bs != 0 && bytes != data_len) return wire::sc::sgl_data_length_invalid;
    }
    // Its ranges must all have come (nvmet asks the same: the SGL may be longer).
    if (op == wire::io::dataset_management && data_len < dsm_bytes(sqe)) return wire::sc::sgl_data_length_invalid;
    return 0;
}

bool QueueCommands::on_connect(const wire::Sqe& sqe, std::span<const std::uint8_t> data) {
    // A queue no deeper than its transport made it (NVMe/RDMA: the CM
    // request's HSQSIZE sized the queue pair and its completion queue).
    if (max_sqsize_ != 0 && wire::connect_cmd(sqe).sqsize > max_sqsize_) {
        const auto bad = invalid_connect_parameter(false, connect_offset::sqsize);
        return respond(sqe, bad.status, bad.dw0, bad.dw1);
    }
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
    // A queue that must authenticate is set up once it did: until then the
    // target's watchdog closes it after setup_timeout, like a queue that
    // never sent Connect (a host that fails or never tries holds nothing).
    const bool must_authenticate = c->subsystem().auth_policy(c->hostnqn()) != nullptr;
    if (!must_authenticate) set_up_.store(true, std::memory_order_release);
    if (cmd.qid == 0) ++env_.stats->controllers;
    auto* engine = c->subsystem().engine();
    if (cmd.qid != 0 && engine) {
        // The seed's ibv_modify_qp_nvmf(ENABLE), after Connect: from here the
        // queue's I/O goes to the engine; without a staging slot it stays in
        // software (counted by the engine as a refused enable).
        if (auto q = engine->enable(c->subsystem().handle())) offload_ = std::move(*q);
    }
    // A host with a secret authenticates on every queue: AUTHREQ.ATR says so.
    auth_policy_ = must_authenticate ? c->subsystem().auth_policy(c->hostnqn()) : nullptr;
    const std::uint32_t dw0 = o.dw0 | (auth_policy_ != nullptr ? wire::connect_authreq_atr : 0);
    return respond(sqe, o.status, dw0, o.dw1);
}

bool QueueCommands::finish(const wire::Sqe& sqe, const Outcome& o) {
    if (o.deferred) return true;
    std::span<const std::uint8_t> data;
    // At most the SGL's length, as the transport decoded it (a keyed SGL's
    // length is 3 bytes: SQE byte 35 is its key's).
    if (o.status == wire::sc::success) data = std::span(o.data).first(std::min<std::size_t>(o.data.size(), sgl_len_));
    return respond(sqe, o.status, o.dw0, o.dw1, data);
}

bool QueueCommands::on_admin(const wire::Sqe& sqe, std::span<const std::uint8_t> data) {
    ++env_.stats->admin;
    if (is_fabrics(sqe)) {
        if (sqe.fctype() == wire::fctype::property_get) return finish(sqe, controller_->property_get(sqe));
        if (sqe.fctype() == wire::fctype::property_set) return finish(sqe, controller_->property_set(sqe));
        return respond(sqe, wire::sc::invalid_field);
    }
    return finish(sqe, controller_->admin(sqe, data));
}

bool QueueCommands::on_io(const wire::Sqe& sqe, std::uint32_t data_len) {
    if (!controller_->ready()) return respond(sqe, wire::sc::command_sequence_error);
    const auto op = sqe.opcode();
    if (const auto status = io_length_status(sqe, data_len)) return respond(sqe, status);
    std::uint64_t bytes = 0;
    if (op == wire::io::read || op == wire::io::write)
        bytes = std::uint64_t((sqe.cdw(12) & 0xFFFF) + 1) * block_size(sqe.nsid());
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
