// Building the headers of the PDUs we send. Each encoder zeroes what it
// writes (reserved fields go out as 0), fills the common header first and
// the header digest last, since the digest covers both.
#include "nvmf/pdu/pdu.hpp"

#include <algorithm>
#include <limits>
#include <optional>

namespace rpm::nvmf::pdu {
namespace {
using wire::PduType;

using wire::dgst_hdgst;
using wire::dgst_ddgst;
constexpr std::uint32_t max_align = 128;                         // (31 + 1) * 4: hpda/cpda <= 31

std::size_t digest_if(bool on) { return on ? wire::digest_len : 0; }

struct Frame {
    PduType type{};
    std::uint8_t flags = 0;
    std::size_t hlen = 0;
    bool hdgst = false;
    std::size_t pdo = 0;     // 0: no data
    std::uint64_t plen = 0;

    /// What the encoder writes: the header, its digest and the padding.
    std::size_t written() const { return pdo != 0 ? pdo : hlen + digest_if(hdgst); }
};

/// A frame whose data (if any) starts at the header's end rounded up to
/// `align`; nullopt if `align` is neither 0 nor a multiple of 4 up to 128.
std::optional<Frame> frame(PduType type, std::uint8_t flags, std::size_t hlen, bool hdgst, bool ddgst,
                           std::uint32_t data_len, std::uint32_t align) {
    Frame f{type, flags, hlen, hdgst, 0, hlen + digest_if(hdgst)};
    if (hdgst) f.flags |= wire::flag_hdgst;
    if (data_len == 0) return f;
    if (align % 4 != 0 || align > max_align) return std::nullopt;
    const std::size_t end = hlen + digest_if(hdgst), a = std::max<std::size_t>(align, 1);
    f.pdo = (end + a - 1) / a * a;
    if (ddgst) f.flags |= wire::flag_ddgst;
    f.plen = f.pdo + std::uint64_t(data_len) + digest_if(ddgst);
    return f;
}

/// Zero the bytes the frame writes and fill its common header; false if
/// they do not fit in `out` or plen does not fit its field.
bool begin(std::span<std::uint8_t> out, const Frame& f) {
    if (f.written() > out.size() || f.plen > std::numeric_limits<std::uint32_t>::max()) return false;
    std::fill_n(out.begin(), f.written(), std::uint8_t{0});
    out[0] = std::uint8_t(f.type);
    out[1] = f.flags;
    out[2] = std::uint8_t(f.hlen);
    out[3] = std::uint8_t(f.pdo);
    wire::put32(&out[4], std::uint32_t(f.plen));
    return true;
}

std::size_t seal(std::span<std::uint8_t> out, const Frame& f) {
    if (f.hdgst) wire::put32(&out[f.hlen], crc32c(out.first(f.hlen)));
    return f.written();
}

template <class Ic>
std::size_t encode_ic(std::span<std::uint8_t> out, PduType type, const Ic& r, std::uint8_t pda, std::uint32_t last) {
    const Frame f{type, 0, wire::ic_len, false, 0, wire::ic_len};
    if (!begin(out, f)) return 0;
    wire::put16(&out[8], r.pfv);
    out[10] = pda;
    out[11] = std::uint8_t((r.hdgst ? dgst_hdgst : 0) | (r.ddgst ? dgst_ddgst : 0));
    wire::put32(&out[12], last);
    return seal(out, f);
}

bool is_data(PduType t) { return t == PduType::h2c_data || t == PduType::c2h_data; }

} // namespace

std::size_t encode_icreq(std::span<std::uint8_t> out, const IcReq& r) {
    return encode_ic(out, PduType::ic_req, r, r.hpda, r.maxr2t);
}

std::size_t encode_icresp(std::span<std::uint8_t> out, const IcResp& r) {
    return encode_ic(out, PduType::ic_resp, r, r.cpda, r.maxh2cdata);
}

std::size_t encode_capsule_cmd(std::span<std::uint8_t> out, const wire::Sqe& sqe, std::uint32_t data_len,
                               bool hdgst, bool ddgst, std::uint32_t align) {
    const auto f = frame(PduType::capsule_cmd, 0, wire::capsule_cmd_hlen, hdgst, ddgst, data_len, align);
    if (!f || !begin(out, *f)) return 0;
    std::copy(sqe.b.begin(), sqe.b.end(), out.begin() + wire::common_header_len);
    return seal(out, *f);
}

std::size_t encode_capsule_resp(std::span<std::uint8_t> out, const wire::Cqe& cqe, bool hdgst) {
    const auto f = frame(PduType::capsule_resp, 0, wire::capsule_resp_hlen, hdgst, false, 0, 0);
    if (!begin(out, *f)) return 0;
    std::copy(cqe.b.begin(), cqe.b.end(), out.begin() + wire::common_header_len);
    return seal(out, *f);
}

std::size_t encode_data(std::span<std::uint8_t> out, wire::PduType type, const DataHeader& h, bool hdgst,
                        bool ddgst, std::uint32_t align) {
    if (!is_data(type) || h.length == 0) return 0;
    std::uint8_t flags = h.last ? wire::flag_last_pdu : 0;
    if (type == PduType::c2h_data && h.success) flags |= wire::flag_success;
    const auto f = frame(type, flags, wire::data_hlen, hdgst, ddgst, h.length, align);
    if (!f || !begin(out, *f)) return 0;
    wire::put16(&out[8], h.cccid);
    if (type == PduType::h2c_data) wire::put16(&out[10], h.ttag);   // reserved in C2HData
    wire::put32(&out[12], h.offset);
    wire::put32(&out[16], h.length);
    return seal(out, *f);
}

std::size_t encode_r2t(std::span<std::uint8_t> out, const DataHeader& h, bool hdgst) {
    const auto f = frame(PduType::r2t, 0, wire::data_hlen, hdgst, false, 0, 0);
    if (!begin(out, *f)) return 0;
    wire::put16(&out[8], h.cccid);
    wire::put16(&out[10], h.ttag);
    wire::put32(&out[12], h.offset);
    wire::put32(&out[16], h.length);
    return seal(out, *f);
}

std::size_t encode_term(std::span<std::uint8_t> out, wire::PduType type, const TermReq& t,
                        std::span<const std::uint8_t> bad_header) {
    const std::size_t copied = std::min(bad_header.size(), wire::term_max_plen - wire::term_hlen);
    const Frame f{type, 0, wire::term_hlen, false, 0, wire::term_hlen + copied};
    if (!is_term(type) || out.size() < f.plen || !begin(out, f)) return 0;
    wire::put16(&out[8], std::uint16_t(t.fes));
    wire::put32(&out[10], t.fei);
    std::copy_n(bad_header.begin(), copied, out.begin() + wire::term_hlen);
    return f.plen;
}

} // namespace rpm::nvmf::pdu
