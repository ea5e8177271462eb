// Type-specific header fields of a checked PDU. The header comes from
// parse_pdu(), so its length is right; a header too short (a caller's
// mistake) decodes as all zeros rather than reading past it.
#include "nvmf/pdu/pdu.hpp"

#include <algorithm>

namespace rpm::nvmf::pdu {
namespace {
using wire::PduType;

using wire::dgst_hdgst;
using wire::dgst_ddgst;

bool fits(std::span<const std::uint8_t> header, std::size_t hlen) { return header.size() >= hlen; }

template <class T>
T copy_entry(std::span<const std::uint8_t> header) {
    T e;
    if (fits(header, wire::common_header_len + e.b.size()))
        std::copy_n(header.begin() + wire::common_header_len, e.b.size(), e.b.begin());
    return e;
}
} // namespace

IcReq decode_icreq(std::span<const std::uint8_t> header) {
    if (!fits(header, wire::ic_len)) return {};
    const auto* p = header.data();
    return {wire::get16(p + 8), p[10], (p[11] & dgst_hdgst) != 0, (p[11] & dgst_ddgst) != 0, wire::get32(p + 12)};
}

IcResp decode_icresp(std::span<const std::uint8_t> header) {
    if (!fits(header, wire::ic_len)) return {};
    const auto* p = header.data();
    return {wire::get16(p + 8), p[10], (p[11] & dgst_hdgst) != 0, (p[11] & dgst_ddgst) != 0, wire::get32(p + 12)};
}

wire::Sqe decode_capsule_cmd(std::span<const std::uint8_t> header) { return copy_entry<wire::Sqe>(header); }

wire::Cqe decode_capsule_resp(std::span<const std::uint8_t> header) { return copy_entry<wire::Cqe>(header); }

DataHeader decode_data(std::span<const std::uint8_t> header) {
    if (!fits(header, wire::data_hlen)) return {};
    const auto* p = header.data();
    const auto type = PduType(p[0]);
    DataHeader d;
    d.cccid = wire::get16(p + 8);
    // C2HData's bytes 10-11 are reserved; report them as 0 so the header
    // round-trips through encode_data().
    if (type != PduType::c2h_data) d.ttag = wire::get16(p + 10);
    d.offset = wire::get32(p + 12);
    d.length = wire::get32(p + 16);
    const bool data = type == PduType::h2c_data || type == PduType::c2h_data;
    d.last = data && (p[1] & wire::flag_last_pdu);
    d.success = type == PduType::c2h_data && (p[1] & wire::flag_success);
    return d;
}

TermReq decode_term(std::span<const std::uint8_t> header) {
    if (!fits(header, wire::term_hlen)) return {};
    return {wire::Fes(wire::get16(header.data() + 8)), wire::get32(header.data() + 10)};
}

} // namespace rpm::nvmf::pdu
