// Frame headers and the stream-to-frame reader.
#include "transport/protocol/codec.hpp"

#include <string>

namespace rpm::proto {
namespace {

constexpr std::uint8_t kFirstType = static_cast<std::uint8_t>(Type::hello);
constexpr std::uint8_t kLastType = static_cast<std::uint8_t>(Type::goodbye);

template <class T>
T load(std::span<const std::byte> b, std::size_t at) noexcept {
    return detail::load_le<T>(b.subspan(at));
}

template <class T>
void store(std::span<std::byte, kHeaderSize> b, std::size_t at, T v) noexcept {
    for (std::size_t i = 0; i < sizeof(T); ++i) b[at + i] = static_cast<std::byte>((v >> (8 * i)) & 0xff);
}

std::string hex32(std::uint32_t v) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string s = "0x";
    for (int shift = 28; shift >= 0; shift -= 4) s += digits[(v >> shift) & 0xf];
    return s;
}

} // namespace

std::string_view type_name(Type t) noexcept {
    switch (t) {
    case Type::hello: return "hello";
    case Type::auth: return "auth";
    case Type::welcome: return "welcome";
    case Type::open_region: return "open_region";
    case Type::region: return "region";
    case Type::write: return "write";
    case Type::read: return "read";
    case Type::atomic_write: return "atomic_write";
    case Type::flush: return "flush";
    case Type::message: return "message";
    case Type::response: return "response";
    case Type::goodbye: return "goodbye";
    }
    return "invalid";
}

// Offsets: magic 0, type 4, flags 5, reserved 6, request_id 8, length 12.
Result<Header> parse_header(std::span<const std::byte> bytes, std::uint32_t max_payload) {
    if (bytes.size() < kHeaderSize)
        return Error(errc::invalid_argument, "frame header truncated: " + std::to_string(bytes.size()) +
                                                 " of " + std::to_string(kHeaderSize) + " bytes");
    if (auto magic = load<std::uint32_t>(bytes, 0); magic != kMagic)
        return Error(errc::invalid_argument, "frame header: bad magic " + hex32(magic) + " (expected " +
                                                 hex32(kMagic) + ", \"RPM1\")");
    auto type = load<std::uint8_t>(bytes, 4);
    if (type < kFirstType || type > kLastType)
        return Error(errc::invalid_argument, "frame header: unknown message type " + std::to_string(type));
    if (auto reserved = load<std::uint16_t>(bytes, 6); reserved != 0)
        return Error(errc::invalid_argument,
                     "frame header: reserved field is " + std::to_string(reserved) + ", must be 0");
    Header h;
    h.type = static_cast<Type>(type);
    h.flags = load<std::uint8_t>(bytes, 5);
    h.request_id = load<std::uint32_t>(bytes, 8);
    h.length = load<std::uint32_t>(bytes, 12);
    if (h.length > max_payload)
        return Error(errc::bad_size, "frame of " + std::to_string(h.length) + " bytes exceeds the limit of " +
                                         std::to_string(max_payload));
    return h;
}

void write_header(std::span<std::byte, kHeaderSize> out, const Header& h) noexcept {
    store(out, 0, kMagic);
    store(out, 4, static_cast<std::uint8_t>(h.type));
    store(out, 5, h.flags);
    store(out, 6, std::uint16_t{0});
    store(out, 8, h.request_id);
    store(out, 12, h.length);
}

FrameReader::FrameReader(std::uint32_t max_payload) : max_payload_(max_payload) {}

void FrameReader::feed(std::span<const std::byte> bytes) {
    if (error_) return;  // poisoned: the stream has lost its framing for good
    // Drop what next() has consumed before appending, so the buffer holds at
    // most one partial frame plus the unread frames of this feed. Spans from
    // next() are documented to die here.
    if (pos_ == buf_.size()) {
        buf_.clear();
    } else if (pos_ > 0) {
        buf_.erase(buf_.begin(), buf_.begin() + static_cast<std::ptrdiff_t>(pos_));
    }
    pos_ = 0;
    // A caller feeding huge chunks leaves a huge allocation behind; give it
    // back once drained rather than holding it for the connection's life.
    if (buf_.empty() && buf_.capacity() > kHeaderSize + std::size_t{max_payload_}) buf_.shrink_to_fit();
    buf_.insert(buf_.end(), bytes.begin(), bytes.end());
}

std::optional<std::pair<Header, std::span<const std::byte>>> FrameReader::next() {
    if (error_ || buffered() < kHeaderSize) return std::nullopt;
    std::span<const std::byte> pending(buf_.data() + pos_, buffered());
    // Parsed as soon as the header is complete, so an oversized frame is
    // refused before any of its payload is buffered.
    auto h = parse_header(pending, max_payload_);
    if (!h) {
        error_ = h.error();
        return std::nullopt;
    }
    if (pending.size() - kHeaderSize < h->length) return std::nullopt;
    pos_ += kHeaderSize + h->length;
    return std::pair{*h, pending.subspan(kHeaderSize, h->length)};
}

} // namespace rpm::proto
