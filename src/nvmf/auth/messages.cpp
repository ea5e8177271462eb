// DH-HMAC-CHAP messages: encoding, and decoding that trusts no length
// (layouts in nvmf/auth/messages.hpp).
#include "nvmf/auth/messages.hpp"

#include "nvmf/wire.hpp"

#include <algorithm>

namespace rpm::nvmf::auth {
namespace {

using wire::get16;
using wire::get32;
using wire::put16;
using wire::put32;

constexpr std::uint8_t kCommon = 0x00;  // AUTH-TYPE of negotiate and failure messages
constexpr std::uint8_t kDhchap = 0x01;  // AUTH-TYPE of the DH-HMAC-CHAP messages
constexpr std::size_t kDescriptor = 64;
constexpr std::size_t kDhListAt = 30;   // DH group ids start here in a descriptor's id list
constexpr std::size_t kIdList = 60;

Refusal refuse(FailureReason r, std::string why) { return Refusal{r, std::move(why)}; }
Refusal payload(std::string why) { return refuse(FailureReason::incorrect_payload, std::move(why)); }

std::vector<std::uint8_t> header(std::size_t size, std::uint8_t type, MessageId id, std::uint16_t tid) {
    std::vector<std::uint8_t> b(size, 0);
    b[0] = type;
    b[1] = static_cast<std::uint8_t>(id);
    put16(&b[4], tid);
    return b;
}

std::variant<Message, Refusal> negotiate(std::span<const std::uint8_t> b) {
    if (b.size() < 8) return payload("AUTH_Negotiate shorter than its 8-byte header");
    Negotiate m;
    m.transaction = get16(&b[4]);
    m.sc_c = b[6];
    const std::size_t napd = b[7];
    if (napd == 0) return refuse(FailureReason::not_usable, "AUTH_Negotiate offers no protocol (NAPD 0)");
    if (b.size() != 8 + napd * kDescriptor)
        return payload("AUTH_Negotiate is " + std::to_string(b.size()) + " bytes for " + std::to_string(napd) +
                       " descriptors (expected " + std::to_string(8 + napd * kDescriptor) + ")");
    bool found = false;
    for (std::size_t i = 0; i < napd; ++i) {
        const auto d = b.subspan(8 + i * kDescriptor, kDescriptor);
        if (d[0] != kAuthId) continue;  // another protocol: not ours to use
        const std::size_t halen = d[2], dhlen = d[3];
        if (halen > kDhListAt || dhlen > kIdList - kDhListAt)
            return payload("AUTH_Negotiate's DH-HMAC-CHAP descriptor lists " + std::to_string(halen) + " hashes and " +
                           std::to_string(dhlen) + " DH groups (at most 30 each)");
        if (found) return payload("AUTH_Negotiate has two DH-HMAC-CHAP descriptors");
        found = true;
        m.hashes.assign(d.begin() + 4, d.begin() + 4 + static_cast<std::ptrdiff_t>(halen));
        m.dh_groups.assign(d.begin() + 4 + kDhListAt, d.begin() + 4 + static_cast<std::ptrdiff_t>(kDhListAt + dhlen));
    }
    if (!found) return refuse(FailureReason::not_usable, "AUTH_Negotiate does not offer DH-HMAC-CHAP");
    return Message{std::move(m)};
}

std::variant<Message, Refusal> challenge(std::span<const std::uint8_t> b) {
    if (b.size() < 16) return payload("DH-HMAC-CHAP_Challenge shorter than its 16-byte header");
    Challenge m;
    m.transaction = get16(&b[4]);
    const std::size_t hl = b[6];
    const auto h = hash_from_id(b[8]);
    if (!h) return refuse(FailureReason::hash_unusable, "DH-HMAC-CHAP_Challenge names hash id " + std::to_string(b[8]));
    const auto g = dh_group_from_id(b[9]);
    if (!g) return refuse(FailureReason::dh_group_unusable, "DH-HMAC-CHAP_Challenge names DH group id " + std::to_string(b[9]));
    m.hash = *h;
    m.dh_group = *g;
    const std::size_t dhvlen = get16(&b[10]);
    m.seqnum = get32(&b[12]);
    if (hl != hash_length(*h))
        return refuse(FailureReason::hash_unusable, "DH-HMAC-CHAP_Challenge's HL " + std::to_string(hl) + " is not " +
                                                        std::string(hash_name(*h)) + "'s length");
    if (dhvlen != dh_value_length(*g))
        return payload("DH-HMAC-CHAP_Challenge's DH value is " + std::to_string(dhvlen) + " bytes, " +
                       std::string(dh_group_name(*g)) + "'s are " + std::to_string(dh_value_length(*g)));
    if (b.size() != 16 + hl + dhvlen)
        return payload("DH-HMAC-CHAP_Challenge is " + std::to_string(b.size()) + " bytes, its lengths say " +
                       std::to_string(16 + hl + dhvlen));
    m.challenge.assign(b.begin() + 16, b.begin() + 16 + static_cast<std::ptrdiff_t>(hl));
    m.dh_value.assign(b.begin() + 16 + static_cast<std::ptrdiff_t>(hl), b.end());
    return Message{std::move(m)};
}

std::variant<Message, Refusal> reply(std::span<const std::uint8_t> b) {
    if (b.size() < 16) return payload("DH-HMAC-CHAP_Reply shorter than its 16-byte header");
    Reply m;
    m.transaction = get16(&b[4]);
    const std::size_t hl = b[6];
    const bool cvalid = (b[8] & 0x01) != 0;
    const std::size_t dhvlen = get16(&b[10]);
    m.seqnum = get32(&b[12]);
    if (hl != 32 && hl != 48 && hl != 64)
        return refuse(FailureReason::hash_unusable, "DH-HMAC-CHAP_Reply's HL " + std::to_string(hl) + " is no hash's length");
    if (b.size() != 16 + 2 * hl + dhvlen)
        return payload("DH-HMAC-CHAP_Reply is " + std::to_string(b.size()) + " bytes, its lengths say " +
                       std::to_string(16 + 2 * hl + dhvlen));
    const auto* p = b.data() + 16;
    m.response.assign(p, p + hl);
    if (cvalid) m.challenge.assign(p + hl, p + 2 * hl);
    m.dh_value.assign(p + 2 * hl, b.data() + b.size());
    // Without a challenge the sequence number means nothing (Linux 6.12
    // sends one anyway): it is not checked, and not used.
    if (!cvalid) m.seqnum = 0;
    return Message{std::move(m)};
}

std::variant<Message, Refusal> success1(std::span<const std::uint8_t> b) {
    if (b.size() < 16) return payload("DH-HMAC-CHAP_Success1 shorter than its 16-byte header");
    Success1 m;
    m.transaction = get16(&b[4]);
    m.hash_length = b[6];
    const bool rvalid = (b[8] & 0x01) != 0;
    if (rvalid) {
        if (b.size() != 16u + m.hash_length)
            return payload("DH-HMAC-CHAP_Success1 is " + std::to_string(b.size()) + " bytes for a " +
                           std::to_string(m.hash_length) + "-byte response");
        m.response.assign(b.begin() + 16, b.end());
    } else if (b.size() != 16 && b.size() != 16u + m.hash_length) {
        return payload("DH-HMAC-CHAP_Success1 without a response is " + std::to_string(b.size()) + " bytes");
    }
    return Message{std::move(m)};
}

std::variant<Message, Refusal> failure(std::span<const std::uint8_t> b, MessageId id) {
    if (b.size() < 8) return payload("AUTH_Failure shorter than its 8 bytes");
    Failure m;
    m.id = id;
    m.transaction = get16(&b[4]);
    const std::uint8_t exp = b[7];
    m.reason = (exp >= 1 && exp <= 7) ? static_cast<FailureReason>(exp) : FailureReason::failed;
    return Message{m};
}

} // namespace

std::string_view failure_reason_name(FailureReason r) {
    switch (r) {
    case FailureReason::failed: return "authentication failed";
    case FailureReason::not_usable: return "authentication protocol not usable";
    case FailureReason::concat_mismatch: return "secure channel concatenation mismatch";
    case FailureReason::hash_unusable: return "hash function not usable";
    case FailureReason::dh_group_unusable: return "DH group not usable";
    case FailureReason::incorrect_payload: return "incorrect payload";
    case FailureReason::incorrect_message: return "incorrect protocol message";
    }
    return "unknown reason";
}

std::variant<Message, Refusal> decode(std::span<const std::uint8_t> b) {
    if (b.size() < 8) return payload("an authentication message shorter than 8 bytes");
    if (b.size() > kMaxMessage) return payload("an authentication message of " + std::to_string(b.size()) + " bytes");
    const std::uint8_t type = b[0];
    const auto id = static_cast<MessageId>(b[1]);
    if (type == kCommon) {
        switch (id) {
        case MessageId::negotiate: return negotiate(b);
        case MessageId::failure1:
        case MessageId::failure2: return failure(b, id);
        default: break;
        }
    } else if (type == kDhchap) {
        switch (id) {
        case MessageId::challenge: return challenge(b);
        case MessageId::reply: return reply(b);
        case MessageId::success1: return success1(b);
        case MessageId::success2:
            if (b.size() != 16) return payload("DH-HMAC-CHAP_Success2 is not 16 bytes");
            return Message{Success2{get16(&b[4])}};
        default: break;
        }
    }
    return refuse(FailureReason::incorrect_message,
                  "unknown authentication message (type " + std::to_string(type) + ", id " + std::to_string(b[1]) + ")");
}

std::vector<std::uint8_t> encode(const Negotiate& m) {
    auto b = header(8 + kDescriptor, kCommon, MessageId::negotiate, m.transaction);
    b[6] = m.sc_c;
    b[7] = 1;
    auto* d = &b[8];
    d[0] = kAuthId;
    const std::size_t halen = std::min(m.hashes.size(), kDhListAt);
    const std::size_t dhlen = std::min(m.dh_groups.size(), kIdList - kDhListAt);
    d[2] = static_cast<std::uint8_t>(halen);
    d[3] = static_cast<std::uint8_t>(dhlen);
    std::copy_n(m.hashes.begin(), halen, d + 4);
    std::copy_n(m.dh_groups.begin(), dhlen, d + 4 + kDhListAt);
    return b;
}

std::vector<std::uint8_t> encode(const Challenge& m) {
    auto b = header(16 + m.challenge.size() + m.dh_value.size(), kDhchap, MessageId::challenge, m.transaction);
    b[6] = static_cast<std::uint8_t>(m.challenge.size());
    b[8] = static_cast<std::uint8_t>(m.hash);
    b[9] = static_cast<std::uint8_t>(m.dh_group);
    put16(&b[10], static_cast<std::uint16_t>(m.dh_value.size()));
    put32(&b[12], m.seqnum);
    std::copy(m.challenge.begin(), m.challenge.end(), b.begin() + 16);
    std::copy(m.dh_value.begin(), m.dh_value.end(), b.begin() + 16 + static_cast<std::ptrdiff_t>(m.challenge.size()));
    return b;
}

std::vector<std::uint8_t> encode(const Reply& m) {
    const std::size_t hl = m.response.size();
    auto b = header(16 + 2 * hl + m.dh_value.size(), kDhchap, MessageId::reply, m.transaction);
    b[6] = static_cast<std::uint8_t>(hl);
    b[8] = m.challenge.empty() ? 0 : 1;
    put16(&b[10], static_cast<std::uint16_t>(m.dh_value.size()));
    put32(&b[12], m.challenge.empty() ? 0 : m.seqnum);
    std::copy(m.response.begin(), m.response.end(), b.begin() + 16);
    std::copy_n(m.challenge.begin(), std::min(hl, m.challenge.size()), b.begin() + 16 + static_cast<std::ptrdiff_t>(hl));
    std::copy(m.dh_value.begin(), m.dh_value.end(), b.begin() + 16 + static_cast<std::ptrdiff_t>(2 * hl));
    return b;
}

std::vector<std::uint8_t> encode(const Success1& m) {
    auto b = header(16 + m.hash_length, kDhchap, MessageId::success1, m.transaction);
    b[6] = m.hash_length;
    if (!m.response.empty()) {
        b[8] = 1;
        std::copy_n(m.response.begin(), std::min<std::size_t>(m.response.size(), m.hash_length), b.begin() + 16);
    }
    return b;
}

std::vector<std::uint8_t> encode(const Success2& m) { return header(16, kDhchap, MessageId::success2, m.transaction); }

std::vector<std::uint8_t> encode(const Failure& m) {
    auto b = header(8, kCommon, m.id, m.transaction);
    b[6] = 0x01;  // reason code: authentication failure
    b[7] = static_cast<std::uint8_t>(m.reason);
    return b;
}

std::uint16_t transaction_of(const Message& m) {
    return std::visit([](const auto& x) { return x.transaction; }, m);
}

} // namespace rpm::nvmf::auth
