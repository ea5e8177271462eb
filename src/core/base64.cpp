#include "core/base64.hpp"

#include <openssl/evp.h>

#include <climits>

namespace rpm::detail {

std::string base64(std::string_view bytes) {
    std::string out(4 * ((bytes.size() + 2) / 3), '\0');
    const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                  reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
    out.resize(static_cast<std::size_t>(n));
    return out;
}

Result<std::string> unbase64(std::string_view text) {
    const Error bad(errc::invalid_argument, "not base64 (RFC 4648, padded)");
    if (text.size() % 4 != 0 || text.size() > INT_MAX) return bad;
    // EVP_DecodeBlock skips leading blanks and accepts '=' in the middle;
    // neither is base64 as written by anyone we read from.
    std::size_t pad = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '=') {
            ++pad;
            continue;
        }
        const bool alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
                           c == '/';
        if (!alpha || pad > 0) return bad;
    }
    if (pad > 2) return bad;
    std::string out(text.size() / 4 * 3, '\0');
    const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                  reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
    if (n < 0) return bad;
    // EVP_DecodeBlock counts the padding as zero bytes.
    out.resize(static_cast<std::size_t>(n) - pad);
    return out;
}

} // namespace rpm::detail
