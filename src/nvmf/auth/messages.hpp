#pragma once
// DH-HMAC-CHAP messages as they travel in Authentication Send (host to
// controller) and Authentication Receive (controller to host) data (NVMe
// Base Specification 2.0, 8.13.5; the layouts agree with Linux's
// include/linux/nvme.h):
//   AUTH_Negotiate      8-byte header (type 0, id 0x00, T_ID, SC_C, NAPD) and
//                       NAPD 64-byte protocol descriptors (AUTHID 1, HALEN,
//                       DHLEN, hash ids at 0.., DH group ids at 30..)
//   DH-HMAC-CHAP_       16-byte header (type 1, id 0x01, T_ID, HL, HASHID,
//   Challenge           DHGID, DHVLEN, SEQNUM), C1 (HL), the DH value (DHVLEN)
//   _Reply              16-byte header (type 1, id 0x02, T_ID, HL, CVALID,
//                       DHVLEN, SEQNUM = S2), R1 (HL), C2 (HL), DH value
//   _Success1           16-byte header (type 1, id 0x03, T_ID, HL, RVALID), R2 (HL)
//   _Success2           16 bytes (type 1, id 0x04, T_ID)
//   AUTH_Failure1/2     8 bytes (type 0, id 0xf1 / 0xf0, T_ID, reason code
//                       0x01, reason code explanation)
// Decoding checks every length against the bytes received and every id
// against the known ones; a message that fails says which failure reason the
// answer must carry.
#include "nvmf/auth/auth.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace rpm::nvmf::auth {

inline constexpr std::uint8_t kSecp = 0xe9;  ///< SECP of DH-HMAC-CHAP in Authentication Send/Receive
inline constexpr std::uint8_t kSpsp = 0x01;  ///< SPSP0 and SPSP1
inline constexpr std::uint8_t kAuthId = 0x01;  ///< a protocol descriptor's AUTHID: DH-HMAC-CHAP
inline constexpr std::size_t kMaxMessage = 4096;  ///< no valid message is larger (8192-bit DH value + 2 x 64 + 16)

enum class MessageId : std::uint8_t {
    negotiate = 0x00, challenge = 0x01, reply = 0x02, success1 = 0x03, success2 = 0x04,
    failure2 = 0xf0, failure1 = 0xf1,
};

// The reason code explanation of AUTH_Failure1/2 (the reason code is 0x01).
enum class FailureReason : std::uint8_t {
    failed = 0x01,             ///< authentication failed (a wrong response)
    not_usable = 0x02,         ///< no protocol in the negotiation is usable
    concat_mismatch = 0x03,    ///< secure channel concatenation mismatch
    hash_unusable = 0x04,      ///< no offered hash function is usable
    dh_group_unusable = 0x05,  ///< no offered DH group is usable
    incorrect_payload = 0x06,  ///< a length or value in the message is wrong
    incorrect_message = 0x07,  ///< a message out of order, or for another transaction
};
std::string_view failure_reason_name(FailureReason r);

struct Negotiate {
    std::uint16_t transaction = 0;
    std::uint8_t sc_c = 0;
    std::vector<std::uint8_t> hashes;     ///< ids as offered, unknown ones included
    std::vector<std::uint8_t> dh_groups;  ///< ids as offered
};
struct Challenge {
    std::uint16_t transaction = 0;
    Hash hash = Hash::sha256;
    DhGroup dh_group = DhGroup::null;
    std::uint32_t seqnum = 0;
    std::vector<std::uint8_t> challenge;  ///< C1, hash_length(hash) bytes
    std::vector<std::uint8_t> dh_value;   ///< the controller's g^y (empty for null)
};
struct Reply {
    std::uint16_t transaction = 0;
    std::uint32_t seqnum = 0;             ///< S2 (0 without a controller challenge)
    std::vector<std::uint8_t> response;   ///< R1
    std::vector<std::uint8_t> challenge;  ///< C2; empty when the host asks for no controller response
    std::vector<std::uint8_t> dh_value;   ///< the host's g^x
};
struct Success1 {
    std::uint16_t transaction = 0;
    std::uint8_t hash_length = 0;         ///< HL
    std::vector<std::uint8_t> response;   ///< R2; empty when RVALID is 0
};
struct Success2 {
    std::uint16_t transaction = 0;
};
struct Failure {
    MessageId id = MessageId::failure1;   ///< failure1 (from the controller) or failure2 (from the host)
    std::uint16_t transaction = 0;
    FailureReason reason = FailureReason::failed;
};

using Message = std::variant<Negotiate, Challenge, Reply, Success1, Success2, Failure>;

// Why a message was not accepted, and the reason to answer with.
struct Refusal {
    FailureReason reason = FailureReason::incorrect_payload;
    std::string why;
};

/// The message in bytes (what Authentication Send/Receive carry).
/// RETURN VALUE: the message, or a Refusal saying what is wrong with it.
std::variant<Message, Refusal> decode(std::span<const std::uint8_t> bytes);

std::vector<std::uint8_t> encode(const Negotiate& m);
std::vector<std::uint8_t> encode(const Challenge& m);
std::vector<std::uint8_t> encode(const Reply& m);
std::vector<std::uint8_t> encode(const Success1& m);
std::vector<std::uint8_t> encode(const Success2& m);
std::vector<std::uint8_t> encode(const Failure& m);

/// The transaction id of any message.
std::uint16_t transaction_of(const Message& m);

} // namespace rpm::nvmf::auth
