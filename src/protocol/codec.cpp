// The body encoder and decoder helpers (see codec.hpp).
#include "protocol/codec.hpp"

#include <cstdlib>
#include <limits>

namespace rpm::proto::detail {
namespace {

constexpr std::uint8_t kMethodCount = 3;
static_assert(static_cast<int>(flush::Method::native_flush) == kMethodCount - 1,
              "flush::Method's values are wire values (docs/protocol.md); append only");

std::string_view as_chars(std::span<const std::byte> s) noexcept {
    return {reinterpret_cast<const char*>(s.data()), s.size()};
}

} // namespace

FrameWriter::FrameWriter(std::vector<std::byte>& out, Type type, std::uint32_t request_id)
    : out_(out), start_(out.size()) {
    header_.type = type;
    header_.request_id = request_id;
    out_.resize(start_ + kHeaderSize);  // written by finish(), once the length is known
}

void FrameWriter::bytes(std::span<const std::uint8_t> b) {
    bytes(std::as_bytes(b));
}

void FrameWriter::str16(std::string_view s) {
    s = s.substr(0, std::numeric_limits<std::uint16_t>::max());
    u16(static_cast<std::uint16_t>(s.size()));
    bytes(std::as_bytes(std::span(s.data(), s.size())));
}

void FrameWriter::str32(std::string_view s) {
    bytes32(std::span(reinterpret_cast<const std::uint8_t*>(s.data()), s.size()));
}

void FrameWriter::bytes32(std::span<const std::uint8_t> b) {
    // Nothing that fits in a frame can be longer; finish() catches the rest.
    if (b.size() > std::numeric_limits<std::uint32_t>::max()) std::abort();
    u32(static_cast<std::uint32_t>(b.size()));
    bytes(b);
}

void FrameWriter::finish(std::size_t external) {
    std::size_t body = out_.size() - start_ - kHeaderSize + external;
    // A body the u32 length cannot describe is a caller bug that no peer
    // could ever accept; refusing loudly beats sending a corrupt stream.
    if (body > std::numeric_limits<std::uint32_t>::max()) std::abort();
    header_.length = static_cast<std::uint32_t>(body);
    write_header(std::span<std::byte, kHeaderSize>(out_.data() + start_, kHeaderSize), header_);
}

std::span<const std::byte> Reader::take(std::size_t n, std::string_view field) {
    if (!ok()) return {};
    if (remaining() < n) {
        fail(std::string(field) + ": truncated (needs " + std::to_string(n) + " bytes at offset " +
             std::to_string(pos_) + ", " + std::to_string(remaining()) + " left)");
        return {};
    }
    auto s = body_.subspan(pos_, n);
    pos_ += n;
    return s;
}

void Reader::u8(std::uint8_t& v, std::string_view field) {
    if (auto s = take(1, field); ok()) v = static_cast<std::uint8_t>(s[0]);
}

void Reader::u16(std::uint16_t& v, std::string_view field) {
    if (auto s = take(2, field); ok()) v = load_le<std::uint16_t>(s);
}

void Reader::u32(std::uint32_t& v, std::string_view field) {
    if (auto s = take(4, field); ok()) v = load_le<std::uint32_t>(s);
}

void Reader::u64(std::uint64_t& v, std::string_view field) {
    if (auto s = take(8, field); ok()) v = load_le<std::uint64_t>(s);
}

void Reader::boolean(bool& v, std::string_view field) {
    std::uint8_t raw = 0;
    u8(raw, field);
    if (ok() && raw > 1) return fail_value(field, raw);
    if (ok()) v = raw == 1;
}

void Reader::method(std::optional<flush::Method>& v, std::string_view field) {
    std::uint8_t raw = 0;
    u8(raw, field);
    if (!ok()) return;
    if (raw == kNoMethod) {
        v.reset();
    } else if (raw < kMethodCount) {
        v = static_cast<flush::Method>(raw);
    } else {
        fail_value(field, raw);
    }
}

void Reader::str16(std::string& v, std::size_t limit, std::string_view field) {
    std::string_view view;
    str16(view, limit, field);
    if (ok()) v = view;
}

void Reader::str16(std::string_view& v, std::size_t limit, std::string_view field) {
    std::uint16_t n = 0;
    u16(n, field);
    if (ok() && n > limit)
        return fail(std::string(field) + ": " + std::to_string(n) + " bytes exceed the limit of " +
                    std::to_string(limit));
    if (auto s = take(n, field); ok()) v = as_chars(s);
}

void Reader::str32(std::string& v, std::string_view field) {
    std::uint32_t n = 0;
    u32(n, field);
    if (auto s = take(n, field); ok()) v = as_chars(s);
}

void Reader::bytes32(std::vector<std::uint8_t>& v, std::string_view field) {
    std::uint32_t n = 0;
    u32(n, field);
    if (auto s = take(n, field); ok()) {
        auto u = reinterpret_cast<const std::uint8_t*>(s.data());
        v.assign(u, u + s.size());
    }
}

std::span<const std::byte> Reader::rest() noexcept {
    if (!ok()) return {};
    auto s = body_.subspan(pos_);
    pos_ = body_.size();
    return s;
}

void Reader::fail(std::string detail) {
    if (!error_) error_ = std::string(message_) + " body: " + std::move(detail);
}

void Reader::fail_value(std::string_view field, unsigned value) {
    fail(std::string(field) + ": unknown value " + std::to_string(value));
}

void Reader::fail_trailing() {
    fail(std::to_string(remaining()) + " trailing bytes after offset " + std::to_string(pos_));
}

} // namespace rpm::proto::detail
