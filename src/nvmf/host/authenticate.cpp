// The host's side of DH-HMAC-CHAP on one queue, after a Connect whose
// completion set AUTHREQ.ATR: Negotiate, Challenge, Reply, Success1 (and
// Success2 when the controller had to prove itself), each through an
// Authentication Send or Receive (src/nvmf/auth/exchange.cpp has the
// transaction itself).
#include "nvmf/auth/exchange.hpp"
#include "nvmf/host/impl.hpp"

namespace rpm::nvmf::host {
namespace {

wire::Sqe auth_command(std::uint8_t fctype, std::uint32_t length) {
    wire::Sqe s;
    s.set_opcode(wire::admin::fabrics);
    s.set_fctype(fctype);
    s.set_cdw(10, std::uint32_t(auth::kSpsp) << 8 | std::uint32_t(auth::kSpsp) << 16 | std::uint32_t(auth::kSecp) << 24);
    s.set_cdw(11, length);
    return s;
}

Result<void> send(Queue& q, const std::vector<std::uint8_t>& m, const std::string& what) {
    auto c = q.submit(auth_command(wire::fctype::auth_send, std::uint32_t(m.size())), std::as_bytes(std::span(m)), {});
    if (!c) return c.error();
    if (c->status) return Error(errc::nvme_status, "Authentication Send (" + what + "): " + describe_status(c->status));
    return {};
}

Result<std::vector<std::uint8_t>> receive(Queue& q, const std::string& what) {
    std::vector<std::uint8_t> m(auth::kMaxMessage);
    auto c = q.submit(auth_command(wire::fctype::auth_receive, std::uint32_t(m.size())), {},
                      std::as_writable_bytes(std::span(m)));
    if (!c) return c.error();
    if (c->status) return Error(errc::nvme_status, "Authentication Receive (" + what + "): " + describe_status(c->status));
    return m;
}

// AUTH_Failure2 tells the controller why we refuse; the refusal is the
// result whatever becomes of it. Linux's nvmet tears the controller down on
// receiving it and over NVMe/RDMA at times without completing the command
// (the lab saw both): an error here must not hide the refusal.
void failure2(Queue& q, const std::vector<std::uint8_t>& m) { (void)send(q, m, "AUTH_Failure2"); }

// A received buffer holds the message and zeros after it: its own lengths
// say where it ends (the decoder checks them against the bytes).
std::span<const std::uint8_t> message_in(const std::vector<std::uint8_t>& b) {
    if (b.size() < 16) return b;
    const std::uint8_t type = b[0], id = b[1];
    std::size_t n = b.size();
    if (type == 0x00) n = 8;                                                     // failure
    else if (id == 0x01) n = 16 + b[6] + std::size_t(wire::get16(&b[10]));     // challenge
    else if (id == 0x03) n = 16 + ((b[8] & 1) ? b[6] : 0);                      // success1
    return std::span(b).first(std::min(n, b.size()));
}

} // namespace

Result<void> authenticate(Queue& q, const HostOptions& o, std::uint16_t qid) {
    const std::string where = "queue " + std::to_string(qid) + " of '" + o.subnqn + "'";
    if (o.dhchap_secret.empty())
        return Error(errc::auth_failed, where + " requires authentication (DH-HMAC-CHAP) and no secret was given "
                                                "(HostOptions::dhchap_secret, rpm-nvmf --dhchap-secret-file)");
    auth::HostPolicy p;
    auto key = auth::parse_secret(o.dhchap_secret);
    if (!key) return Error(errc::invalid_argument, "the host's " + key.error().detail());
    p.host_secret = std::move(*key);
    if (!o.dhchap_ctrl_secret.empty()) {
        auto ctrl = auth::parse_secret(o.dhchap_ctrl_secret);
        if (!ctrl) return Error(errc::invalid_argument, "the controller's " + ctrl.error().detail());
        p.ctrl_secret = std::move(*ctrl);
    }
    p.host_nqn = o.hostnqn;
    p.subsystem_nqn = o.subnqn;
    auto ids = auth::random_bytes(6);
    if (!ids) return ids.error();
    const auto& r = *ids;
    auth::HostExchange x(std::move(p), std::uint16_t(r[0] | r[1] << 8),
                         std::uint32_t(r[2]) | std::uint32_t(r[3]) << 8 | std::uint32_t(r[4]) << 16 | std::uint32_t(r[5]) << 24);
    auto refused = [&] {
        return Error(errc::auth_failed, "DH-HMAC-CHAP on " + where + " failed: " +
                                            std::string(auth::failure_reason_name(*x.failure())) + " (" +
                                            x.failure_detail() + ")");
    };
    if (auto ok = send(q, x.negotiate(), "AUTH_Negotiate"); !ok) return ok;
    auto challenge = receive(q, "the challenge");
    if (!challenge) return challenge.error();
    auto reply = x.on_challenge(message_in(*challenge));
    if (reply) {
        if (x.failed()) {
            failure2(q, *reply);
            return refused();
        }
        if (auto ok = send(q, *reply, "the reply"); !ok) return ok;
    }
    if (x.failed()) return refused();
    auto result = receive(q, "the result");
    // A controller that refuses may close the queue instead of answering
    // (Linux's nvmet over NVMe/RDMA did, in the lab): say so, not only "timeout".
    if (!result)
        return Error(errc::auth_failed, "DH-HMAC-CHAP on " + where +
                                            " failed: no answer to the reply (a controller that refuses the secret "
                                            "may close the queue instead): " + result.error().detail());
    auto last = x.on_result(message_in(*result));
    if (last) {
        if (x.failed()) {
            failure2(q, *last);
            return refused();
        }
        if (auto ok = send(q, *last, "Success2"); !ok) return ok;
    }
    if (!x.authenticated()) return refused();
    return {};
}

} // namespace rpm::nvmf::host
