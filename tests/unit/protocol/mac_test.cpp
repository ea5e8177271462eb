// The handshake MACs against vectors computed outside rpm, their
// sensitivity to every input, the constant-time compare, and nonces.
#include "samples.hpp"

#include <gtest/gtest.h>

#include <set>

namespace {
using namespace proto_test;
using Mac = std::array<std::uint8_t, kMacSize>;

Mac from_hex(std::string_view hex) {
    Mac m{};
    for (std::size_t i = 0; i < kMacSize; ++i)
        m[i] = static_cast<std::uint8_t>(std::stoi(std::string(hex.substr(2 * i, 2)), nullptr, 16));
    return m;
}

const auto kChallenge = counting<kNonceSize>(0x00);  // 00 01 .. 1f
const auto kNonce = counting<kNonceSize>(0x20);      // 20 21 .. 3f

// Input, as bytes: "rpm-auth-v1" || 00..1f || 08 00 || "client-1" || 20..3f.
// Computed with:
//   python3 -c "import sys; ch=bytes(range(32)); no=bytes(range(32,64)); cid=b'client-1';
//     sys.stdout.buffer.write(b'rpm-auth-v1'+ch+len(cid).to_bytes(2,'little')+cid+no)" > auth.bin
//   openssl dgst -sha256 -mac HMAC -macopt key:rpm-test-secret auth.bin
TEST(ProtoMac, AuthMacKnownAnswer) {
    EXPECT_EQ(auth_mac("rpm-test-secret", kChallenge, "client-1", kNonce),
              from_hex("41af917d288ec5bf0573f8af26272d3526fd961ff008a3009371bbad5d529c84"));
}

// Same input with an empty key. `openssl dgst` refuses "key:" with nothing
// after it, so this one came from Python's hmac module:
//   python3 -c "import hmac,hashlib; print(hmac.new(b'', open('auth.bin','rb').read(),
//     hashlib.sha256).hexdigest())"
TEST(ProtoMac, AuthMacKnownAnswerWithEmptySecret) {
    EXPECT_EQ(auth_mac("", kChallenge, "client-1", kNonce),
              from_hex("e7c31b25fdffd0769d730a0d7bb4d6a31a9733fa7e31999741f5f328ddb40988"));
}

// Input: "rpm-server-v1" || 20..3f (client nonce) || 00..1f (challenge).
//   python3 -c "import sys; sys.stdout.buffer.write(b'rpm-server-v1'+bytes(range(32,64))+bytes(range(32)))" > server.bin
//   openssl dgst -sha256 -mac HMAC -macopt key:rpm-test-secret server.bin
TEST(ProtoMac, ServerMacKnownAnswer) {
    EXPECT_EQ(server_mac("rpm-test-secret", kNonce, kChallenge),
              from_hex("07227e1fdfa6fa8cb447a430cc2b7ed6b307b8e7b89c58d3c40864c04bc9fdc5"));
}

TEST(ProtoMac, AuthMacChangesWithEveryInput) {
    const Mac base = auth_mac("secret", kChallenge, "client", kNonce);
    EXPECT_EQ(auth_mac("secret", kChallenge, "client", kNonce), base);
    EXPECT_NE(auth_mac("secreT", kChallenge, "client", kNonce), base);
    EXPECT_NE(auth_mac("secret", kChallenge, "clienT", kNonce), base);
    EXPECT_NE(auth_mac("secret", kChallenge, "", kNonce), base);
    for (std::size_t i = 0; i < kNonceSize; ++i) {
        auto c = kChallenge;
        c[i] ^= 1;
        EXPECT_NE(auth_mac("secret", c, "client", kNonce), base) << "challenge byte " << i;
        auto n = kNonce;
        n[i] ^= 0x80;
        EXPECT_NE(auth_mac("secret", kChallenge, "client", n), base) << "nonce byte " << i;
    }
    // Challenge and nonce are not interchangeable.
    EXPECT_NE(auth_mac("secret", kNonce, "client", kChallenge), base);
}

TEST(ProtoMac, ServerMacChangesWithEveryInput) {
    const Mac base = server_mac("secret", kNonce, kChallenge);
    EXPECT_NE(server_mac("Secret", kNonce, kChallenge), base);
    EXPECT_NE(server_mac("secret", kChallenge, kNonce), base);
    for (std::size_t i = 0; i < kNonceSize; ++i) {
        auto c = kChallenge;
        c[i] ^= 1;
        EXPECT_NE(server_mac("secret", kNonce, c), base) << "challenge byte " << i;
        auto n = kNonce;
        n[i] ^= 1;
        EXPECT_NE(server_mac("secret", n, kChallenge), base) << "nonce byte " << i;
    }
}

TEST(ProtoMac, ClientAndServerProofsNeverCoincide) {
    // Labels separate the two, so a client's proof is useless as a server's.
    EXPECT_NE(auth_mac("s", kChallenge, "", kNonce), server_mac("s", kNonce, kChallenge));
    EXPECT_NE(auth_mac("s", kChallenge, "", kNonce), server_mac("s", kChallenge, kNonce));
}

TEST(ProtoMac, IdLengthPrefixSeparatesIdFromNonce) {
    // Without the length prefix, "a" + nonce and "" + nonce' could collide
    // when the nonce starts with 'a'; the prefix makes the split explicit.
    auto n = kNonce;
    n[0] = 'a';
    EXPECT_NE(auth_mac("s", kChallenge, "a", kNonce), auth_mac("s", kChallenge, "", n));
}

TEST(ProtoMac, MacEqual) {
    const Mac a = from_hex("41af917d288ec5bf0573f8af26272d3526fd961ff008a3009371bbad5d529c84");
    Mac b = a;
    EXPECT_TRUE(mac_equal(a, b));
    for (std::size_t i = 0; i < kMacSize; ++i) {
        b = a;
        b[i] ^= 0x01;
        EXPECT_FALSE(mac_equal(a, b)) << "byte " << i;
        EXPECT_FALSE(mac_equal(b, a)) << "byte " << i;
    }
    EXPECT_TRUE(mac_equal(Mac{}, Mac{}));
}

TEST(ProtoMac, NoncesAreUnique) {
    std::set<std::array<std::uint8_t, kNonceSize>> seen;
    const std::array<std::uint8_t, kNonceSize> zero{};
    for (int i = 0; i < 10000; ++i) {
        auto n = random_nonce();
        EXPECT_NE(n, zero);
        EXPECT_TRUE(seen.insert(n).second) << "repeated nonce after " << i;
    }
}

TEST(ProtoMac, NonceBytesLookRandom) {
    // Every byte value should appear across 1000 nonces (32000 bytes); a
    // counter or a constant fill would not pass.
    std::array<int, 256> counts{};
    for (int i = 0; i < 1000; ++i)
        for (auto b : random_nonce()) ++counts[b];
    for (int v = 0; v < 256; ++v) EXPECT_GT(counts[static_cast<std::size_t>(v)], 0) << v;
}

} // namespace
