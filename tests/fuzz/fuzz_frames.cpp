// libFuzzer target: arbitrary bytes through FrameReader and every decoder.
//
// Input: one selector byte, then the rest R.
//   - R is decoded directly as the body of type (selector & 0x0f), so the
//     decoders are reached without the fuzzer first having to build a header;
//   - R is fed to a FrameReader in chunks of ((selector >> 4) & 7) + 1
//     bytes, with a 64-byte payload limit when bit 7 is set (to reach
//     bad_size), and every frame that comes out is decoded by its type;
//   - the same R fed in one piece must give the same frames and the same
//     error: cutting a stream differently must not change what it means.
#include "roundtrip.hpp"

#include <cstddef>
#include <cstdint>
#include <utility>

namespace {
using namespace rpm::proto;

struct Seen {
    std::vector<std::pair<Header, std::vector<std::byte>>> frames;
    std::optional<rpm::Error> error;
};

void check_frame(const Header& h, std::span<const std::byte> frame_start, std::span<const std::byte> body) {
    // The header must re-serialise to the bytes it was parsed from.
    std::array<std::byte, kHeaderSize> again{};
    write_header(again, h);
    fuzz::require(std::memcmp(again.data(), frame_start.data(), kHeaderSize) == 0, "header round trip");
    fuzz::check_body(h.type, h.request_id, body);
}

Seen read_stream(std::span<const std::byte> s, std::size_t chunk, std::uint32_t max_payload) {
    FrameReader r(max_payload);
    Seen seen;
    for (std::size_t at = 0; at < s.size(); at += chunk) {
        r.feed(s.subspan(at, std::min(chunk, s.size() - at)));
        while (auto f = r.next()) {
            // The payload is a view into the reader's buffer, just after its header.
            std::span<const std::byte> start(f->second.data() - kHeaderSize, kHeaderSize);
            check_frame(f->first, start, f->second);
            seen.frames.emplace_back(f->first, std::vector<std::byte>(f->second.begin(), f->second.end()));
        }
        fuzz::require(r.buffered() <= kHeaderSize + max_payload + chunk, "reader buffer grew past one frame");
    }
    if (r.error()) {
        fuzz::require(*r.error() == rpm::errc::invalid_argument || *r.error() == rpm::errc::bad_size,
                      "reader error has an unexpected code");
        seen.error = r.error();
    }
    return seen;
}

bool same(const Seen& a, const Seen& b) {
    if (a.frames.size() != b.frames.size() || a.error.has_value() != b.error.has_value()) return false;
    for (std::size_t i = 0; i < a.frames.size(); ++i) {
        const auto& [ha, ba] = a.frames[i];
        const auto& [hb, bb] = b.frames[i];
        if (ha.type != hb.type || ha.request_id != hb.request_id || ha.flags != hb.flags || ba != bb)
            return false;
    }
    return !a.error || (a.error->code() == b.error->code() && a.error->detail() == b.error->detail());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::uint8_t sel = data[0];
    std::span<const std::byte> rest(reinterpret_cast<const std::byte*>(data + 1), size - 1);

    const auto type = static_cast<std::uint8_t>(sel & 0x0f);
    if (type >= 1 && type <= 13) fuzz::check_body(static_cast<Type>(type), 0x5eed, rest);

    const std::size_t chunk = ((sel >> 4) & 7u) + 1;
    const std::uint32_t max_payload = (sel & 0x80) ? 64 : kDefaultMaxPayload;
    Seen chunked = read_stream(rest, chunk, max_payload);
    Seen whole = read_stream(rest, rest.size() + 1, max_payload);
    fuzz::require(same(chunked, whole), "frames depend on how the stream was cut");
    return 0;
}
