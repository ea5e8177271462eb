// Handshake authentication: HMAC-SHA256 proofs in both directions and the
// nonces they are computed over (docs/protocol.md, "MACs").
#include "protocol/protocol.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <cstdlib>
#include <limits>

namespace rpm::proto {
namespace {

// Domain-separation labels: a client proof can never be replayed as a
// server proof (or the reverse), even over the same two nonces.
constexpr std::string_view kAuthLabel = "rpm-auth-v1";
constexpr std::string_view kServerLabel = "rpm-server-v1";

void append(std::vector<std::uint8_t>& m, std::string_view s) {
    m.insert(m.end(), s.begin(), s.end());
}

void append(std::vector<std::uint8_t>& m, std::span<const std::uint8_t> b) {
    m.insert(m.end(), b.begin(), b.end());
}

std::array<std::uint8_t, kMacSize> hmac_sha256(std::string_view key, std::span<const std::uint8_t> msg) {
    // An empty key is legal HMAC; OpenSSL wants a non-null pointer for it.
    static const char empty = 0;
    const void* k = key.empty() ? &empty : key.data();
    if (key.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) std::abort();
    std::array<std::uint8_t, kMacSize> out{};
    unsigned int len = 0;
    // A MAC that silently failed would let anyone in, so failure is fatal.
    if (HMAC(EVP_sha256(), k, static_cast<int>(key.size()), msg.data(), msg.size(), out.data(), &len) ==
            nullptr ||
        len != kMacSize)
        std::abort();
    return out;
}

} // namespace

std::array<std::uint8_t, kMacSize> auth_mac(std::string_view secret,
                                            std::span<const std::uint8_t, kNonceSize> challenge,
                                            std::string_view client_id,
                                            std::span<const std::uint8_t, kNonceSize> client_nonce) {
    // The id is length-prefixed (as on the wire, at most 0xffff bytes) so
    // that the id/nonce boundary is unambiguous.
    client_id = client_id.substr(0, std::numeric_limits<std::uint16_t>::max());
    auto n = static_cast<std::uint16_t>(client_id.size());
    std::vector<std::uint8_t> m;
    m.reserve(kAuthLabel.size() + 2 * kNonceSize + 2 + client_id.size());
    append(m, kAuthLabel);
    append(m, challenge);
    m.push_back(static_cast<std::uint8_t>(n & 0xff));
    m.push_back(static_cast<std::uint8_t>(n >> 8));
    append(m, client_id);
    append(m, client_nonce);
    return hmac_sha256(secret, m);
}

std::array<std::uint8_t, kMacSize> server_mac(std::string_view secret,
                                              std::span<const std::uint8_t, kNonceSize> client_nonce,
                                              std::span<const std::uint8_t, kNonceSize> challenge) {
    std::vector<std::uint8_t> m;
    m.reserve(kServerLabel.size() + 2 * kNonceSize);
    append(m, kServerLabel);
    append(m, client_nonce);
    append(m, challenge);
    return hmac_sha256(secret, m);
}

bool mac_equal(std::span<const std::uint8_t, kMacSize> a, std::span<const std::uint8_t, kMacSize> b) noexcept {
    return CRYPTO_memcmp(a.data(), b.data(), kMacSize) == 0;
}

std::array<std::uint8_t, kNonceSize> random_nonce() {
    std::array<std::uint8_t, kNonceSize> n{};
    // A predictable challenge would allow replaying a recorded Auth; better
    // to stop than to hand one out.
    if (RAND_bytes(n.data(), static_cast<int>(n.size())) != 1) std::abort();
    return n;
}

} // namespace rpm::proto
