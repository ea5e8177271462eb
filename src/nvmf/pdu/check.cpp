// check_common(): everything the 8-byte common header alone can tell about a
// received PDU, so that a receiver never reads (or allocates for) the rest
// of a PDU it is going to refuse.
#include "nvmf/pdu/pdu.hpp"

#include <optional>

namespace rpm::nvmf::pdu {
namespace {
using wire::Fes;
using wire::PduType;


/// What a PDU type may carry after its header.
enum class Body : std::uint8_t {
    none,      // IC, CapsuleResp, R2T: pdo 0, plen = header (+ digest)
    optional,  // CapsuleCmd: in-capsule data when pdo != 0
    required,  // H2CData, C2HData
    term,      // TermReq: the offending header, right after hlen, no digests
};

struct Rule {
    const char* name;
    std::uint8_t hlen;
    Receiver receiver;
    Body body;
};

std::optional<Rule> rule_for(std::uint8_t type) {
    constexpr auto ctrl = Receiver::controller, host = Receiver::host;
    switch (PduType(type)) {
    case PduType::ic_req: return Rule{"ICReq", wire::ic_len, ctrl, Body::none};
    case PduType::ic_resp: return Rule{"ICResp", wire::ic_len, host, Body::none};
    case PduType::h2c_term: return Rule{"H2CTermReq", wire::term_hlen, ctrl, Body::term};
    case PduType::c2h_term: return Rule{"C2HTermReq", wire::term_hlen, host, Body::term};
    case PduType::capsule_cmd: return Rule{"CapsuleCmd", wire::capsule_cmd_hlen, ctrl, Body::optional};
    case PduType::capsule_resp: return Rule{"CapsuleResp", wire::capsule_resp_hlen, host, Body::none};
    case PduType::h2c_data: return Rule{"H2CData", wire::data_hlen, ctrl, Body::required};
    case PduType::c2h_data: return Rule{"C2HData", wire::data_hlen, host, Body::required};
    case PduType::r2t: return Rule{"R2T", wire::data_hlen, host, Body::none};
    }
    return std::nullopt;
}

bool is_ic(PduType t) { return t == PduType::ic_req || t == PduType::ic_resp; }

std::optional<Refusal> refuse(Fes fes, std::uint32_t fei, const Rule& r, const std::string& what) {
    return Refusal{fes, fei, std::string(r.name) + ": " + what};
}

std::string num(std::uint32_t v) { return std::to_string(v); }

// A TermReq is accepted before initialization: a controller refuses a bad
// ICReq with a C2HTermReq, and the host should learn why.
std::optional<Refusal> check_sequence(const HeaderInfo& h, const Rule& r, const Context& ctx) {
    if (r.receiver != ctx.receiver)
        return refuse(Fes::pdu_sequence_error, fei_type, r, "not sent in this direction");
    if (r.body == Body::term) return std::nullopt;
    if (!ctx.initialized && !is_ic(h.type))
        return refuse(Fes::pdu_sequence_error, fei_type, r, "before the connection was initialized");
    if (ctx.initialized && is_ic(h.type))
        return refuse(Fes::pdu_sequence_error, fei_type, r, "after the connection was initialized");
    return std::nullopt;
}

std::optional<Refusal> check_digest_flags(const HeaderInfo& h, const Rule& r, const Context& ctx) {
    const bool hd = h.flags & wire::flag_hdgst, dd = h.flags & wire::flag_ddgst;
    if (is_ic(h.type) || r.body == Body::term) {
        if (hd || dd) return refuse(Fes::invalid_header_field, fei_flags, r, "digest flag on a PDU that has none");
        return std::nullopt;
    }
    if (hd != ctx.hdgst)
        return refuse(Fes::invalid_header_field, fei_flags, r,
                      hd ? "header digest flag, not negotiated" : "no header digest flag, negotiated");
    if (dd && !ctx.ddgst) return refuse(Fes::invalid_header_field, fei_flags, r, "data digest flag, not negotiated");
    // A PDU with no data has no data digest; one with data must have it
    // when negotiated. (H2C/C2HData with pdo 0 is refused by check_pdo.)
    const bool carries = r.body == Body::required || (r.body == Body::optional && h.pdo != 0);
    if (dd && !carries) return refuse(Fes::invalid_header_field, fei_flags, r, "data digest flag without data");
    if (!dd && carries && ctx.ddgst)
        return refuse(Fes::invalid_header_field, fei_flags, r, "no data digest flag, negotiated");
    return std::nullopt;
}

std::optional<Refusal> check_flags(const HeaderInfo& h, const Rule& r, const Context& ctx) {
    if (auto bad = check_digest_flags(h, r, ctx)) return bad;
    // As Linux's host does: SUCCESS promises no CapsuleResp follows, which
    // only makes sense on the last PDU of the transfer.
    if (h.type == PduType::c2h_data && (h.flags & wire::flag_success) && !(h.flags & wire::flag_last_pdu))
        return refuse(Fes::invalid_header_field, fei_flags, r, "SUCCESS without LAST_PDU");
    return std::nullopt;
}

std::optional<Refusal> check_pdo(const HeaderInfo& h, const Rule& r, const Context& ctx) {
    // Senders disagree on a TermReq's pdo (0 or hlen); its data follows hlen.
    if (r.body == Body::term) return std::nullopt;
    if (r.body == Body::none && h.pdo != 0)
        return refuse(Fes::invalid_header_field, fei_pdo, r, "pdo " + num(h.pdo) + " on a PDU without data");
    if (h.pdo == 0) {
        if (r.body == Body::required) return refuse(Fes::invalid_header_field, fei_pdo, r, "pdo 0: no data");
        return std::nullopt;
    }
    const std::uint32_t header_end = h.hlen + ((h.flags & wire::flag_hdgst) ? wire::digest_len : 0);
    if (h.pdo < header_end)
        return refuse(Fes::invalid_header_field, fei_pdo, r,
                      "pdo " + num(h.pdo) + " inside the header (ends at " + num(header_end) + ")");
    const std::uint32_t align = (std::uint32_t(ctx.data_alignment) + 1) * 4;
    if (h.pdo % align != 0)
        return refuse(Fes::invalid_header_field, fei_pdo, r,
                      "pdo " + num(h.pdo) + " not a multiple of " + num(align));
    return std::nullopt;
}

std::optional<Refusal> check_plen(const HeaderInfo& h, const Rule& r, const Context& ctx) {
    const std::uint32_t hd = (h.flags & wire::flag_hdgst) ? wire::digest_len : 0;
    const std::uint32_t dd = (h.flags & wire::flag_ddgst) ? wire::digest_len : 0;
    if (r.body == Body::term) {
        if (h.plen < h.hlen || h.plen > wire::term_max_plen)
            return refuse(Fes::invalid_header_field, fei_plen, r, "plen " + num(h.plen) + " outside 24..152");
        return std::nullopt;
    }
    if (h.pdo == 0) {
        if (h.plen != h.hlen + hd)
            return refuse(Fes::invalid_header_field, fei_plen, r,
                          "plen " + num(h.plen) + " for a PDU of " + num(h.hlen + hd) + " bytes");
        return std::nullopt;
    }
    if (h.plen < std::uint64_t(h.pdo) + dd + 1)
        return refuse(Fes::invalid_header_field, fei_plen, r, "plen " + num(h.plen) + " leaves no room for data");
    const std::uint32_t data = h.plen - h.pdo - dd;
    if (data > ctx.max_data)
        return refuse(Fes::data_limit_exceeded, fei_plen, r,
                      num(data) + " bytes of data, more than " + num(ctx.max_data));
    return std::nullopt;
}

std::optional<Refusal> check_rules(const HeaderInfo& h, const Rule& r, const Context& ctx) {
    if (auto bad = check_sequence(h, r, ctx)) return bad;
    if (h.hlen != r.hlen)
        return refuse(Fes::invalid_header_field, fei_hlen, r, "hlen " + num(h.hlen) + ", not " + num(r.hlen));
    if (auto bad = check_flags(h, r, ctx)) return bad;
    if (auto bad = check_pdo(h, r, ctx)) return bad;
    return check_plen(h, r, ctx);
}

} // namespace

std::variant<HeaderInfo, Refusal> check_common(std::span<const std::uint8_t, wire::common_header_len> ch,
                                               const Context& ctx) {
    const HeaderInfo h{PduType(ch[0]), ch[1], ch[2], ch[3], wire::get32(&ch[4])};
    const auto rule = rule_for(ch[0]);
    if (!rule) return Refusal{Fes::invalid_header_field, fei_type, "unknown PDU type " + num(ch[0])};
    if (auto bad = check_rules(h, *rule, ctx)) return std::move(*bad);
    return h;
}

} // namespace rpm::nvmf::pdu
