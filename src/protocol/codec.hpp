// Bounds-checked little-endian encoding for the protocol's message bodies.
//
// Writer appends to a frame being built; Reader walks a received body and
// never reads past its end. Reader is sticky: the first failure is kept
// (with the field it happened in) and every later read is a no-op, so a
// decoder is a straight list of field reads followed by finish(), with no
// check after each field.
#pragma once

#include "protocol/protocol.hpp"

#include <rpm/error.hpp>
#include <rpm/result.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rpm::proto::detail {

/// The "no method" value of an optional flush::Method on the wire.
inline constexpr std::uint8_t kNoMethod = 0xff;

/// A little-endian T from the first sizeof(T) bytes of `s` (the caller has
/// checked there are that many).
template <class T>
T load_le(std::span<const std::byte> s) noexcept {
    T v = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) v = static_cast<T>(v | (static_cast<T>(s[i]) << (8 * i)));
    return v;
}

/// Builds one frame in place: reserves the header, appends body fields,
/// and finish() writes the header with the body's length.
class FrameWriter {
public:
    FrameWriter(std::vector<std::byte>& out, Type type, std::uint32_t request_id);
    void u8(std::uint8_t v) { out_.push_back(static_cast<std::byte>(v)); }
    void u16(std::uint16_t v) { le(v); }
    void u32(std::uint32_t v) { le(v); }
    void u64(std::uint64_t v) { le(v); }
    void boolean(bool v) { u8(v ? 1 : 0); }
    /// A u8 enum: its C++ value is its wire value.
    template <class E>
    void enumeration(E e) {
        u8(static_cast<std::uint8_t>(e));
    }
    /// A flush::Method, or kNoMethod for none.
    void method(std::optional<flush::Method> m) { u8(m ? static_cast<std::uint8_t>(*m) : kNoMethod); }
    void bytes(std::span<const std::byte> b) { out_.insert(out_.end(), b.begin(), b.end()); }
    void bytes(std::span<const std::uint8_t> b);
    /// u16 length + bytes. A string longer than 0xffff is cut there; the
    /// peer still rejects it, since every u16 string has a smaller limit.
    void str16(std::string_view s);
    /// u32 length + bytes.
    void str32(std::string_view s);
    void bytes32(std::span<const std::uint8_t> b);
    /// Writes the header. `external`: bytes of the body that the sender
    /// sends after this buffer from elsewhere (a caller's data), counted in
    /// the length but not appended.
    void finish(std::size_t external = 0);

private:
    template <class T>
    void le(T v) {
        for (std::size_t i = 0; i < sizeof(T); ++i)
            out_.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xff));
    }
    std::vector<std::byte>& out_;
    std::size_t start_;
    Header header_;
};

/// Reads one message body. `message` names it in error details.
class Reader {
public:
    Reader(std::span<const std::byte> body, std::string_view message) noexcept
        : body_(body), message_(message) {}

    void u8(std::uint8_t& v, std::string_view field);
    void u16(std::uint16_t& v, std::string_view field);
    void u32(std::uint32_t& v, std::string_view field);
    void u64(std::uint64_t& v, std::string_view field);
    /// 0 or 1; anything else is malformed (keeps encodings canonical).
    void boolean(bool& v, std::string_view field);
    /// A u8 enum whose wire values are 0..count-1.
    template <class E>
    void enumeration(E& v, std::uint8_t count, std::string_view field) {
        std::uint8_t raw = 0;
        u8(raw, field);
        if (ok() && raw >= count) return fail_value(field, raw);
        if (ok()) v = static_cast<E>(raw);
    }
    /// 0xff = none, else a flush::Method.
    void method(std::optional<flush::Method>& v, std::string_view field);
    template <std::size_t N>
    void bytes(std::array<std::uint8_t, N>& v, std::string_view field) {
        auto s = take(N, field);
        if (ok())
            for (std::size_t i = 0; i < N; ++i) v[i] = static_cast<std::uint8_t>(s[i]);
    }
    void str16(std::string& v, std::size_t limit, std::string_view field);
    /// The same checks, the string left in the body (valid while it is).
    void str16(std::string_view& v, std::size_t limit, std::string_view field);
    void str32(std::string& v, std::string_view field);
    void bytes32(std::vector<std::uint8_t>& v, std::string_view field);
    /// Everything not read yet (the data of Write and Response).
    std::span<const std::byte> rest() noexcept;

    [[nodiscard]] bool ok() const noexcept { return !error_; }
    [[nodiscard]] std::size_t remaining() const noexcept { return body_.size() - pos_; }
    /// Record a semantic failure (a count over its limit, ...).
    void fail(std::string detail);

    /// The decoded message, or the first failure; trailing bytes are one.
    template <class T>
    Result<T> finish(T m) {
        if (ok() && remaining() != 0) fail_trailing();
        if (error_) return Error(errc::invalid_argument, std::move(*error_));
        return m;
    }

private:
    std::span<const std::byte> take(std::size_t n, std::string_view field);
    void fail_value(std::string_view field, unsigned value);
    void fail_trailing();

    std::span<const std::byte> body_;
    std::size_t pos_ = 0;
    std::string_view message_;
    std::optional<std::string> error_;
};

} // namespace rpm::proto::detail
