// Bodies of the data-path messages: Write, Read, AtomicWrite, Flush,
// Persist, Response, and the body-less framing of Message and Goodbye. Layouts are
// in docs/protocol.md.
#include "protocol/codec.hpp"

namespace rpm::proto {
namespace {

using detail::FrameWriter;
using detail::Reader;

constexpr std::size_t kRangeSize = 16;  // offset u64, length u64

} // namespace

void encode(std::vector<std::byte>& out, std::uint32_t request_id, const Write& m) {
    encode_write_head(out, request_id, m.region, m.offset, m.data.size());
    out.insert(out.end(), m.data.begin(), m.data.end());
}

void encode_write_head(std::vector<std::byte>& out, std::uint32_t request_id, std::uint32_t region,
                       std::uint64_t offset, std::size_t data_size) {
    FrameWriter w(out, Type::write, request_id);
    w.u32(region);
    w.u64(offset);
    w.finish(data_size);
}

Result<Write> decode_write(std::span<const std::byte> body) {
    Reader r(body, "write");
    Write m;
    r.u32(m.region, "region");
    r.u64(m.offset, "offset");
    m.data = r.rest();
    return r.finish(m);
}

void encode(std::vector<std::byte>& out, std::uint32_t request_id, const Read& m) {
    FrameWriter w(out, Type::read, request_id);
    w.u32(m.region);
    w.u64(m.offset);
    w.u32(m.length);
    w.finish();
}

Result<Read> decode_read(std::span<const std::byte> body) {
    Reader r(body, "read");
    Read m;
    r.u32(m.region, "region");
    r.u64(m.offset, "offset");
    r.u32(m.length, "length");
    return r.finish(m);
}

void encode(std::vector<std::byte>& out, std::uint32_t request_id, const AtomicWrite& m) {
    FrameWriter w(out, Type::atomic_write, request_id);
    w.u32(m.region);
    w.u64(m.offset);
    w.u64(m.value);
    w.finish();
}

Result<AtomicWrite> decode_atomic_write(std::span<const std::byte> body) {
    Reader r(body, "atomic_write");
    AtomicWrite m;
    r.u32(m.region, "region");
    r.u64(m.offset, "offset");
    r.u64(m.value, "value");
    return r.finish(m);
}

// More than kMaxRanges ranges are written as given, so the peer refuses
// the request with a clear error instead of this side dropping ranges (a
// flush that silently covered less would be a durability bug).
void encode(std::vector<std::byte>& out, std::uint32_t request_id, const Flush& m) {
    encode_flush(out, request_id, m.region, m.ranges);
}

void encode_flush(std::vector<std::byte>& out, std::uint32_t request_id, std::uint32_t region,
                  std::span<const Range> ranges) {
    // Sized once: a persist's Flush frame is made on every send_flush persist.
    out.reserve(out.size() + kHeaderSize + 8 + 16 * ranges.size());
    FrameWriter w(out, Type::flush, request_id);
    w.u32(region);
    w.u32(static_cast<std::uint32_t>(ranges.size()));
    for (const Range& range : ranges) {
        w.u64(range.offset);
        w.u64(range.length);
    }
    w.finish();
}

Result<void> decode_flush(std::span<const std::byte> body, Flush& out) {
    Reader r(body, "flush");
    std::uint32_t count = 0;
    r.u32(out.region, "region");
    r.u32(count, "count");
    if (r.ok() && count > kMaxRanges)
        r.fail("count " + std::to_string(count) + " exceeds the limit of " + std::to_string(kMaxRanges));
    // The count is checked against the body before anything is allocated.
    if (r.ok() && r.remaining() != count * kRangeSize)
        r.fail("count " + std::to_string(count) + " needs " + std::to_string(count * kRangeSize) +
               " bytes of ranges, the body has " + std::to_string(r.remaining()));
    out.ranges.resize(r.ok() ? count : 0);
    for (Range& range : out.ranges) {
        r.u64(range.offset, "range.offset");
        r.u64(range.length, "range.length");
    }
    if (auto done = r.finish(0); !done) return done.error();
    return {};
}

Result<Flush> decode_flush(std::span<const std::byte> body) {
    Flush m;
    if (auto r = decode_flush(body, m); !r) return r.error();
    return m;
}

// The message is for people; one longer than kMaxMessage is cut rather than
// turned into a malformed frame.
void encode(std::vector<std::byte>& out, std::uint32_t request_id, const Response& m) {
    FrameWriter w(out, Type::response, request_id);
    w.u32(m.status);
    w.str16(std::string_view(m.message).substr(0, kMaxMessage));
    w.bytes(m.data);
    w.finish();
}

Result<Response> decode_response(std::span<const std::byte> body) {
    Reader r(body, "response");
    Response m;
    r.u32(m.status, "status");
    r.str16(m.message, kMaxMessage, "message");
    m.data = r.rest();
    return r.finish(std::move(m));
}

std::optional<ResponseView> response_view(std::span<const std::byte> body) noexcept {
    // A malformed reply is rare: building the failure's detail there (which
    // may throw bad_alloc) counts as no status.
    try {
        Reader r(body, "response");
        ResponseView v;
        std::string_view message;
        r.u32(v.status, "status");
        r.str16(message, kMaxMessage, "message");
        v.data = r.rest();
        if (!r.ok()) return std::nullopt;
        return v;
    } catch (...) {
        return std::nullopt;
    }
}

void encode_response_head(std::vector<std::byte>& out, std::uint32_t request_id, std::size_t data_size) {
    FrameWriter w(out, Type::response, request_id);
    w.u32(0);
    w.u16(0);  // no message
    w.finish(data_size);
}

// More than kMaxRanges slices are written as given, for the peer to refuse
// (as Flush does).
void encode_persist_head(std::vector<std::byte>& out, std::uint32_t request_id, std::uint32_t region,
                         std::span<const Slice> slices) {
    FrameWriter w(out, Type::persist, request_id);
    w.u32(region);
    w.u32(static_cast<std::uint32_t>(slices.size()));
    std::size_t data = 0;
    for (const Slice& s : slices) {
        w.u64(s.offset);
        w.u32(static_cast<std::uint32_t>(s.data.size()));
        data += s.data.size();
    }
    w.finish(data);
}

void encode(std::vector<std::byte>& out, std::uint32_t request_id, const Persist& m) {
    encode_persist_head(out, request_id, m.region, m.slices);
    for (const Slice& s : m.slices) out.insert(out.end(), s.data.begin(), s.data.end());
}

Result<void> decode_persist(std::span<const std::byte> body, Persist& out) {
    Reader r(body, "persist");
    std::uint32_t count = 0;
    r.u32(out.region, "region");
    r.u32(count, "count");
    if (r.ok() && (count == 0 || count > kMaxRanges))
        r.fail("count " + std::to_string(count) + " is not within 1.." + std::to_string(kMaxRanges));
    // The count is checked against the body before anything is allocated.
    if (r.ok() && r.remaining() < std::size_t{count} * 12)
        r.fail("count " + std::to_string(count) + " needs " + std::to_string(count * 12) +
               " bytes of slices, the body has " + std::to_string(r.remaining()));
    if (!r.ok()) return r.finish(0).error();
    const auto data = body.subspan(persist_meta_size(count));
    out.slices.resize(count);
    std::size_t at = 0;
    for (Slice& s : out.slices) {
        std::uint32_t length = 0;
        r.u64(s.offset, "slice.offset");
        r.u32(length, "slice.length");
        if (r.ok() && length > data.size() - at) {
            r.fail("slice lengths exceed the " + std::to_string(data.size()) + " bytes of data");
            break;
        }
        s.data = data.subspan(at, length);
        at += length;
    }
    if (r.ok() && at != data.size())
        r.fail("slice lengths add up to " + std::to_string(at) + " bytes, the body has " +
               std::to_string(data.size()) + " bytes of data");
    (void)r.rest();  // the data, placed above
    if (auto done = r.finish(0); !done) return done.error();
    return {};
}

Result<Persist> decode_persist(std::span<const std::byte> body) {
    Persist m;
    if (auto r = decode_persist(body, m); !r) return r.error();
    return m;
}

void encode_message(std::vector<std::byte>& out, std::uint32_t request_id,
                    std::span<const std::byte> payload) {
    FrameWriter w(out, Type::message, request_id);
    w.bytes(payload);
    w.finish();
}

void encode_goodbye(std::vector<std::byte>& out, std::uint32_t request_id) {
    FrameWriter(out, Type::goodbye, request_id).finish();
}

void encode(std::vector<std::byte>& out, std::uint32_t request_id, const Goodbye& m) {
    FrameWriter w(out, Type::goodbye, request_id);
    w.u32(m.status);
    w.str16(m.message.substr(0, kMaxMessage));
    w.finish();
}

Result<Goodbye> decode_goodbye(std::span<const std::byte> body) {
    Goodbye m;
    if (body.empty()) return m;
    Reader r(body, "goodbye");
    r.u32(m.status, "status");
    r.str16(m.message, kMaxMessage, "message");
    return r.finish(std::move(m));
}

} // namespace rpm::proto
