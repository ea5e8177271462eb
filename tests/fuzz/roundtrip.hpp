// Shared by the fuzz targets and the seed generator: decode a body by its
// type and, when it decodes, check that encoding the result gives back the
// very same bytes. Decoders accept exactly one encoding of each message
// (booleans 0/1, no trailing bytes, lengths that match), so any difference
// is a bug in either direction.
#pragma once

#include "protocol/protocol.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <vector>

namespace rpm::proto::fuzz {

[[noreturn]] inline void fail(const char* what) {
    std::fprintf(stderr, "fuzz check failed: %s\n", what);
    std::abort();
}

inline void require(bool ok, const char* what) {
    if (!ok) fail(what);
}

/// The frame `out` must hold exactly one frame whose header matches and
/// whose payload equals `body`.
inline void expect_same(const std::vector<std::byte>& out, Type type, std::uint32_t request_id,
                        std::span<const std::byte> body) {
    auto h = parse_header(out, 0xffffffffu);
    require(h.has_value(), "re-encoded header does not parse");
    require(h->type == type && h->request_id == request_id, "re-encoded header differs");
    require(h->length == body.size() && out.size() == kHeaderSize + body.size(), "re-encoded length differs");
    require(body.empty() || std::memcmp(out.data() + kHeaderSize, body.data(), body.size()) == 0,
            "re-encoded body differs");
}

template <class M>
void reencode(const Result<M>& m, Type type, std::uint32_t request_id, std::span<const std::byte> body) {
    if (!m) {
        require(m.error() == errc::invalid_argument, "decoder failed with a code other than invalid_argument");
        require(!m.error().detail().empty(), "decoder failed without a detail");
        return;
    }
    std::vector<std::byte> out;
    encode(out, request_id, *m);
    expect_same(out, type, request_id, body);
}

/// Decode `body` as a payload of `type` and check the round trip. Message
/// has no body decoder; its framing is checked instead.
inline void check_body(Type type, std::uint32_t request_id, std::span<const std::byte> body) {
    switch (type) {
    case Type::hello: return reencode(decode_hello(body), type, request_id, body);
    case Type::auth: return reencode(decode_auth(body), type, request_id, body);
    case Type::welcome: return reencode(decode_welcome(body), type, request_id, body);
    case Type::open_region: return reencode(decode_open_region(body), type, request_id, body);
    case Type::region: return reencode(decode_region(body), type, request_id, body);
    case Type::write: return reencode(decode_write(body), type, request_id, body);
    case Type::read: return reencode(decode_read(body), type, request_id, body);
    case Type::atomic_write: return reencode(decode_atomic_write(body), type, request_id, body);
    case Type::flush: return reencode(decode_flush(body), type, request_id, body);
    case Type::response: return reencode(decode_response(body), type, request_id, body);
    case Type::persist: return reencode(decode_persist(body), type, request_id, body);
    case Type::message: {
        std::vector<std::byte> out;
        encode_message(out, request_id, body);
        return expect_same(out, type, request_id, body);
    }
    case Type::goodbye: {
        // Empty: an orderly close; otherwise a status and a message.
        if (body.empty()) {
            std::vector<std::byte> out;
            encode_goodbye(out, request_id);
            return expect_same(out, type, request_id, body);
        }
        return reencode(decode_goodbye(body), type, request_id, body);
    }
    }
}

} // namespace rpm::proto::fuzz
