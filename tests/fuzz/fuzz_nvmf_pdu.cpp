// libFuzzer target: arbitrary bytes through the NVMe/TCP PDU framing
// (src/nvmf/pdu): check_common, parse_pdu and the decoders, as a receiver
// reads them.
//
// Input: one selector byte choosing the receiver's Context, then a stream R.
//   bit 0: receiver is the host (else the controller)   bit 1: initialized
//   bit 2: header digests negotiated                    bit 3: data digests
//   bits 4-5: max_data 64, 4096, 65536 or 0             bits 6-7: pda 0, 1, 3, 31
// R is read as a receiver reads a connection: 8 bytes, check_common, then
// the rest of the PDU, parse_pdu, repeat; an accepted IC initializes the
// context for the PDUs after it. The first PDU is also parsed with the
// context its own header asks for (right receiver and state, digests as
// flagged) and its digests recomputed, so the fuzzer reaches the deep
// checks without guessing the selector or forging a CRC. Each accepted PDU
// must lie inside the input, respect the limits, and decode, re-encode and
// parse again to the same fields.
#include "nvmf/pdu/pdu.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {
using namespace rpm::nvmf;
using namespace rpm::nvmf::pdu;
using wire::PduType;
using Bytes = std::vector<std::uint8_t>;

[[noreturn]] void fail(const char* what) {
    std::fprintf(stderr, "fuzz check failed: %s\n", what);
    std::abort();
}

void require(bool ok, const char* what) {
    if (!ok) fail(what);
}

bool has(std::uint8_t flags, std::uint8_t f) { return (flags & f) != 0; }
bool is_ic(PduType t) { return t == PduType::ic_req || t == PduType::ic_resp; }
bool is_data(PduType t) { return t == PduType::h2c_data || t == PduType::c2h_data; }

Receiver receiver_of(PduType t) {
    switch (t) {
    case PduType::ic_req: case PduType::h2c_term: case PduType::capsule_cmd: case PduType::h2c_data:
        return Receiver::controller;
    default: return Receiver::host;
    }
}

Context from_selector(std::uint8_t sel) {
    static constexpr std::uint32_t max_data[] = {64, 4096, 65536, 0};
    static constexpr std::uint8_t pda[] = {0, 1, 3, 31};
    Context c;
    c.receiver = (sel & 1) ? Receiver::host : Receiver::controller;
    c.initialized = (sel & 2) != 0;
    c.hdgst = (sel & 4) != 0;
    c.ddgst = (sel & 8) != 0;
    c.max_data = max_data[(sel >> 4) & 3];
    c.data_alignment = pda[sel >> 6];
    return c;
}

/// The context under which this header has its best chance.
Context asked_for(const std::uint8_t* ch) {
    Context c;
    c.receiver = receiver_of(PduType(ch[0]));
    c.initialized = !is_ic(PduType(ch[0]));
    c.hdgst = has(ch[1], wire::flag_hdgst);
    c.ddgst = has(ch[1], wire::flag_ddgst);
    c.max_data = 1u << 20;
    return c;
}

void check_refusal(const Refusal& r, std::span<const std::uint8_t> bytes) {
    require(!r.why.empty(), "refusal without a reason");
    const auto fes = std::uint16_t(r.fes);
    require(fes >= 1 && fes <= 6, "refusal with an unknown FES");
    if (r.fes == wire::Fes::header_digest_error) {
        require(bytes.size() >= std::size_t(bytes[2]) + 4, "digest error without a digest");
        require(r.fei == wire::get32(bytes.data() + bytes[2]), "digest error FEI is not the digest received");
    } else {
        require(r.fei <= 4 || r.fei == 16, "FEI is not a header field offset");
    }
}

/// Where the data must be, from the header alone.
void check_layout(const Pdu& p, std::span<const std::uint8_t> bytes, const Context& ctx) {
    const HeaderInfo& h = p.info;
    require(h.plen == bytes.size(), "accepted with plen != bytes");
    require(p.header.data() == bytes.data() && p.header.size() == h.hlen, "header span");
    require(receiver_of(h.type) == ctx.receiver, "accepted a PDU meant for the other side");
    if (!is_term(h.type)) require(is_ic(h.type) != ctx.initialized, "accepted out of sequence");
    const bool hd = has(h.flags, wire::flag_hdgst), dd = has(h.flags, wire::flag_ddgst);
    if (!is_ic(h.type) && !is_term(h.type)) require(hd == ctx.hdgst, "header digest flag not as negotiated");
    if (dd) require(ctx.ddgst && !p.data.empty(), "data digest flag without data or negotiation");
    if (h.type == PduType::c2h_data && has(h.flags, wire::flag_success))
        require(has(h.flags, wire::flag_last_pdu), "SUCCESS without LAST_PDU");
    const std::uint8_t* end = bytes.data() + bytes.size();
    if (p.data.empty()) {
        require(h.pdo == 0 || is_term(h.type), "pdo without data");
        return;
    }
    require(p.data.data() >= bytes.data() + h.hlen + (hd ? 4 : 0), "data overlaps the header");
    require(p.data.data() + p.data.size() + (dd ? 4 : 0) == end, "data does not end where plen says");
    if (is_term(h.type)) {
        require(p.data.size() <= 128 && p.data.data() == bytes.data() + h.hlen, "TermReq data");
        return;
    }
    require(p.data.data() == bytes.data() + h.pdo, "data does not start at pdo");
    require(dd == ctx.ddgst, "data digest flag not as negotiated");
    require(h.pdo % ((ctx.data_alignment + 1u) * 4u) == 0, "pdo not aligned");
    require(p.data.size() <= ctx.max_data, "data over max_data");
    if (is_data(h.type)) require(decode_data(p.header).length == p.data.size(), "datal != data");
    if (dd) require(p.data_digest_ok == (wire::get32(end - 4) == crc32c(p.data)), "data digest verdict");
    // Receivers digest data that arrives in pieces.
    const auto cut = p.data.size() / 3;
    require(crc32c_extend(crc32c(p.data.first(cut)), p.data.subspan(cut)) == crc32c(p.data), "crc32c_extend");
}

/// Header `out[0, n)` + data + data digest, parsed with `ctx`: must succeed.
Pdu reparse(Bytes& whole, const Bytes& out, std::size_t n, std::span<const std::uint8_t> data, const Context& ctx) {
    require(n != 0, "encoder refused fields a parsed PDU had");
    whole.assign(out.begin(), out.begin() + std::ptrdiff_t(n));
    if (!is_term(PduType(whole[0]))) {
        whole.insert(whole.end(), data.begin(), data.end());
        if (has(whole[1], wire::flag_ddgst)) {
            whole.resize(whole.size() + 4);
            wire::put32(whole.data() + whole.size() - 4, crc32c(data));
        }
    }
    auto r = parse_pdu(whole, ctx);
    if (!std::holds_alternative<Pdu>(r)) fail("re-encoded PDU refused");
    Pdu again = std::get<Pdu>(r);
    require(again.info.type == PduType(whole[0]), "re-encoded type");
    require(std::equal(data.begin(), data.end(), again.data.begin(), again.data.end()), "re-encoded data");
    require(again.data_digest_ok, "re-encoded data digest");
    return again;
}

bool same(const DataHeader& a, const DataHeader& b) {
    return a.cccid == b.cccid && a.ttag == b.ttag && a.offset == b.offset && a.length == b.length &&
           a.last == b.last && a.success == b.success;
}

template <class Ic>
bool same_ic(const Ic& a, const Ic& b) {
    return a.pfv == b.pfv && a.hdgst == b.hdgst && a.ddgst == b.ddgst;
}

void reencode_ic(const Pdu& p, const Context& ctx, Bytes& out, Bytes& whole) {
    if (p.info.type == PduType::ic_req) {
        const IcReq d = decode_icreq(p.header);
        const IcReq e = decode_icreq(reparse(whole, out, encode_icreq(out, d), {}, ctx).header);
        require(same_ic(d, e) && d.hpda == e.hpda && d.maxr2t == e.maxr2t, "ICReq round trip");
    } else {
        const IcResp d = decode_icresp(p.header);
        const IcResp e = decode_icresp(reparse(whole, out, encode_icresp(out, d), {}, ctx).header);
        require(same_ic(d, e) && d.cpda == e.cpda && d.maxh2cdata == e.maxh2cdata, "ICResp round trip");
    }
}

/// Decode, encode what was decoded, parse that again: the same fields.
void reencode(const Pdu& p, const Context& ctx) {
    Bytes out(max_header_bytes, 0xA5), whole;
    const bool hd = has(p.info.flags, wire::flag_hdgst), dd = has(p.info.flags, wire::flag_ddgst);
    const std::uint32_t align = (ctx.data_alignment + 1u) * 4u;
    const auto len = std::uint32_t(p.data.size());
    switch (p.info.type) {
    case PduType::ic_req: case PduType::ic_resp: return reencode_ic(p, ctx, out, whole);
    case PduType::capsule_cmd: {
        const wire::Sqe s = decode_capsule_cmd(p.header);
        const Pdu q = reparse(whole, out, encode_capsule_cmd(out, s, len, hd, dd, align), p.data, ctx);
        return require(decode_capsule_cmd(q.header).b == s.b, "CapsuleCmd round trip");
    }
    case PduType::capsule_resp: {
        const wire::Cqe c = decode_capsule_resp(p.header);
        const Pdu q = reparse(whole, out, encode_capsule_resp(out, c, hd), {}, ctx);
        return require(decode_capsule_resp(q.header).b == c.b, "CapsuleResp round trip");
    }
    case PduType::h2c_data: case PduType::c2h_data: {
        const DataHeader d = decode_data(p.header);
        const Pdu q = reparse(whole, out, encode_data(out, p.info.type, d, hd, dd, align), p.data, ctx);
        return require(same(decode_data(q.header), d), "data header round trip");
    }
    case PduType::r2t: {
        const DataHeader d = decode_data(p.header);
        const Pdu q = reparse(whole, out, encode_r2t(out, d, hd), {}, ctx);
        return require(same(decode_data(q.header), d), "R2T round trip");
    }
    case PduType::h2c_term: case PduType::c2h_term: {
        const TermReq t = decode_term(p.header);
        const Pdu q = reparse(whole, out, encode_term(out, p.info.type, t, p.data), p.data, ctx);
        const TermReq u = decode_term(q.header);
        return require(u.fes == t.fes && u.fei == t.fei, "TermReq round trip");
    }
    }
    fail("accepted a PDU of an unknown type");
}

/// One PDU as a receiver gets it; true if it was accepted.
bool receive(std::span<const std::uint8_t> bytes, const Context& ctx) {
    auto r = parse_pdu(bytes, ctx);
    if (auto* bad = std::get_if<Refusal>(&r)) {
        check_refusal(*bad, bytes);
        return false;
    }
    const Pdu& p = std::get<Pdu>(r);
    check_layout(p, bytes, ctx);
    reencode(p, ctx);
    return true;
}

void read_stream(std::span<const std::uint8_t> rest, Context ctx) {
    while (rest.size() >= wire::common_header_len) {
        auto ch = check_common(rest.first<wire::common_header_len>(), ctx);
        if (auto* bad = std::get_if<Refusal>(&ch)) {
            // parse_pdu must refuse the same PDU for the same reason.
            auto again = parse_pdu(rest, ctx);
            require(std::holds_alternative<Refusal>(again), "parse_pdu accepted what check_common refused");
            const Refusal& r = std::get<Refusal>(again);
            require(r.fes == bad->fes && r.fei == bad->fei, "check_common and parse_pdu disagree");
            return check_refusal(*bad, rest);
        }
        const std::uint32_t plen = std::get<HeaderInfo>(ch).plen;
        if (plen > rest.size()) return;   // a receiver would wait for the rest
        const auto type = std::get<HeaderInfo>(ch).type;
        if (!receive(rest.first(plen), ctx)) return;
        if (is_ic(type)) ctx.initialized = true;
        rest = rest.subspan(plen);
    }
}

/// A copy of one PDU with its digests made right where the layout allows:
/// the fuzzer cannot forge a CRC32C, and without this it would never get a
/// mutated header past the header digest check.
Bytes with_digests_fixed(std::span<const std::uint8_t> bytes) {
    Bytes b(bytes.begin(), bytes.end());
    if (b.size() < wire::common_header_len) return b;
    const std::size_t hlen = b[2], pdo = b[3];
    if (has(b[1], wire::flag_hdgst) && b.size() >= hlen + 4)
        wire::put32(&b[hlen], crc32c(std::span(b).first(hlen)));
    if (has(b[1], wire::flag_ddgst) && pdo != 0 && b.size() >= pdo + 4)
        wire::put32(&b[b.size() - 4], crc32c(std::span(b).subspan(pdo, b.size() - pdo - 4)));
    return b;
}

void decode_anything(std::span<const std::uint8_t> bytes) {
    // The decoders are meant for checked headers, but must not read past a
    // short one.
    (void)decode_icreq(bytes);
    (void)decode_icresp(bytes);
    (void)decode_capsule_cmd(bytes);
    (void)decode_capsule_resp(bytes);
    (void)decode_data(bytes);
    (void)decode_term(bytes);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::span<const std::uint8_t> rest(data + 1, size - 1);
    decode_anything(rest);
    read_stream(rest, from_selector(data[0]));
    if (rest.size() >= wire::common_header_len) {
        const std::size_t plen = wire::get32(rest.data() + 4);
        const Bytes first = with_digests_fixed(rest.first(std::min(plen, rest.size())));
        receive(first, asked_for(rest.data()));
    }
    return 0;
}
