// DH-HMAC-CHAP's computed values: transformed keys, augmented challenges and
// the two responses (formulas in nvmf/auth/auth.hpp), on OpenSSL's HMAC.
#include "nvmf/auth/auth.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/core_names.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#include <array>
#include <cstdlib>
#include <initializer_list>

namespace rpm::nvmf::auth {
namespace {

const EVP_MD* md_of(Hash h) {
    switch (h) {
    case Hash::sha256: return EVP_sha256();
    case Hash::sha384: return EVP_sha384();
    case Hash::sha512: return EVP_sha512();
    }
    std::abort();
}

// HMAC over several pieces (OpenSSL 3's EVP_MAC). A MAC that silently
// failed could let a host in, so an OpenSSL failure here is fatal.
std::vector<std::uint8_t> hmac(Hash h, std::span<const std::uint8_t> key,
                               std::initializer_list<std::span<const std::uint8_t>> pieces) {
    static EVP_MAC* const mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
    static const std::uint8_t empty = 0;
    if (mac == nullptr) std::abort();
    EVP_MAC_CTX* ctx = EVP_MAC_CTX_new(mac);
    if (ctx == nullptr) std::abort();
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, const_cast<char*>(hash_name(h).data()), 0),
        OSSL_PARAM_construct_end(),
    };
    std::vector<std::uint8_t> out(hash_length(h));
    std::size_t len = 0;
    bool ok = EVP_MAC_init(ctx, key.empty() ? &empty : key.data(), key.size(), params) == 1;
    for (auto p : pieces) ok = ok && EVP_MAC_update(ctx, p.data(), p.size()) == 1;
    ok = ok && EVP_MAC_final(ctx, out.data(), &len, out.size()) == 1 && len == out.size();
    EVP_MAC_CTX_free(ctx);
    if (!ok) std::abort();
    return out;
}

std::span<const std::uint8_t> bytes(std::string_view s) {
    return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

std::vector<std::uint8_t> response(const ResponseInput& in, std::string_view label, std::string_view first_nqn,
                                   std::string_view second_nqn) {
    const std::array<std::uint8_t, 4> seq{std::uint8_t(in.seqnum), std::uint8_t(in.seqnum >> 8),
                                          std::uint8_t(in.seqnum >> 16), std::uint8_t(in.seqnum >> 24)};
    const std::array<std::uint8_t, 2> tid{std::uint8_t(in.transaction), std::uint8_t(in.transaction >> 8)};
    const std::array<std::uint8_t, 1> sc_c{in.sc_c};
    const std::array<std::uint8_t, 1> zero{0};
    return hmac(in.hash, in.key,
                {in.challenge, seq, tid, sc_c, bytes(label), bytes(first_nqn), zero, bytes(second_nqn)});
}

} // namespace

std::optional<Hash> hash_from_id(std::uint8_t id) {
    if (id >= 1 && id <= 3) return static_cast<Hash>(id);
    return std::nullopt;
}

std::optional<DhGroup> dh_group_from_id(std::uint8_t id) {
    if (id <= 5) return static_cast<DhGroup>(id);
    return std::nullopt;
}

std::size_t hash_length(Hash h) {
    switch (h) {
    case Hash::sha256: return 32;
    case Hash::sha384: return 48;
    case Hash::sha512: return 64;
    }
    std::abort();
}

std::string_view hash_name(Hash h) {
    switch (h) {
    case Hash::sha256: return "sha256";
    case Hash::sha384: return "sha384";
    case Hash::sha512: return "sha512";
    }
    std::abort();
}

std::string_view dh_group_name(DhGroup g) {
    switch (g) {
    case DhGroup::null: return "null";
    case DhGroup::ffdhe2048: return "ffdhe2048";
    case DhGroup::ffdhe3072: return "ffdhe3072";
    case DhGroup::ffdhe4096: return "ffdhe4096";
    case DhGroup::ffdhe6144: return "ffdhe6144";
    case DhGroup::ffdhe8192: return "ffdhe8192";
    }
    std::abort();
}

std::size_t dh_value_length(DhGroup g) {
    switch (g) {
    case DhGroup::null: return 0;
    case DhGroup::ffdhe2048: return 256;
    case DhGroup::ffdhe3072: return 384;
    case DhGroup::ffdhe4096: return 512;
    case DhGroup::ffdhe6144: return 768;
    case DhGroup::ffdhe8192: return 1024;
    }
    std::abort();
}

Result<Hash> parse_hash(std::string_view name) {
    for (std::uint8_t id = 1; id <= 3; ++id)
        if (hash_name(static_cast<Hash>(id)) == name) return static_cast<Hash>(id);
    return Error(errc::invalid_argument, "hash '" + std::string(name) + "': expected sha256, sha384 or sha512");
}

Result<DhGroup> parse_dh_group(std::string_view name) {
    for (std::uint8_t id = 0; id <= 5; ++id)
        if (dh_group_name(static_cast<DhGroup>(id)) == name) return static_cast<DhGroup>(id);
    return Error(errc::invalid_argument,
                 "DH group '" + std::string(name) + "': expected null, ffdhe2048, ffdhe3072, ffdhe4096, ffdhe6144 or ffdhe8192");
}

SecretBytes transform_key(const Secret& s, std::string_view nqn) {
    const auto h = hash_from_id(s.transform);
    if (!h) return s.key;
    auto t = hmac(*h, s.key.view(), {bytes(nqn), bytes("NVMe-over-Fabrics")});
    SecretBytes out(t);
    OPENSSL_cleanse(t.data(), t.size());
    return out;
}

std::vector<std::uint8_t> augmented_challenge(Hash h, std::span<const std::uint8_t> session_key,
                                              std::span<const std::uint8_t> challenge) {
    std::vector<std::uint8_t> hashed(hash_length(h));
    unsigned int len = 0;
    if (EVP_Digest(session_key.data(), session_key.size(), hashed.data(), &len, md_of(h), nullptr) != 1 ||
        len != hashed.size())
        std::abort();
    auto out = hmac(h, hashed, {challenge});
    OPENSSL_cleanse(hashed.data(), hashed.size());
    return out;
}

std::vector<std::uint8_t> host_response(const ResponseInput& in) {
    return response(in, "HostHost", in.host_nqn, in.subsystem_nqn);
}

std::vector<std::uint8_t> controller_response(const ResponseInput& in) {
    return response(in, "Controller", in.subsystem_nqn, in.host_nqn);
}

bool same_bytes(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b) {
    return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

Result<std::vector<std::uint8_t>> random_bytes(std::size_t n) {
    std::vector<std::uint8_t> out(n);
    if (n > 0 && RAND_bytes(out.data(), static_cast<int>(n)) != 1)
        return Error(errc::io_error, "OpenSSL could not produce random bytes (RAND_bytes)");
    return out;
}

} // namespace rpm::nvmf::auth
