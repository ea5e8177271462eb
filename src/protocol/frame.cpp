// Frame headers and the stream-to-frame reader.
#include "protocol/codec.hpp"

#include <algorithm>
#include <cstring>
#include <string>

namespace rpm::proto {
namespace {

constexpr std::uint8_t kFirstType = static_cast<std::uint8_t>(Type::hello);
constexpr std::uint8_t kLastType = static_cast<std::uint8_t>(Type::persist);

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
    case Type::persist: return "persist";
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

FrameReader::FrameReader(std::uint32_t max_payload, std::span<std::byte> primary)
    : max_payload_(max_payload), primary_(primary) {
    if (primary_.size() < kHeaderSize) {
        owned_.resize(kPrimarySize);
        primary_ = owned_;
    }
    data_ = primary_.data();
    cap_ = primary_.size();
}

// Bytes the frame at pos_ needs in all: its header, then its length once
// the header is in (and valid; a bad one is reported by next()).
std::size_t FrameReader::frame_need() const {
    if (buffered() < kHeaderSize) return kHeaderSize;
    auto h = parse_header(std::span<const std::byte>(data_ + pos_, buffered()), max_payload_);
    return h ? kHeaderSize + h->length : kHeaderSize;
}

// Move the partial frame to the start of the buffer that can hold `need`
// bytes: the primary one when it fits, else large_ grown to exactly that.
void FrameReader::relocate(std::size_t need) {
    const std::size_t have = buffered();
    std::byte* to;
    std::size_t cap;
    if (need <= primary_.size()) {
        to = primary_.data();
        cap = primary_.size();
    } else {
        if (large_size_ < need) {
            auto grown = std::make_unique_for_overwrite<std::byte[]>(need);
            std::copy_n(data_ + pos_, have, grown.get());
            large_ = std::move(grown);
            large_size_ = need;
            data_ = large_.get();
            cap_ = large_size_;
            end_ = have;
            pos_ = 0;
            return;
        }
        to = large_.get();
        cap = large_size_;
    }
    if (to != data_ + pos_) std::memmove(to, data_ + pos_, have);
    data_ = to;
    cap_ = cap;
    end_ = have;
    pos_ = 0;
}

std::span<std::byte> FrameReader::space() {
    if (error_) return {};
    if (pos_ == end_) {
        // Drained: back to the primary buffer (a large one stays for the next large frame).
        data_ = primary_.data();
        cap_ = primary_.size();
        pos_ = end_ = 0;
    }
    const std::size_t need = frame_need();
    if (cap_ - pos_ < need) relocate(need);
    // Whole frames not taken out yet fill the buffer: make room behind them.
    if (end_ == cap_) relocate(buffered() + kHeaderSize);
    return {data_ + end_, cap_ - end_};
}

void FrameReader::commit(std::size_t n) { end_ += n; }

// For tests and raw peers: takes any amount at once, frames not yet taken
// out included (the transports receive through space() instead).
void FrameReader::feed(std::span<const std::byte> bytes) {
    if (bytes.empty() || space().empty()) return;  // poisoned: the stream has lost its framing for good
    if (cap_ - end_ < bytes.size()) relocate(std::max(buffered() + bytes.size(), frame_need()));
    std::memcpy(data_ + end_, bytes.data(), bytes.size());
    end_ += bytes.size();
}

void FrameReader::release_large() noexcept {
    if (data_ == large_.get() && pos_ != end_) return;  // a frame is being received into it
    if (data_ == large_.get()) {
        data_ = primary_.data();
        cap_ = primary_.size();
        pos_ = end_ = 0;
    }
    large_.reset();
    large_size_ = 0;
}

std::optional<std::pair<Header, std::span<const std::byte>>> FrameReader::next() {
    if (error_ || buffered() < kHeaderSize) return std::nullopt;
    std::span<const std::byte> pending(data_ + pos_, buffered());
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
