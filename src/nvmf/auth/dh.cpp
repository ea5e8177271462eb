// Finite-field Diffie-Hellman for DH-HMAC-CHAP: RFC 7919's ffdhe groups by
// name in OpenSSL 3 (EVP_PKEY "DH" with a group name), public values and
// shared secrets as big-endian numbers padded to the prime's length, which
// is how the specification (and Linux) put them on the wire.
#include "nvmf/auth/auth.hpp"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/dh.h>
#include <openssl/evp.h>
#include <openssl/params.h>

namespace rpm::nvmf::auth {

// Outside the anonymous namespace: DhKey::Impl (external linkage) holds a
// Pkey, and GCC warns (-Wsubobject-linkage) when this file is part of a
// unity build.
struct PkeyFree {
    void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
using Pkey = std::unique_ptr<EVP_PKEY, PkeyFree>;

namespace {

struct CtxFree {
    void operator()(EVP_PKEY_CTX* p) const { EVP_PKEY_CTX_free(p); }
};
using Ctx = std::unique_ptr<EVP_PKEY_CTX, CtxFree>;

Error openssl_failed(const char* what) {
    return Error(errc::io_error, std::string("DH-HMAC-CHAP: OpenSSL could not ") + what);
}

OSSL_PARAM group_param(DhGroup g) {
    return OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, const_cast<char*>(dh_group_name(g).data()), 0);
}

} // namespace

struct DhKey::Impl {
    Pkey key;
};

DhKey::DhKey(DhGroup g, std::unique_ptr<Impl> impl, std::vector<std::uint8_t> pub)
    : group_(g), impl_(std::move(impl)), public_(std::move(pub)) {}
DhKey::DhKey(DhKey&&) noexcept = default;
DhKey& DhKey::operator=(DhKey&&) noexcept = default;
DhKey::~DhKey() = default;

Result<DhKey> DhKey::generate(DhGroup g) {
    if (g == DhGroup::null) return Error(errc::invalid_argument, "DH-HMAC-CHAP: the null group has no key");
    Ctx ctx(EVP_PKEY_CTX_new_from_name(nullptr, "DH", nullptr));
    if (!ctx || EVP_PKEY_keygen_init(ctx.get()) != 1) return openssl_failed("set up DH key generation");
    OSSL_PARAM params[] = {group_param(g), OSSL_PARAM_construct_end()};
    EVP_PKEY* raw = nullptr;
    if (EVP_PKEY_CTX_set_params(ctx.get(), params) != 1 || EVP_PKEY_generate(ctx.get(), &raw) != 1)
        return openssl_failed(("generate a key in " + std::string(dh_group_name(g))).c_str());
    auto impl = std::make_unique<Impl>();
    impl->key.reset(raw);
    unsigned char* enc = nullptr;
    const std::size_t n = EVP_PKEY_get1_encoded_public_key(raw, &enc);
    if (n == 0 || enc == nullptr) return openssl_failed("encode a DH public value");
    std::vector<std::uint8_t> pub(enc, enc + n);
    OPENSSL_free(enc);
    if (pub.size() != dh_value_length(g)) return openssl_failed("encode a DH public value at the group's length");
    return DhKey(g, std::move(impl), std::move(pub));
}

Result<SecretBytes> DhKey::shared_secret(std::span<const std::uint8_t> peer) const {
    const Error bad(errc::invalid_argument, "DH-HMAC-CHAP: the peer's DH value is not a public value of " +
                                                std::string(dh_group_name(group_)));
    if (peer.size() != dh_value_length(group_)) return bad;
    // The peer's key: the group, then its public value (OpenSSL checks it
    // lies in 2..p-2 when deriving).
    Pkey peer_key(EVP_PKEY_new());
    if (!peer_key || EVP_PKEY_copy_parameters(peer_key.get(), impl_->key.get()) != 1)
        return openssl_failed("copy the DH group");
    if (EVP_PKEY_set1_encoded_public_key(peer_key.get(), peer.data(), peer.size()) != 1) return bad;
    Ctx ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, impl_->key.get(), nullptr));
    if (!ctx || EVP_PKEY_derive_init(ctx.get()) != 1 || EVP_PKEY_CTX_set_dh_pad(ctx.get(), 1) != 1)
        return openssl_failed("set up DH derivation");
    if (EVP_PKEY_derive_set_peer_ex(ctx.get(), peer_key.get(), 1) != 1) return bad;
    std::vector<std::uint8_t> out(dh_value_length(group_));
    std::size_t len = out.size();
    if (EVP_PKEY_derive(ctx.get(), out.data(), &len) != 1 || len != out.size()) {
        OPENSSL_cleanse(out.data(), out.size());
        return bad;
    }
    SecretBytes s(out);
    OPENSSL_cleanse(out.data(), out.size());
    return s;
}

} // namespace rpm::nvmf::auth
