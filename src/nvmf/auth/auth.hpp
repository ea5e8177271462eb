#pragma once
// NVMe in-band authentication, DH-HMAC-CHAP (NVMe Base Specification 2.0,
// 8.13.5 and the Authentication Send/Receive fabrics commands): the secrets
// in their text representation, the hash functions and Diffie-Hellman
// groups, and the values both sides compute. No state and no I/O here; the
// exchange itself is in exchange.hpp, the messages in messages.hpp.
//
// The formulas, as the specification gives them (and as Linux's host and
// nvmet compute them), with H the negotiated hash and HMAC over it:
//   transformed key  Kh' = HMAC(Kh, NQNh || "NVMe-over-Fabrics") when the
//                    secret says to transform it (its hash id); else Kh.
//                    The controller's key Kc' with NQNc instead.
//   augmented        with a DH group: C' = HMAC(H(Ks), C), Ks = g^xy mod p;
//   challenge        with the null group: C' = C.
//   host response    R1 = HMAC(Kh', C1' || S1 || T_ID || SC_C || "HostHost" ||
//                    NQNh || 0x00 || NQNc)
//   controller       R2 = HMAC(Kc', C2' || S2 || T_ID || SC_C || "Controller" ||
//   response         NQNc || 0x00 || NQNh)
// S1, S2 little-endian 32-bit, T_ID little-endian 16-bit, SC_C one byte.

#include <rpm/result.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rpm::nvmf::auth {

// Bytes that hold a secret: wiped (OPENSSL_cleanse) when they go away.
class SecretBytes {
public:
    SecretBytes() = default;
    explicit SecretBytes(std::span<const std::uint8_t> b) : bytes_(b.begin(), b.end()) {}
    SecretBytes(const SecretBytes&) = default;
    SecretBytes(SecretBytes&& o) noexcept : bytes_(std::move(o.bytes_)) { o.bytes_.clear(); }
    SecretBytes& operator=(const SecretBytes& o);
    SecretBytes& operator=(SecretBytes&& o) noexcept;
    ~SecretBytes();
    [[nodiscard]] std::span<const std::uint8_t> view() const { return bytes_; }
    [[nodiscard]] std::size_t size() const { return bytes_.size(); }
    [[nodiscard]] bool empty() const { return bytes_.empty(); }
    friend bool operator==(const SecretBytes& a, const SecretBytes& b) { return a.bytes_ == b.bytes_; }

private:
    std::vector<std::uint8_t> bytes_;
};

// ---- hash functions and DH groups (identifiers as on the wire) -------------
enum class Hash : std::uint8_t { sha256 = 0x01, sha384 = 0x02, sha512 = 0x03 };
enum class DhGroup : std::uint8_t {
    null = 0x00, ffdhe2048 = 0x01, ffdhe3072 = 0x02, ffdhe4096 = 0x03, ffdhe6144 = 0x04, ffdhe8192 = 0x05,
};

/// RETURN VALUE: the hash for a wire id (1..3), or nullopt for any other.
std::optional<Hash> hash_from_id(std::uint8_t id);
/// RETURN VALUE: the group for a wire id (0..5), or nullopt for any other.
std::optional<DhGroup> dh_group_from_id(std::uint8_t id);
/// RETURN VALUE: 32, 48 or 64: the digest length, which is also the
/// challenge and response length of an exchange with this hash.
std::size_t hash_length(Hash h);
/// RETURN VALUE: "sha256", "sha384", "sha512" / "null", "ffdhe2048", ...
std::string_view hash_name(Hash h);
std::string_view dh_group_name(DhGroup g);
/// RETURN VALUE: the group's public value length in bytes (its prime's), 0 for null.
std::size_t dh_value_length(DhGroup g);
/// Parse the names above (as rpm-nvmf's options take them).
/// ERRORS: errc::invalid_argument naming the accepted ones.
Result<Hash> parse_hash(std::string_view name);
Result<DhGroup> parse_dh_group(std::string_view name);

// ---- secrets ---------------------------------------------------------------
// A DH-HMAC-CHAP secret: "DHHC-1:TT:<base64 of key || CRC-32(key), LE>:"
// with TT 00 (use the key as is) or 01/02/03 (transform it with SHA-256/384/
// 512 and the NQN first); the key is 32, 48 or 64 bytes.
struct Secret {
    SecretBytes key;
    std::uint8_t transform = 0;  ///< 0, or a Hash id
};

/// ERRORS: errc::invalid_argument saying what is wrong (prefix, transform
/// id, base64, key length, CRC), never quoting the secret.
Result<Secret> parse_secret(std::string_view text);
/// RETURN VALUE: the text representation (which holds the secret).
std::string format_secret(const Secret& s);
/// A new random key (OpenSSL's RAND_bytes) of 32, 48 or 64 bytes.
/// ERRORS: errc::invalid_argument (another length, a transform id > 3),
/// errc::io_error (no randomness).
Result<Secret> generate_secret(std::size_t key_length, std::uint8_t transform);
/// Reads a secret from a file that only its owner may read or write (no
/// group or other permission bits): a secret readable by others is refused.
/// ERRORS: errc::permission_denied (the mode, or the OS refused),
/// errc::path_not_found, errc::invalid_argument (content), errc::io_error.
Result<Secret> read_secret_file(const std::string& path);

// ---- the computed values ---------------------------------------------------
/// Kh' (or Kc'): the secret's key, transformed with nqn when its transform
/// id says so.
SecretBytes transform_key(const Secret& s, std::string_view nqn);

/// C' = HMAC(H(Ks), C) (see above).
std::vector<std::uint8_t> augmented_challenge(Hash h, std::span<const std::uint8_t> session_key,
                                              std::span<const std::uint8_t> challenge);

struct ResponseInput {
    Hash hash = Hash::sha256;
    std::span<const std::uint8_t> key;        ///< Kh' or Kc'
    std::span<const std::uint8_t> challenge;  ///< C1' or C2' (hash_length bytes)
    std::uint32_t seqnum = 0;
    std::uint16_t transaction = 0;
    std::uint8_t sc_c = 0;
    std::string_view host_nqn;
    std::string_view subsystem_nqn;
};
/// R1, the host's response; R2, the controller's (formulas above).
std::vector<std::uint8_t> host_response(const ResponseInput& in);
std::vector<std::uint8_t> controller_response(const ResponseInput& in);

/// Equal-length comparison in constant time.
bool same_bytes(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b);
/// n random bytes (challenges). ERRORS: errc::io_error.
Result<std::vector<std::uint8_t>> random_bytes(std::size_t n);

// ---- finite-field Diffie-Hellman (RFC 7919 groups, OpenSSL) -----------------
// One side's ephemeral key pair for one exchange.
class DhKey {
public:
    /// ERRORS: errc::invalid_argument (the null group), errc::io_error (OpenSSL).
    static Result<DhKey> generate(DhGroup g);
    DhKey(DhKey&&) noexcept;
    DhKey& operator=(DhKey&&) noexcept;
    ~DhKey();
    /// g^x mod p, big-endian, dh_value_length(group) bytes.
    [[nodiscard]] const std::vector<std::uint8_t>& public_value() const { return public_; }
    /// Ks = peer^x mod p, big-endian, padded to the prime's length.
    /// ERRORS: errc::invalid_argument when peer is not a valid public value of
    /// the group (wrong length, 0, 1, p-1 or beyond p).
    Result<SecretBytes> shared_secret(std::span<const std::uint8_t> peer) const;

private:
    struct Impl;
    DhKey(DhGroup g, std::unique_ptr<Impl> impl, std::vector<std::uint8_t> pub);
    DhGroup group_;
    std::unique_ptr<Impl> impl_;
    std::vector<std::uint8_t> public_;
};

} // namespace rpm::nvmf::auth
