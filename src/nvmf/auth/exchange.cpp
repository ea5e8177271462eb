// One DH-HMAC-CHAP transaction, controller side and host side
// (nvmf/auth/exchange.hpp).
#include "nvmf/auth/exchange.hpp"

#include <algorithm>

namespace rpm::nvmf::auth {
namespace {

template <class T>
const T* as(const Message& m) {
    return std::get_if<T>(&m);
}

template <class E>
bool offered(const std::vector<std::uint8_t>& ids, E e) {
    return std::find(ids.begin(), ids.end(), static_cast<std::uint8_t>(e)) != ids.end();
}

} // namespace

// ---- controller -------------------------------------------------------------

ControllerExchange::ControllerExchange(ControllerPolicy policy, std::uint32_t seqnum)
    : policy_(std::move(policy)), s1_(seqnum) {}

void ControllerExchange::fail(FailureReason r, std::string detail) {
    reason_ = r;
    detail_ = std::move(detail);
    state_ = State::send_failure;
}

void ControllerExchange::on_send(std::span<const std::uint8_t> data) {
    auto d = decode(data);
    if (auto* refusal = std::get_if<Refusal>(&d)) return fail(refusal->reason, refusal->why);
    const auto& m = std::get<Message>(d);
    if (const auto* f = as<Failure>(m); f != nullptr && f->id == MessageId::failure2) {
        reason_ = f->reason;
        detail_ = "the host ended the transaction: " + std::string(failure_reason_name(f->reason));
        state_ = State::failed;
        return;
    }
    if (state_ != State::negotiate && transaction_of(m) != tid_)
        return fail(FailureReason::incorrect_message, "a message for transaction " + std::to_string(transaction_of(m)) +
                                                          ", not " + std::to_string(tid_));
    if (state_ == State::negotiate && as<Negotiate>(m) != nullptr) return negotiated(*as<Negotiate>(m));
    if (state_ == State::reply && as<Reply>(m) != nullptr) return replied(*as<Reply>(m));
    if (state_ == State::success2 && as<Success2>(m) != nullptr) {
        state_ = State::done;
        return;
    }
    fail(FailureReason::incorrect_message, "a message out of order in the transaction");
}

void ControllerExchange::negotiated(const Negotiate& n) {
    tid_ = n.transaction;
    if (n.sc_c != 0) return fail(FailureReason::concat_mismatch, "the host asks for secure channel concatenation");
    const auto h = std::find_if(policy_.hashes.begin(), policy_.hashes.end(),
                                [&](Hash x) { return offered(n.hashes, x); });
    if (h == policy_.hashes.end()) return fail(FailureReason::hash_unusable, "no hash the host offers is allowed");
    const auto g = std::find_if(policy_.dh_groups.begin(), policy_.dh_groups.end(),
                                [&](DhGroup x) { return offered(n.dh_groups, x); });
    if (g == policy_.dh_groups.end())
        return fail(FailureReason::dh_group_unusable, "no DH group the host offers is allowed");
    hash_ = *h;
    group_ = *g;
    auto c1 = random_bytes(hash_length(hash_));
    if (!c1) return fail(FailureReason::failed, c1.error().message());
    c1_ = std::move(*c1);
    if (group_ != DhGroup::null) {
        auto key = DhKey::generate(group_);
        if (!key) return fail(FailureReason::failed, key.error().message());
        dh_.emplace(std::move(*key));
    }
    state_ = State::send_challenge;
}

void ControllerExchange::replied(const Reply& r) {
    const std::size_t hl = hash_length(hash_);
    if (r.response.size() != hl)
        return fail(FailureReason::hash_unusable, "the reply's response is " + std::to_string(r.response.size()) +
                                                      " bytes, " + std::string(hash_name(hash_)) + "'s are " +
                                                      std::to_string(hl));
    SecretBytes ks;
    if (group_ != DhGroup::null) {
        auto s = dh_->shared_secret(r.dh_value);
        if (!s) return fail(FailureReason::incorrect_payload, s.error().message());
        ks = std::move(*s);
    } else if (!r.dh_value.empty()) {
        return fail(FailureReason::incorrect_payload, "a DH value in the reply to a null-group challenge");
    }
    const auto c1 = group_ == DhGroup::null ? c1_ : augmented_challenge(hash_, ks.view(), c1_);
    const auto kh = transform_key(policy_.host_secret, policy_.host_nqn);
    const auto expected = host_response({hash_, kh.view(), c1, s1_, tid_, 0, policy_.host_nqn, policy_.subsystem_nqn});
    if (!same_bytes(expected, r.response))
        return fail(FailureReason::failed, "the host's response does not prove its secret");
    if (!r.challenge.empty()) {
        if (!policy_.ctrl_secret)
            return fail(FailureReason::failed, "the host asks the controller to authenticate, and it has no secret");
        const auto c2 = group_ == DhGroup::null ? r.challenge : augmented_challenge(hash_, ks.view(), r.challenge);
        const auto kc = transform_key(*policy_.ctrl_secret, policy_.subsystem_nqn);
        r2_ = controller_response({hash_, kc.view(), c2, r.seqnum, tid_, 0, policy_.host_nqn, policy_.subsystem_nqn});
    }
    dh_.reset();
    state_ = State::send_success1;
}

std::vector<std::uint8_t> ControllerExchange::on_receive() {
    switch (state_) {
    case State::send_challenge:
        state_ = State::reply;
        return encode(Challenge{tid_, hash_, group_, s1_, c1_, dh_ ? dh_->public_value() : std::vector<std::uint8_t>{}});
    case State::send_success1:
        state_ = r2_.empty() ? State::done : State::success2;
        return encode(Success1{tid_, static_cast<std::uint8_t>(hash_length(hash_)), r2_});
    case State::send_failure:
        break;
    default:
        reason_ = FailureReason::incorrect_message;
        detail_ = "an Authentication Receive with no message to return";
        break;
    }
    state_ = State::failed;
    return encode(Failure{MessageId::failure1, tid_, *reason_});
}

// ---- host -------------------------------------------------------------------

HostExchange::HostExchange(HostPolicy policy, std::uint16_t transaction, std::uint32_t seqnum)
    : policy_(std::move(policy)), tid_(transaction), s2_(seqnum == 0 ? 1 : seqnum) {}

std::vector<std::uint8_t> HostExchange::fail(FailureReason r, std::string detail) {
    reason_ = r;
    detail_ = std::move(detail);
    return encode(Failure{MessageId::failure2, tid_, r});
}

std::vector<std::uint8_t> HostExchange::negotiate() const {
    Negotiate n{tid_, 0, {}, {}};
    for (auto h : policy_.hashes) n.hashes.push_back(static_cast<std::uint8_t>(h));
    for (auto g : policy_.dh_groups) n.dh_groups.push_back(static_cast<std::uint8_t>(g));
    return encode(n);
}

std::optional<Message> HostExchange::take(std::span<const std::uint8_t> data,
                                          std::optional<std::vector<std::uint8_t>>& answer) {
    auto d = decode(data);
    if (auto* refusal = std::get_if<Refusal>(&d)) {
        answer = fail(refusal->reason, refusal->why);
        return std::nullopt;
    }
    auto& m = std::get<Message>(d);
    if (const auto* f = as<Failure>(m); f != nullptr && f->id == MessageId::failure1) {
        by_controller_ = true;
        reason_ = f->reason;
        detail_ = "the controller refused: " + std::string(failure_reason_name(f->reason));
        answer.reset();
        return std::nullopt;
    }
    return std::move(m);
}

std::optional<std::vector<std::uint8_t>> HostExchange::on_challenge(std::span<const std::uint8_t> data) {
    std::optional<std::vector<std::uint8_t>> answer;
    const auto m = take(data, answer);
    if (!m) return answer;
    const auto* ch = as<Challenge>(*m);
    if (ch == nullptr || ch->transaction != tid_)
        return fail(FailureReason::incorrect_message, "expected the controller's challenge for this transaction");
    if (std::find(policy_.hashes.begin(), policy_.hashes.end(), ch->hash) == policy_.hashes.end())
        return fail(FailureReason::hash_unusable, "the controller chose a hash the host did not offer");
    if (std::find(policy_.dh_groups.begin(), policy_.dh_groups.end(), ch->dh_group) == policy_.dh_groups.end())
        return fail(FailureReason::dh_group_unusable, "the controller chose a DH group the host did not offer");
    hash_ = ch->hash;
    Reply reply{tid_, 0, {}, {}, {}};
    SecretBytes ks;
    if (ch->dh_group != DhGroup::null) {
        auto key = DhKey::generate(ch->dh_group);
        if (!key) return fail(FailureReason::failed, key.error().message());
        auto s = key->shared_secret(ch->dh_value);
        if (!s) return fail(FailureReason::incorrect_payload, s.error().message());
        ks = std::move(*s);
        reply.dh_value = key->public_value();
    }
    auto augment = [&](const std::vector<std::uint8_t>& c) {
        return ch->dh_group == DhGroup::null ? c : augmented_challenge(hash_, ks.view(), c);
    };
    const auto kh = transform_key(policy_.host_secret, policy_.host_nqn);
    reply.response = host_response(
        {hash_, kh.view(), augment(ch->challenge), ch->seqnum, tid_, 0, policy_.host_nqn, policy_.subsystem_nqn});
    if (policy_.ctrl_secret) {
        auto c2 = random_bytes(hash_length(hash_));
        if (!c2) return fail(FailureReason::failed, c2.error().message());
        c2_ = std::move(*c2);
        const auto kc = transform_key(*policy_.ctrl_secret, policy_.subsystem_nqn);
        expected_r2_ = controller_response(
            {hash_, kc.view(), augment(c2_), s2_, tid_, 0, policy_.host_nqn, policy_.subsystem_nqn});
        reply.challenge = c2_;
        reply.seqnum = s2_;
    }
    challenged_ = true;
    return encode(reply);
}

std::optional<std::vector<std::uint8_t>> HostExchange::on_result(std::span<const std::uint8_t> data) {
    if (!challenged_ || reason_) return fail(FailureReason::incorrect_message, "a result before the reply was sent");
    std::optional<std::vector<std::uint8_t>> answer;
    const auto m = take(data, answer);
    if (!m) return answer;
    const auto* s1 = as<Success1>(*m);
    if (s1 == nullptr || s1->transaction != tid_)
        return fail(FailureReason::incorrect_message, "expected the controller's Success1 for this transaction");
    if (s1->hash_length != hash_length(hash_))
        return fail(FailureReason::hash_unusable, "Success1's HL is not the chosen hash's length");
    done_ = true;
    if (expected_r2_.empty()) return std::nullopt;
    if (s1->response.empty()) return fail(FailureReason::failed, "the controller did not answer the host's challenge");
    if (!same_bytes(s1->response, expected_r2_))
        return fail(FailureReason::failed, "the controller's response does not prove its secret");
    return encode(Success2{tid_});
}

} // namespace rpm::nvmf::auth
