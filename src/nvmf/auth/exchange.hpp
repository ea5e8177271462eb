#pragma once
// One DH-HMAC-CHAP transaction on one queue, as a state machine on each
// side: no I/O, no clock. The target's queue feeds the controller side the
// data of each Authentication Send and answers each Authentication Receive
// with what it returns; the host side produces what the host sends and
// takes what it receives. (Linux's nvmet and host do the same exchange in
// fabrics-cmd-auth.c and host/auth.c.)
//
//   host                                   controller
//   AUTH_Negotiate (hashes, DH groups) ->
//                                      <-  DH-HMAC-CHAP_Challenge (hash, group, C1, S1, g^y)
//   DH-HMAC-CHAP_Reply (R1, [C2, S2], g^x) ->
//                                      <-  DH-HMAC-CHAP_Success1 ([R2])  or AUTH_Failure1
//   [DH-HMAC-CHAP_Success2 or AUTH_Failure2 ->   (only after an R2)]
//
// A message that is malformed, out of order or for another transaction
// ends the transaction with AUTH_Failure1 carrying the reason (the
// controller side) or AUTH_Failure2 (the host side).
#include "nvmf/auth/auth.hpp"
#include "nvmf/auth/messages.hpp"

#include <optional>
#include <string>
#include <vector>

namespace rpm::nvmf::auth {

/// What a controller accepts from one host.
struct ControllerPolicy {
    Secret host_secret;                    ///< Kh: the host must prove it holds this
    std::optional<Secret> ctrl_secret;     ///< Kc: given to a host that asks (bidirectional)
    std::vector<Hash> hashes{Hash::sha256, Hash::sha384, Hash::sha512};  ///< in preference order
    std::vector<DhGroup> dh_groups{DhGroup::ffdhe2048, DhGroup::ffdhe3072, DhGroup::ffdhe4096,
                                   DhGroup::ffdhe6144, DhGroup::ffdhe8192, DhGroup::null};
    std::string host_nqn;
    std::string subsystem_nqn;
};

class ControllerExchange {
public:
    /// seqnum: S1 of this transaction (a controller counts them up).
    ControllerExchange(ControllerPolicy policy, std::uint32_t seqnum);

    /// The data of an Authentication Send. Never fails the command: a bad
    /// message makes the next on_receive() return AUTH_Failure1.
    void on_send(std::span<const std::uint8_t> data);
    /// What an Authentication Receive returns (the whole message; the caller
    /// sends at most the command's allocation length).
    std::vector<std::uint8_t> on_receive();

    [[nodiscard]] bool authenticated() const { return state_ == State::done; }
    /// True once the transaction failed (after its AUTH_Failure1 was read,
    /// or when the host sent AUTH_Failure2).
    [[nodiscard]] bool failed() const { return state_ == State::failed; }
    /// The failure's reason and what caused it (for the log and counters).
    [[nodiscard]] std::optional<FailureReason> failure() const { return reason_; }
    [[nodiscard]] const std::string& failure_detail() const { return detail_; }
    [[nodiscard]] Hash hash() const { return hash_; }
    [[nodiscard]] DhGroup dh_group() const { return group_; }
    [[nodiscard]] bool bidirectional() const { return !r2_.empty(); }

private:
    enum class State { negotiate, send_challenge, reply, send_success1, success2, send_failure, done, failed };
    void fail(FailureReason r, std::string detail);
    void negotiated(const Negotiate& n);
    void replied(const Reply& r);

    ControllerPolicy policy_;
    State state_ = State::negotiate;
    std::uint16_t tid_ = 0;
    std::uint32_t s1_;
    Hash hash_ = Hash::sha256;
    DhGroup group_ = DhGroup::null;
    std::vector<std::uint8_t> c1_;
    std::optional<DhKey> dh_;
    std::vector<std::uint8_t> r2_;
    std::optional<FailureReason> reason_;
    std::string detail_;
};

/// What a host offers and holds.
struct HostPolicy {
    Secret host_secret;                 ///< Kh
    std::optional<Secret> ctrl_secret;  ///< Kc: when set, the controller must prove it holds it
    std::vector<Hash> hashes{Hash::sha256, Hash::sha384, Hash::sha512};
    std::vector<DhGroup> dh_groups{DhGroup::null, DhGroup::ffdhe2048, DhGroup::ffdhe3072, DhGroup::ffdhe4096,
                                   DhGroup::ffdhe6144, DhGroup::ffdhe8192};
    std::string host_nqn;
    std::string subsystem_nqn;
};

class HostExchange {
public:
    /// transaction: T_ID; seqnum: S2 if the controller must answer.
    HostExchange(HostPolicy policy, std::uint16_t transaction, std::uint32_t seqnum);

    /// AUTH_Negotiate (the first Authentication Send).
    std::vector<std::uint8_t> negotiate() const;
    /// The controller's challenge (the first Authentication Receive).
    /// RETURN VALUE: the Reply to send; AUTH_Failure2 when the challenge
    /// cannot be answered; nothing when it was the controller's AUTH_Failure1
    /// (failed() in both failure cases).
    std::optional<std::vector<std::uint8_t>> on_challenge(std::span<const std::uint8_t> data);
    /// The controller's Success1 or Failure1 (the second Receive).
    /// RETURN VALUE: the Success2 to send when the controller answered a
    /// controller challenge, AUTH_Failure2 when its answer was wrong, or
    /// nothing (done, or failed()).
    std::optional<std::vector<std::uint8_t>> on_result(std::span<const std::uint8_t> data);

    [[nodiscard]] bool authenticated() const { return done_ && !reason_; }
    [[nodiscard]] bool failed() const { return reason_.has_value(); }
    [[nodiscard]] std::optional<FailureReason> failure() const { return reason_; }
    [[nodiscard]] const std::string& failure_detail() const { return detail_; }
    /// Whether the controller's own failure message (AUTH_Failure1) ended it.
    [[nodiscard]] bool refused_by_controller() const { return by_controller_; }

private:
    std::vector<std::uint8_t> fail(FailureReason r, std::string detail);
    /// The controller's message; or nothing, with `answer` what the caller
    /// returns instead: AUTH_Failure2 for a message refused, nothing for the
    /// controller's own AUTH_Failure1.
    std::optional<Message> take(std::span<const std::uint8_t> data, std::optional<std::vector<std::uint8_t>>& answer);

    HostPolicy policy_;
    std::uint16_t tid_;
    std::uint32_t s2_;
    Hash hash_ = Hash::sha256;
    std::vector<std::uint8_t> c2_;
    std::vector<std::uint8_t> expected_r2_;
    bool challenged_ = false;
    bool done_ = false;
    bool by_controller_ = false;
    std::optional<FailureReason> reason_;
    std::string detail_;
};

} // namespace rpm::nvmf::auth
