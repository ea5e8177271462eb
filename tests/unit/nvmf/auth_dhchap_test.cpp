// DH-HMAC-CHAP's computed values (src/nvmf/auth/dhchap.cpp, dh.cpp). The
// expected bytes were computed independently from the specification's
// formulas (nvmf/auth/auth.hpp) with Python's hmac and hashlib.
#include "nvmf/auth/auth.hpp"

#include <gtest/gtest.h>

#include <cstdio>

namespace {

using namespace rpm::nvmf::auth;

constexpr std::string_view kHostNqn = "nqn.2014-08.org.nvmexpress:uuid:4b1d0c2e-5a6f-4e1b-9c3d-2f7a8e6b5d40";
constexpr std::string_view kSubNqn = "nqn.2026-11.io.rpm:lab";

std::string hex(std::span<const std::uint8_t> b) {
    std::string s;
    char x[3];
    for (auto c : b) std::snprintf(x, sizeof x, "%02x", c), s += x;
    return s;
}

std::vector<std::uint8_t> seq(std::size_t n, unsigned mul, unsigned add) {
    std::vector<std::uint8_t> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>(i * mul + add);
    return v;
}

Secret secret(std::string_view text) {
    auto s = parse_secret(text);
    EXPECT_TRUE(s);
    return s ? *s : Secret{};
}

TEST(AuthDhchap, TransformsTheKeyWithTheNqnWhenTheSecretSaysSo) {
    const auto s = secret("DHHC-1:01:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:");
    EXPECT_EQ(hex(transform_key(s, kHostNqn).view()), "c75f3a7ba438c6b78f49694edd23f6040dd23063ba970a64291420c7400e1456");
    Secret untransformed = s;
    untransformed.transform = 0;
    EXPECT_EQ(transform_key(untransformed, kHostNqn), untransformed.key);
}

TEST(AuthDhchap, HostResponseMatchesTheFormula) {
    const auto kh = transform_key(secret("DHHC-1:01:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:"), kHostNqn);
    const auto c1 = seq(32, 7, 3);
    ResponseInput in{Hash::sha256, kh.view(), c1, 0x12345678, 0x0102, 0, kHostNqn, kSubNqn};
    EXPECT_EQ(hex(host_response(in)), "a22eecefedcefc38a048a668af796bf9856fd09977c095175f1ca9f4bc950882");
    // Every input is in it: change one and the response changes.
    auto other = in;
    other.transaction = 0x0103;
    EXPECT_NE(host_response(other), host_response(in));
    other = in;
    other.subsystem_nqn = "nqn.2026-11.io.rpm:other";
    EXPECT_NE(host_response(other), host_response(in));
    EXPECT_NE(controller_response(in), host_response(in)) << "the two directions must differ";
}

TEST(AuthDhchap, ControllerResponseMatchesTheFormula) {
    const auto kc = transform_key(
        secret("DHHC-1:02:oKGio6SlpqeoqaqrrK2ur7CxsrO0tba3uLm6u7y9vr/AwcLDxMXGx8jJysvMzc7PZqjjjw==:"), kSubNqn);
    const auto c2 = seq(48, 13, 1);
    ResponseInput in{Hash::sha384, kc.view(), c2, 0xdeadbeef, 0x0102, 0, kHostNqn, kSubNqn};
    EXPECT_EQ(hex(controller_response(in)),
              "4151dc780230c3d470c956842a0926ae6b316e466d52382973cd28fc015599e42fe43f4d84d73dbcebffad94ab84f311");
}

TEST(AuthDhchap, UntransformedKeyWithSha512) {
    const auto k = transform_key(
        secret("DHHC-1:00://79/Pv6+fj39vX08/Lx8O/u7ezr6uno5+bl5OPi4eDf3t3c29rZ2NfW1dTT0tHQz87NzMvKycjHxsXEw8LBwAAq4mo=:"),
        kHostNqn);
    const auto c = seq(64, 1, 0);
    ResponseInput in{Hash::sha512, k.view(), c, 1, 0, 0, kHostNqn, kSubNqn};
    EXPECT_EQ(hex(host_response(in)),
              "d6e0579c3ddbc09a52eecbfbde5e250a8358282f8bc8471233537b9eaf4098461618c5ba323ac8cd20da9fd5d17633bc697d9a9f48b45a3459432bb250ba23b1");
}

TEST(AuthDhchap, AugmentedChallengeIsHmacUnderTheHashedSessionKey) {
    const auto ks = seq(256, 5, 0);
    const auto c = seq(64, 1, 0);
    EXPECT_EQ(hex(augmented_challenge(Hash::sha512, ks, c)),
              "1f88b23fcb7db44fe1e3cb11002d9455873888b164561c4182e9f4c0ad2896b930ccd958b8f1f609e852171bbba8f5982921cf0bbe21ce56061def891bba2e4a");
}

TEST(AuthDhchap, NamesAndIdsOfHashesAndGroups) {
    EXPECT_EQ(hash_length(Hash::sha384), 48u);
    EXPECT_FALSE(hash_from_id(0));
    EXPECT_FALSE(hash_from_id(4));
    EXPECT_FALSE(dh_group_from_id(6));
    EXPECT_EQ(dh_value_length(DhGroup::ffdhe8192), 1024u);
    auto h = parse_hash("sha512");
    ASSERT_TRUE(h);
    EXPECT_EQ(*h, Hash::sha512);
    EXPECT_FALSE(parse_hash("md5"));
    auto g = parse_dh_group("ffdhe3072");
    ASSERT_TRUE(g);
    EXPECT_EQ(*g, DhGroup::ffdhe3072);
    EXPECT_FALSE(parse_dh_group("ecdh"));
    EXPECT_TRUE(same_bytes(seq(4, 1, 0), seq(4, 1, 0)));
    EXPECT_FALSE(same_bytes(seq(4, 1, 0), seq(4, 1, 1)));
    EXPECT_FALSE(same_bytes(seq(4, 1, 0), seq(5, 1, 0)));
}

class AuthDh : public ::testing::TestWithParam<DhGroup> {};

TEST_P(AuthDh, BothSidesDeriveTheSameSessionKey) {
    auto host = DhKey::generate(GetParam());
    auto ctrl = DhKey::generate(GetParam());
    ASSERT_TRUE(host) << host.error().message();
    ASSERT_TRUE(ctrl) << ctrl.error().message();
    EXPECT_EQ(host->public_value().size(), dh_value_length(GetParam()));
    EXPECT_NE(host->public_value(), ctrl->public_value());
    auto a = host->shared_secret(ctrl->public_value());
    auto b = ctrl->shared_secret(host->public_value());
    ASSERT_TRUE(a) << a.error().message();
    ASSERT_TRUE(b) << b.error().message();
    EXPECT_EQ(a->size(), dh_value_length(GetParam()));
    EXPECT_EQ(*a, *b);
}

TEST_P(AuthDh, RefusesPeerValuesOutsideTheGroup) {
    auto key = DhKey::generate(GetParam());
    ASSERT_TRUE(key);
    const std::size_t n = dh_value_length(GetParam());
    // 0, 1 and anything at or above p (all ones: RFC 7919's primes are
    // below 2^n - 1) would let the peer fix the shared secret.
    std::vector<std::uint8_t> zero(n, 0), one(n, 0), all(n, 0xff);
    one.back() = 1;
    auto self = key->public_value();
    for (const auto& bad : {zero, one, all, std::vector<std::uint8_t>(n - 1, 7), std::vector<std::uint8_t>(n + 1, 7)}) {
        auto s = key->shared_secret(bad);
        ASSERT_FALSE(s) << "a bad value of " << bad.size() << " bytes was accepted";
        EXPECT_EQ(s.error().code(), rpm::errc::invalid_argument);
    }
    EXPECT_TRUE(key->shared_secret(self)) << "its own public value is a valid one";
    EXPECT_FALSE(DhKey::generate(DhGroup::null));
}

INSTANTIATE_TEST_SUITE_P(Groups, AuthDh, ::testing::Values(DhGroup::ffdhe2048, DhGroup::ffdhe3072, DhGroup::ffdhe4096,
                                                                    DhGroup::ffdhe6144, DhGroup::ffdhe8192),
                         [](const auto& p) { return std::string(dh_group_name(p.param)); });

} // namespace
