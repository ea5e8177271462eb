// Base64 (RFC 4648, standard alphabet, padded), on OpenSSL's EVP block
// coder: etcd's JSON gateway carries bytes fields this way, and NVMe
// DH-HMAC-CHAP secrets ("DHHC-1:01:<base64>:") are written in it.
#pragma once

#include <rpm/result.hpp>

#include <string>
#include <string_view>

namespace rpm::detail {

/// RETURN VALUE: the padded encoding of bytes ("" for none).
std::string base64(std::string_view bytes);

/// RETURN VALUE: the bytes text encodes.
/// ERRORS: errc::invalid_argument when text is not padded base64 (a length
/// not a multiple of 4, a character outside the alphabet, '=' before the end).
Result<std::string> unbase64(std::string_view text);

} // namespace rpm::detail
