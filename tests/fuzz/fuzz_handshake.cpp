// libFuzzer target: the handshake messages from arbitrary bytes, and the
// MAC functions over whatever fields decode.
//
// Input: one selector byte (mod 5: hello, auth, welcome, open_region,
// region), then the body. A decoded message must re-encode to the same
// bytes; its fields then go through auth_mac / server_mac / mac_equal the
// way a server or client would use them: MACs must be deterministic and
// bound to every input, and mac_equal must agree with ==.
#include "roundtrip.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace {
using namespace rpm::proto;
using Mac = std::array<std::uint8_t, kMacSize>;
using Nonce = std::array<std::uint8_t, kNonceSize>;

constexpr std::string_view kSecret = "fuzz-secret";
constexpr Nonce kChallenge{1, 2, 3, 4, 5, 6, 7, 8};

void check_equal(const Mac& a, const Mac& b) {
    fuzz::require(mac_equal(a, b) == (a == b), "mac_equal disagrees with ==");
    fuzz::require(mac_equal(a, a) && mac_equal(b, b), "mac_equal(x, x) is false");
}

/// What a server does with an Auth: recompute and compare. The fuzzer can
/// learn the expected MAC from the comparison (libFuzzer watches memcmp),
/// so a match is allowed; what must hold is that the match is bound to
/// every input: the same MAC never verifies for a changed id, nonce or
/// challenge.
void server_checks(const Auth& a) {
    Mac expected = auth_mac(kSecret, kChallenge, a.client_id, a.client_nonce);
    fuzz::require(expected == auth_mac(kSecret, kChallenge, a.client_id, a.client_nonce), "auth_mac varies");
    check_equal(expected, a.mac);
    if (!mac_equal(expected, a.mac)) return;
    Nonce nonce = a.client_nonce;
    nonce[0] ^= 1;
    Nonce challenge = kChallenge;
    challenge[0] ^= 1;
    fuzz::require(!mac_equal(auth_mac(kSecret, kChallenge, a.client_id, nonce), a.mac), "MAC ignores the nonce");
    fuzz::require(!mac_equal(auth_mac(kSecret, challenge, a.client_id, a.client_nonce), a.mac),
                  "MAC ignores the challenge");
    fuzz::require(!mac_equal(auth_mac(kSecret, kChallenge, a.client_id + "x", a.client_nonce), a.mac),
                  "MAC ignores the client id");
    fuzz::require(!mac_equal(auth_mac("other", kChallenge, a.client_id, a.client_nonce), a.mac),
                  "MAC ignores the secret");
    fuzz::require(!mac_equal(server_mac(kSecret, a.client_nonce, kChallenge), a.mac),
                  "client proof accepted as server proof");
}

/// What a client does with a Welcome: check the proof over its own nonce.
void client_checks(const Welcome& w) {
    Mac expected = server_mac(kSecret, kChallenge, kChallenge);
    check_equal(expected, w.server_proof);
    if (mac_equal(expected, w.server_proof)) {
        Nonce other = kChallenge;
        other[kNonceSize - 1] ^= 0x80;
        fuzz::require(!mac_equal(server_mac(kSecret, other, kChallenge), w.server_proof), "proof ignores the nonce");
        fuzz::require(!mac_equal(server_mac(kSecret, kChallenge, other), w.server_proof),
                      "proof ignores the challenge");
    }
    // Arbitrary-length keys: the profile text as a secret.
    check_equal(server_mac(w.profile_json, kChallenge, kChallenge), w.server_proof);
}

template <class M, class Check>
void run(const rpm::Result<M>& m, Type type, std::span<const std::byte> body, Check check) {
    fuzz::reencode(m, type, 0, body);
    if (m) check(*m);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    std::span<const std::byte> body(reinterpret_cast<const std::byte*>(data + 1), size - 1);
    switch (data[0] % 5) {
    case 0:
        run(decode_hello(body), Type::hello, body, [](const Hello& h) {
            Mac a = server_mac(kSecret, h.challenge, h.challenge);
            check_equal(a, auth_mac(kSecret, h.challenge, "", h.challenge));
        });
        break;
    case 1: run(decode_auth(body), Type::auth, body, server_checks); break;
    case 2: run(decode_welcome(body), Type::welcome, body, client_checks); break;
    case 3:
        run(decode_open_region(body), Type::open_region, body, [](const OpenRegion& o) {
            // The name as both secret and client id: any length up to kMaxName.
            check_equal(auth_mac(o.name, kChallenge, o.name, kChallenge), auth_mac("", kChallenge, o.name, kChallenge));
        });
        break;
    default:
        run(decode_region(body), Type::region, body, [](const RegionGrant& g) {
            check_equal(server_mac(g.reason, kChallenge, kChallenge), auth_mac(g.reason, kChallenge, g.reason, kChallenge));
        });
        break;
    }
    return 0;
}
