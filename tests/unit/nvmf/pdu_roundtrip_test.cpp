// Every PDU type: encode, parse as the receiver would, decode, and compare
// the fields, with header and data digests on and off.
#include "pdu_fixture.hpp"

namespace {
using namespace rpm::nvmf;
using namespace rpm::nvmf::pdu;
using namespace rpm::nvmf::pdu::test;
using wire::PduType;

struct Digests {
    bool hd, dd;
};
const Digests kDigests[] = {{false, false}, {true, false}, {false, true}, {true, true}};

std::string trace(Digests d) { return std::string("hdgst ") + (d.hd ? "on" : "off") + ", ddgst " + (d.dd ? "on" : "off"); }

wire::Sqe sample_sqe() {
    wire::Sqe s;
    s.set_opcode(wire::io::write);
    s.set_cid(0x1234);
    s.set_nsid(7);
    s.set_sgl(wire::sgl_incapsule, 0, 512);
    s.set_cdw(10, 0xdeadbeef);
    s.set_cdw(15, 0x01020304);
    return s;
}

TEST(NvmfPduRoundTrip, IcReq) {
    Bytes out(max_header_bytes);
    const IcReq r{0, 3, true, false, 15};
    const auto n = encode_icreq(out, r);
    ASSERT_EQ(n, wire::ic_len);
    const Bytes pdu = whole(out, n);
    const Pdu p = parsed(pdu, ctx(Receiver::controller, false));
    EXPECT_EQ(p.info.type, PduType::ic_req);
    EXPECT_EQ(p.info.flags, 0);
    EXPECT_EQ(p.header.size(), wire::ic_len);
    EXPECT_TRUE(p.data.empty());
    const IcReq d = decode_icreq(p.header);
    EXPECT_EQ(d.pfv, r.pfv);
    EXPECT_EQ(d.hpda, r.hpda);
    EXPECT_EQ(d.hdgst, r.hdgst);
    EXPECT_EQ(d.ddgst, r.ddgst);
    EXPECT_EQ(d.maxr2t, r.maxr2t);
}

TEST(NvmfPduRoundTrip, IcResp) {
    Bytes out(max_header_bytes);
    const IcResp r{0, 1, false, true, 131072};
    const Bytes pdu = whole(out, encode_icresp(out, r));
    const Pdu p = parsed(pdu, ctx(Receiver::host, false));
    EXPECT_EQ(p.info.type, PduType::ic_resp);
    const IcResp d = decode_icresp(p.header);
    EXPECT_EQ(d.pfv, r.pfv);
    EXPECT_EQ(d.cpda, r.cpda);
    EXPECT_EQ(d.hdgst, r.hdgst);
    EXPECT_EQ(d.ddgst, r.ddgst);
    EXPECT_EQ(d.maxh2cdata, r.maxh2cdata);
}

TEST(NvmfPduRoundTrip, CapsuleCmdWithoutData) {
    for (Digests g : kDigests) {
        SCOPED_TRACE(trace(g));
        Bytes out(max_header_bytes);
        const auto n = encode_capsule_cmd(out, sample_sqe(), 0, g.hd, g.dd, 4);
        ASSERT_EQ(n, wire::capsule_cmd_hlen + (g.hd ? 4 : 0));
        const Bytes pdu = whole(out, n);
        const Pdu p = parsed(pdu, controller(g.hd, g.dd));
        EXPECT_EQ(p.info.pdo, 0);
        EXPECT_EQ(p.info.plen, n);
        EXPECT_EQ(p.info.flags & wire::flag_ddgst, 0) << "no data, no data digest";
        EXPECT_TRUE(p.data.empty());
        EXPECT_EQ(decode_capsule_cmd(p.header).b, sample_sqe().b);
    }
}

TEST(NvmfPduRoundTrip, CapsuleCmdWithData) {
    const Bytes data = pattern(512);
    for (Digests g : kDigests) {
        SCOPED_TRACE(trace(g));
        Bytes out(max_header_bytes);
        const auto n = encode_capsule_cmd(out, sample_sqe(), 512, g.hd, g.dd, 4);
        ASSERT_EQ(n, wire::capsule_cmd_hlen + (g.hd ? 4 : 0)) << "Linux's layout: pdo = hlen + hdgst";
        const Bytes pdu = whole(out, n, data);
        const Pdu p = parsed(pdu, controller(g.hd, g.dd));
        EXPECT_EQ(p.info.pdo, n);
        EXPECT_EQ(p.info.plen, pdu.size());
        EXPECT_EQ(Bytes(p.data.begin(), p.data.end()), data);
        EXPECT_TRUE(p.data_digest_ok);
        EXPECT_EQ(decode_capsule_cmd(p.header).b, sample_sqe().b);
    }
}

TEST(NvmfPduRoundTrip, CapsuleResp) {
    wire::Cqe c;
    c.set_result64(0x1122334455667788ull);
    c.set_sq_head(9);
    c.set_sq_id(1);
    c.set_cid(0x4321);
    c.set_status(wire::sc::invalid_field);
    for (bool hd : {false, true}) {
        Bytes out(max_header_bytes);
        const Bytes pdu = whole(out, encode_capsule_resp(out, c, hd));
        const Pdu p = parsed(pdu, host(hd, true));
        EXPECT_EQ(p.info.type, PduType::capsule_resp);
        EXPECT_EQ(pdu.size(), wire::capsule_resp_hlen + (hd ? 4 : 0));
        EXPECT_EQ(decode_capsule_resp(p.header).b, c.b);
        EXPECT_EQ(decode_capsule_resp(p.header).status(), wire::sc::invalid_field);
    }
}

void data_round_trip(PduType type, Receiver who, const DataHeader& h) {
    const Bytes data = pattern(h.length, 0x40);
    for (Digests g : kDigests) {
        SCOPED_TRACE(trace(g));
        Bytes out(max_header_bytes);
        const auto n = encode_data(out, type, h, g.hd, g.dd, 4);
        ASSERT_EQ(n, wire::data_hlen + (g.hd ? 4 : 0));
        const Bytes pdu = whole(out, n, data);
        const Pdu p = parsed(pdu, ctx(who, true, g.hd, g.dd));
        EXPECT_EQ(p.info.type, type);
        EXPECT_EQ(Bytes(p.data.begin(), p.data.end()), data);
        EXPECT_TRUE(p.data_digest_ok);
        const DataHeader d = decode_data(p.header);
        EXPECT_EQ(d.cccid, h.cccid);
        EXPECT_EQ(d.ttag, type == PduType::h2c_data ? h.ttag : 0);
        EXPECT_EQ(d.offset, h.offset);
        EXPECT_EQ(d.length, h.length);
        EXPECT_EQ(d.last, h.last);
        EXPECT_EQ(d.success, type == PduType::c2h_data && h.success);
    }
}

TEST(NvmfPduRoundTrip, H2CData) {
    data_round_trip(PduType::h2c_data, Receiver::controller, {7, 0x55, 4096, 1000, true, false});
    data_round_trip(PduType::h2c_data, Receiver::controller, {7, 0x55, 0, 3, false, false});
}

TEST(NvmfPduRoundTrip, C2HData) {
    data_round_trip(PduType::c2h_data, Receiver::host, {9, 0, 8192, 4096, true, true});
    data_round_trip(PduType::c2h_data, Receiver::host, {9, 0, 0, 1, false, false});
    data_round_trip(PduType::c2h_data, Receiver::host, {9, 0, 0, 1, true, false});
}

TEST(NvmfPduRoundTrip, R2T) {
    const DataHeader h{0x77, 0x3, 65536, 131072, false, false};
    for (bool hd : {false, true}) {
        Bytes out(max_header_bytes);
        const Bytes pdu = whole(out, encode_r2t(out, h, hd));
        const Pdu p = parsed(pdu, host(hd, true));
        EXPECT_EQ(p.info.type, PduType::r2t);
        EXPECT_EQ(p.info.pdo, 0);
        const DataHeader d = decode_data(p.header);
        EXPECT_EQ(d.cccid, h.cccid);
        EXPECT_EQ(d.ttag, h.ttag);
        EXPECT_EQ(d.offset, h.offset);
        EXPECT_EQ(d.length, h.length);
        EXPECT_FALSE(d.last);
    }
}

TEST(NvmfPduRoundTrip, TermReqBothWays) {
    const Bytes bad = pattern(72, 0x90);
    for (auto [type, who] : {std::pair{PduType::h2c_term, Receiver::controller},
                             std::pair{PduType::c2h_term, Receiver::host}}) {
        Bytes out(max_header_bytes);
        const TermReq t{wire::Fes::header_digest_error, 0xcafef00d};
        const auto n = encode_term(out, type, t, bad);
        ASSERT_EQ(n, wire::term_hlen + bad.size());
        // Digests negotiated or not, a TermReq carries none.
        const Bytes pdu = whole(out, n);
        const Pdu p = parsed(pdu, ctx(who, true, true, true));
        EXPECT_EQ(p.info.type, type);
        EXPECT_EQ(Bytes(p.data.begin(), p.data.end()), bad);
        EXPECT_EQ(decode_term(p.header).fes, t.fes);
        EXPECT_EQ(decode_term(p.header).fei, t.fei);
    }
}

TEST(NvmfPduRoundTrip, TermReqAcceptedBeforeInitialization) {
    Bytes out(max_header_bytes);
    const Bytes icreq = pattern(wire::ic_len);
    const auto n = encode_term(out, PduType::c2h_term, {wire::Fes::unsupported_parameter, 8}, icreq);
    ASSERT_EQ(n, wire::term_max_plen);
    const Bytes pdu = whole(out, n);
    const Pdu p = parsed(pdu, ctx(Receiver::host, false));
    EXPECT_EQ(decode_term(p.header).fes, wire::Fes::unsupported_parameter);
    EXPECT_EQ(decode_term(p.header).fei, 8u);
    EXPECT_EQ(p.data.size(), wire::ic_len);
}

TEST(NvmfPduRoundTrip, DataAlignedToTheReceiversPda) {
    // cpda 3: data at a multiple of 16 bytes.
    const Bytes data = pattern(100);
    for (Digests g : kDigests) {
        SCOPED_TRACE(trace(g));
        Bytes out(max_header_bytes);
        const auto n = encode_capsule_cmd(out, sample_sqe(), 100, g.hd, g.dd, 16);
        ASSERT_EQ(n, 80u) << "72 (+4) rounded up to 16";
        const Bytes pdu = whole(out, n, data);
        const Pdu p = parsed(pdu, ctx(Receiver::controller, true, g.hd, g.dd, 8192, 3));
        EXPECT_EQ(p.info.pdo, 80);
        EXPECT_EQ(Bytes(p.data.begin(), p.data.end()), data);
        EXPECT_TRUE(p.data_digest_ok);
    }
}

TEST(NvmfPduRoundTrip, CheckCommonAgreesWithParse) {
    Bytes out(max_header_bytes);
    const Bytes pdu = whole(out, encode_capsule_cmd(out, sample_sqe(), 64, true, true, 4), pattern(64));
    auto r = check_common(std::span(pdu).first<wire::common_header_len>(), controller(true, true));
    ASSERT_TRUE(std::holds_alternative<HeaderInfo>(r));
    const auto& h = std::get<HeaderInfo>(r);
    EXPECT_EQ(h.type, PduType::capsule_cmd);
    EXPECT_EQ(h.flags, wire::flag_hdgst | wire::flag_ddgst);
    EXPECT_EQ(h.hlen, wire::capsule_cmd_hlen);
    EXPECT_EQ(h.pdo, 76);
    EXPECT_EQ(h.plen, 76u + 64 + 4);
    EXPECT_EQ(h.plen, pdu.size());
}

} // namespace
