// DH-HMAC-CHAP secrets: the "DHHC-1:TT:<base64>:" representation (NVMe Base
// Specification 2.0, 8.13.5.8), random keys, secret files.
#include "nvmf/auth/auth.hpp"

#include "core/base64.hpp"
#include "core/unique_fd.hpp"

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <zlib.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace rpm::nvmf::auth {
namespace {

constexpr std::string_view kPrefix = "DHHC-1:";
constexpr std::size_t kMaxSecretFile = 4096;

Error bad(std::string why) { return Error(errc::invalid_argument, "DH-HMAC-CHAP secret: " + std::move(why)); }

bool key_length_ok(std::size_t n) { return n == 32 || n == 48 || n == 64; }

std::uint32_t crc32_of(std::span<const std::uint8_t> b) {
    return static_cast<std::uint32_t>(crc32(crc32(0L, Z_NULL, 0), b.data(), static_cast<uInt>(b.size())));
}

} // namespace

SecretBytes& SecretBytes::operator=(const SecretBytes& o) {
    if (this != &o) {
        OPENSSL_cleanse(bytes_.data(), bytes_.size());
        bytes_ = o.bytes_;
    }
    return *this;
}

SecretBytes& SecretBytes::operator=(SecretBytes&& o) noexcept {
    if (this != &o) {
        OPENSSL_cleanse(bytes_.data(), bytes_.size());
        bytes_ = std::move(o.bytes_);
        o.bytes_.clear();
    }
    return *this;
}

SecretBytes::~SecretBytes() { OPENSSL_cleanse(bytes_.data(), bytes_.size()); }

Result<Secret> parse_secret(std::string_view text) {
    // Files written by hand or by nvme gen-dhchap-key end with a newline.
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.remove_suffix(1);
    if (text.substr(0, kPrefix.size()) != kPrefix) return bad("does not start with DHHC-1:");
    text.remove_prefix(kPrefix.size());
    if (text.size() < 3 || text[2] != ':' || text[0] != '0' || text[1] < '0' || text[1] > '3')
        return bad("the transform after DHHC-1: must be 00 (none), 01, 02 or 03 (SHA-256/384/512)");
    Secret s;
    s.transform = static_cast<std::uint8_t>(text[1] - '0');
    text.remove_prefix(3);
    if (text.empty() || text.back() != ':') return bad("the base64 key must end with ':'");
    text.remove_suffix(1);
    auto raw = detail::unbase64(text);
    if (!raw) return bad("the key is not base64");
    const std::span<const std::uint8_t> all(reinterpret_cast<const std::uint8_t*>(raw->data()), raw->size());
    const SecretBytes wipe(all);  // the decoded copy is wiped with it
    OPENSSL_cleanse(raw->data(), raw->size());
    if (all.size() < 4 || !key_length_ok(all.size() - 4))
        return bad("the key is " + std::to_string(all.size() < 4 ? 0 : all.size() - 4) +
                   " bytes; it must be 32, 48 or 64 (plus its 4-byte CRC)");
    const auto key = wipe.view().first(wipe.size() - 4);
    const auto* c = wipe.view().data() + key.size();
    const std::uint32_t stored = std::uint32_t(c[0]) | std::uint32_t(c[1]) << 8 | std::uint32_t(c[2]) << 16 |
                                 std::uint32_t(c[3]) << 24;
    if (stored != crc32_of(key)) return bad("the key's CRC-32 does not match (a mistyped or truncated secret)");
    s.key = SecretBytes(key);
    return s;
}

std::string format_secret(const Secret& s) {
    std::string raw(s.key.view().begin(), s.key.view().end());
    const std::uint32_t crc = crc32_of(s.key.view());
    for (int i = 0; i < 4; ++i) raw.push_back(static_cast<char>(crc >> (8 * i)));
    std::string out = std::string(kPrefix) + "0" + static_cast<char>('0' + s.transform) + ":" + detail::base64(raw) + ":";
    OPENSSL_cleanse(raw.data(), raw.size());
    return out;
}

Result<Secret> generate_secret(std::size_t key_length, std::uint8_t transform) {
    if (!key_length_ok(key_length))
        return Error(errc::invalid_argument, "DH-HMAC-CHAP key length " + std::to_string(key_length) +
                                                 ": it must be 32, 48 or 64 bytes");
    if (transform > 3)
        return Error(errc::invalid_argument, "DH-HMAC-CHAP key transform " + std::to_string(transform) +
                                                 ": it must be 0 (none) or 1..3 (SHA-256/384/512)");
    auto key = random_bytes(key_length);
    if (!key) return key.error();
    Secret s;
    s.key = SecretBytes(*key);
    OPENSSL_cleanse(key->data(), key->size());
    s.transform = transform;
    return s;
}

Result<Secret> read_secret_file(const std::string& path) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    if (fd.get() < 0) {
        const int e = errno;
        const auto code = e == ENOENT ? errc::path_not_found : e == EACCES ? errc::permission_denied : errc::io_error;
        return Error(code, "secret file " + path + ": " + std::strerror(e));
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return Error(errc::io_error, "secret file " + path + ": " + std::strerror(errno));
    if (!S_ISREG(st.st_mode)) return Error(errc::invalid_argument, "secret file " + path + " is not a regular file");
    if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
        char mode[8];
        std::snprintf(mode, sizeof mode, "%03o", static_cast<unsigned>(st.st_mode & 0777));
        return Error(errc::permission_denied,
                     "secret file " + path + " may be read or written by others (mode " + mode + "); chmod 600 it");
    }
    if (st.st_size > static_cast<off_t>(kMaxSecretFile))
        return Error(errc::invalid_argument, "secret file " + path + " is larger than a secret (" +
                                                 std::to_string(st.st_size) + " bytes)");
    std::string text(static_cast<std::size_t>(st.st_size), '\0');
    std::size_t got = 0;
    while (got < text.size()) {
        const ssize_t n = ::read(fd.get(), text.data() + got, text.size() - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += static_cast<std::size_t>(n);
    }
    text.resize(got);
    auto s = parse_secret(text);
    OPENSSL_cleanse(text.data(), text.size());
    if (!s) return Error(s.error().code(), "secret file " + path + ": " + s.error().message());
    return s;
}

} // namespace rpm::nvmf::auth
