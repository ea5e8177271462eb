// A target queue's Authentication Send and Receive (DH-HMAC-CHAP): the
// command fields checked here, the transaction in src/nvmf/auth/exchange.cpp.
// Like Linux's nvmet, a bad message never fails the command that carried it:
// the transaction ends and the next Authentication Receive returns
// AUTH_Failure1 with the reason; then the queue ends.
#include "nvmf/serve/queue_commands.hpp"
#include "core/log.hpp"

#include <algorithm>
#include <cstdio>

namespace rpm::nvmf::target {

bool QueueCommands::on_auth(const wire::Sqe& sqe, std::span<const std::uint8_t> data) {
    // CDW10: SPSP0 (bits 15:8), SPSP1 (23:16), SECP (31:24); CDW11: TL / AL.
    const std::uint32_t cdw10 = sqe.cdw(10);
    const auto spsp0 = std::uint8_t(cdw10 >> 8), spsp1 = std::uint8_t(cdw10 >> 16), secp = std::uint8_t(cdw10 >> 24);
    if (secp != auth::kSecp || spsp0 != auth::kSpsp || spsp1 != auth::kSpsp) return respond(sqe, wire::sc::invalid_field);
    // A host that need not authenticate has nothing to authenticate with.
    if (auth_policy_ == nullptr) return respond(sqe, wire::sc::invalid_field);
    if (sqe.fctype() == wire::fctype::auth_receive) return auth_receive(sqe);
    const std::uint32_t tl = sqe.cdw(11);
    if (tl == 0 || tl != data.size() || tl > auth::kMaxMessage) return respond(sqe, wire::sc::invalid_field);
    // A new transaction: the first, one after a failure, or re-authentication
    // of an authenticated queue (which stays authenticated unless it fails).
    if (!auth_ || auth_->authenticated() || auth_->failed())
        auth_ = std::make_unique<auth::ControllerExchange>(*auth_policy_, controller_->subsystem().next_auth_seqnum());
    auth_->on_send(data);
    // Success2 completes a two-way transaction; AUTH_Failure2 (or a message
    // the exchange refuses at once) ends one.
    if (auth_->authenticated() || auth_->failed()) auth_ended();
    return respond(sqe, wire::sc::success) && !failed_auth_;
}

bool QueueCommands::auth_receive(const wire::Sqe& sqe) {
    const std::uint32_t al = sqe.cdw(11);
    if (al == 0) return respond(sqe, wire::sc::invalid_field);
    if (!auth_) auth_ = std::make_unique<auth::ControllerExchange>(*auth_policy_, controller_->subsystem().next_auth_seqnum());
    Outcome o;
    o.data = auth_->on_receive();
    // All AL bytes the host's buffer takes, zeros after the message (as
    // nvmet sends them), but never more than the command's SGL or 8 KiB.
    o.data.resize(std::min<std::size_t>({al, sgl_len_, 8192}));
    if (auth_->authenticated() || auth_->failed()) auth_ended();
    return finish(sqe, o) && !failed_auth_;
}

void QueueCommands::auth_ended() {
    if (auth_->authenticated()) {
        if (!authenticated_) ++env_.stats->auth_succeeded;
        authenticated_ = true;
        set_up_.store(true, std::memory_order_release);
        return;
    }
    // A failed transaction: counted, logged (never with a secret), and the
    // queue ends once the failure is told (after this command's completion),
    // whether it had authenticated before or not, as Linux's nvmet ends the
    // controller: a host that fails does not get to guess again on the same
    // queue, and a once-authenticated queue is not left open unserved (the
    // set-up watchdog only closes queues never set up).
    ++env_.stats->auth_failed;
    const bool again = authenticated_;
    failed_auth_ = true;
    authenticated_ = false;
    const auto reason = auth_->failure().value_or(auth::FailureReason::failed);
    rpm::detail::logf(LogLevel::warning, "nvmf", "host %s qid %u: %sauthentication failed: %s (%s); closing the queue",
                 controller_->hostnqn().c_str(), qid_, again ? "re-" : "",
                 std::string(auth::failure_reason_name(reason)).c_str(), auth_->failure_detail().c_str());
}

} // namespace rpm::nvmf::target
