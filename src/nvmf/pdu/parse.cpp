// parse_pdu(): a whole received PDU, checked down to the fields its framing
// depends on, split into header and data views.
#include "nvmf/pdu/pdu.hpp"

#include <optional>

namespace rpm::nvmf::pdu {
namespace {
using wire::Fes;
using wire::PduType;

constexpr std::uint32_t fei_length = 16;   // datal (H2C/C2HData), r2tl (R2T)

Refusal refuse(Fes fes, std::uint32_t fei, std::string why) { return Refusal{fes, fei, std::move(why)}; }

bool has(const HeaderInfo& h, std::uint8_t flag) { return (h.flags & flag) != 0; }

std::optional<Refusal> check_header_digest(std::span<const std::uint8_t> bytes, const HeaderInfo& h) {
    if (!has(h, wire::flag_hdgst)) return std::nullopt;
    const std::uint32_t got = wire::get32(bytes.data() + h.hlen);
    const std::uint32_t want = crc32c(bytes.first(h.hlen));
    if (got == want) return std::nullopt;
    return refuse(Fes::header_digest_error, got, "header digest mismatch");
}

/// The data bytes: between pdo and the data digest; for a TermReq, the
/// offending header copied after hlen. check_common() proved the bounds.
std::span<const std::uint8_t> data_of(std::span<const std::uint8_t> bytes, const HeaderInfo& h) {
    if (is_term(h.type)) return bytes.subspan(h.hlen);
    if (h.pdo == 0) return {};
    const std::size_t dd = has(h, wire::flag_ddgst) ? wire::digest_len : 0;
    return bytes.subspan(h.pdo, bytes.size() - h.pdo - dd);
}

std::optional<Refusal> check_fields(const Pdu& p) {
    const auto t = p.info.type;
    if (t == PduType::h2c_data || t == PduType::c2h_data) {
        const std::uint32_t datal = wire::get32(p.header.data() + 16);
        if (datal != p.data.size())
            return refuse(Fes::invalid_header_field, fei_length,
                          "datal " + std::to_string(datal) + " but " + std::to_string(p.data.size()) +
                              " bytes of data carried");
    }
    // As Linux's host does: an R2T for nothing is a broken controller.
    if (t == PduType::r2t && wire::get32(p.header.data() + 16) == 0)
        return refuse(Fes::invalid_header_field, fei_length, "R2T with r2tl 0");
    return std::nullopt;
}

bool data_digest_ok(std::span<const std::uint8_t> bytes, const Pdu& p) {
    if (!has(p.info, wire::flag_ddgst)) return true;
    const std::uint32_t got = wire::get32(bytes.data() + bytes.size() - wire::digest_len);
    return got == crc32c(p.data);
}

} // namespace

std::variant<Pdu, Refusal> parse_pdu(std::span<const std::uint8_t> bytes, const Context& ctx) {
    if (bytes.size() < wire::common_header_len)
        return refuse(Fes::invalid_header_field, fei_plen, "shorter than the common header");
    auto checked = check_common(bytes.first<wire::common_header_len>(), ctx);
    if (auto* bad = std::get_if<Refusal>(&checked)) return std::move(*bad);
    const HeaderInfo& h = std::get<HeaderInfo>(checked);
    if (bytes.size() != h.plen)
        return refuse(Fes::invalid_header_field, fei_plen,
                      "plen " + std::to_string(h.plen) + " but " + std::to_string(bytes.size()) + " bytes given");
    if (auto bad = check_header_digest(bytes, h)) return std::move(*bad);
    Pdu p{h, bytes.first(h.hlen), data_of(bytes, h), true};
    if (auto bad = check_fields(p)) return std::move(*bad);
    p.data_digest_ok = data_digest_ok(bytes, p);
    return p;
}

} // namespace rpm::nvmf::pdu
