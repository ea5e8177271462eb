// Every reason parse_pdu()/check_common() refuses a PDU, each with the FES
// and FEI the TermReq will carry: start from a valid PDU, break one thing.
#include "pdu_fixture.hpp"

namespace {
using namespace rpm::nvmf;
using namespace rpm::nvmf::pdu;
using namespace rpm::nvmf::pdu::test;
using wire::Fes;
using wire::PduType;

Bytes capsule(bool hd = false, bool dd = false, std::uint32_t data_len = 0) {
    Bytes out(max_header_bytes);
    wire::Sqe s;
    s.set_cid(1);
    const auto n = encode_capsule_cmd(out, s, data_len, hd, dd, 4);
    return whole(out, n, pattern(data_len));
}

Bytes data_pdu(PduType type, bool hd = false, bool dd = false, std::uint32_t len = 64) {
    Bytes out(max_header_bytes);
    const auto n = encode_data(out, type, {1, 2, 0, len, true, false}, hd, dd, 4);
    return whole(out, n, pattern(len));
}

Bytes icreq() {
    Bytes out(max_header_bytes);
    return whole(out, encode_icreq(out, {}));
}

Bytes capsule_resp(bool hd = false) {
    Bytes out(max_header_bytes);
    return whole(out, encode_capsule_resp(out, {}, hd));
}

void expect(const Refusal& r, Fes fes, std::uint32_t fei) {
    EXPECT_EQ(r.fes, fes);
    EXPECT_EQ(r.fei, fei);
    EXPECT_FALSE(r.why.empty());
}

void set_plen(Bytes& pdu, std::uint32_t plen) { wire::put32(&pdu[4], plen); }

TEST(NvmfPduRefusal, TypeNotForThisReceiver) {
    expect(refused(capsule_resp(), controller()), Fes::pdu_sequence_error, 0);
    expect(refused(data_pdu(PduType::c2h_data), controller()), Fes::pdu_sequence_error, 0);
    expect(refused(capsule(), host()), Fes::pdu_sequence_error, 0);
    expect(refused(data_pdu(PduType::h2c_data), host()), Fes::pdu_sequence_error, 0);
    expect(refused(icreq(), ctx(Receiver::host, false)), Fes::pdu_sequence_error, 0);
}

TEST(NvmfPduRefusal, UnknownType) {
    for (int t : {0x08, 0x0a, 0xff}) {
        Bytes pdu = capsule_resp();
        pdu[0] = std::uint8_t(t);
        expect(refused(pdu, host()), Fes::invalid_header_field, 0);
    }
}

TEST(NvmfPduRefusal, IcTwice) { expect(refused(icreq(), controller()), Fes::pdu_sequence_error, 0); }

TEST(NvmfPduRefusal, NonIcFirst) {
    expect(refused(capsule(), ctx(Receiver::controller, false)), Fes::pdu_sequence_error, 0);
    expect(refused(capsule_resp(), ctx(Receiver::host, false)), Fes::pdu_sequence_error, 0);
}

TEST(NvmfPduRefusal, HlenWrong) {
    Bytes pdu = capsule();
    pdu[2] = 70;
    expect(refused(pdu, controller()), Fes::invalid_header_field, 2);
    Bytes ic = icreq();
    ic[2] = 127;
    expect(refused(ic, ctx(Receiver::controller, false)), Fes::invalid_header_field, 2);
}

TEST(NvmfPduRefusal, PdoInsideHeader) {
    Bytes pdu = capsule(false, false, 32);
    pdu[3] = 68;
    expect(refused(pdu, controller()), Fes::invalid_header_field, 3);
    // With a header digest the data starts after it: 72 is inside.
    Bytes hd = capsule(true, false, 32);
    hd[3] = 72;
    reseal(hd);
    expect(refused(hd, controller(true)), Fes::invalid_header_field, 3);
}

TEST(NvmfPduRefusal, PdoMisaligned) {
    Bytes pdu = capsule(false, false, 32);
    pdu[3] = 74;   // not a multiple of 4
    expect(refused(pdu, controller()), Fes::invalid_header_field, 3);
    // cpda 3 asks for 16-byte alignment; 76 is what Linux would send.
    Bytes hd = capsule(true, false, 32);
    expect(refused(hd, ctx(Receiver::controller, true, true, false, 8192, 3)), Fes::invalid_header_field, 3);
}

TEST(NvmfPduRefusal, PdoWhereNoDataMayBe) {
    Bytes resp = capsule_resp();
    resp[3] = 24;
    expect(refused(resp, host()), Fes::invalid_header_field, 3);
    Bytes data = data_pdu(PduType::h2c_data);
    data[3] = 0;
    expect(refused(data, controller()), Fes::invalid_header_field, 3);
}

TEST(NvmfPduRefusal, PlenTooSmall) {
    Bytes pdu = capsule(false, false, 32);
    set_plen(pdu, 72);   // pdo 72 and no data
    expect(refused(std::span(pdu).first(72), controller()), Fes::invalid_header_field, 4);
    Bytes dd = capsule(false, true, 32);
    set_plen(dd, 72 + 4);   // room for the data digest only
    expect(refused(std::span(dd).first(76), controller(false, true)), Fes::invalid_header_field, 4);
    Bytes ic = icreq();
    set_plen(ic, 129);
    expect(refused(ic, ctx(Receiver::controller, false)), Fes::invalid_header_field, 4);
    Bytes resp = capsule_resp();
    set_plen(resp, 28);
    expect(refused(resp, host()), Fes::invalid_header_field, 4);
}

TEST(NvmfPduRefusal, PlenDisagreesWithBytesGiven) {
    Bytes pdu = capsule(false, false, 32);
    expect(refused(std::span(pdu).first(pdu.size() - 1), controller()), Fes::invalid_header_field, 4);
    pdu.push_back(0);
    expect(refused(pdu, controller()), Fes::invalid_header_field, 4);
    expect(refused(std::span(pdu).first(7), controller()), Fes::invalid_header_field, 4);
}

TEST(NvmfPduRefusal, TermReqOver152) {
    Bytes out(max_header_bytes + 8);
    const auto n = encode_term(out, PduType::h2c_term, {}, pattern(128));
    Bytes pdu = whole(out, n);
    pdu.push_back(0);
    set_plen(pdu, 153);
    expect(refused(pdu, controller()), Fes::invalid_header_field, 4);
    Bytes shortish = whole(out, 24);
    set_plen(shortish, 20);
    expect(refused(std::span(shortish).first(20), controller()), Fes::invalid_header_field, 4);
}

TEST(NvmfPduRefusal, DigestFlagNotNegotiated) {
    expect(refused(capsule(true), controller()), Fes::invalid_header_field, 1);
    expect(refused(capsule(false, true, 16), controller()), Fes::invalid_header_field, 1);
    expect(refused(data_pdu(PduType::c2h_data, false, true), host(false, false)), Fes::invalid_header_field, 1);
    // IC and TermReq never carry digests, negotiated or not.
    Bytes ic = icreq();
    ic[1] = wire::flag_hdgst;
    expect(refused(ic, ctx(Receiver::controller, false)), Fes::invalid_header_field, 1);
    Bytes out(max_header_bytes);
    Bytes term = whole(out, encode_term(out, PduType::c2h_term, {}, {}));
    term[1] = wire::flag_ddgst;
    expect(refused(term, host(true, true)), Fes::invalid_header_field, 1);
}

TEST(NvmfPduRefusal, DigestFlagMissingWhenNegotiated) {
    expect(refused(capsule(false), controller(true)), Fes::invalid_header_field, 1);
    expect(refused(capsule_resp(false), host(true)), Fes::invalid_header_field, 1);
    expect(refused(capsule(false, false, 16), controller(false, true)), Fes::invalid_header_field, 1);
    expect(refused(data_pdu(PduType::h2c_data, true, false), controller(true, true)), Fes::invalid_header_field, 1);
}

TEST(NvmfPduRefusal, DataDigestFlagWithoutData) {
    Bytes pdu = capsule(false, false, 0);
    pdu[1] |= wire::flag_ddgst;
    expect(refused(pdu, controller(false, true)), Fes::invalid_header_field, 1);
    Bytes resp = capsule_resp();
    resp[1] |= wire::flag_ddgst;
    expect(refused(resp, host(false, true)), Fes::invalid_header_field, 1);
}

TEST(NvmfPduRefusal, SuccessWithoutLastPdu) {
    Bytes pdu = data_pdu(PduType::c2h_data);
    pdu[1] = wire::flag_success;
    expect(refused(pdu, host()), Fes::invalid_header_field, 1);
}

TEST(NvmfPduRefusal, HeaderDigestMismatch) {
    Bytes pdu = capsule(true, false, 16);
    pdu[20] ^= 0x01;   // a byte of the SQE, after the digest was computed
    const std::uint32_t sent = wire::get32(&pdu[72]);
    expect(refused(pdu, controller(true)), Fes::header_digest_error, sent);
    Bytes resp = capsule_resp(true);
    resp[24] ^= 0x80;   // the digest itself
    expect(refused(resp, host(true)), Fes::header_digest_error, wire::get32(&resp[24]));
}

TEST(NvmfPduRefusal, DataDigestMismatchIsReportedNotRefused) {
    Bytes pdu = data_pdu(PduType::h2c_data, true, true, 64);
    pdu[pdu[3] + 10] ^= 0x04;   // a data byte
    const Pdu p = parsed(pdu, controller(true, true));
    EXPECT_FALSE(p.data_digest_ok);
    EXPECT_EQ(p.data.size(), 64u);
    Bytes cmd = capsule(false, true, 32);
    cmd.back() ^= 0xff;   // the digest itself
    EXPECT_FALSE(parsed(cmd, controller(false, true)).data_digest_ok);
}

TEST(NvmfPduRefusal, DataOverMaxData) {
    const Context small = ctx(Receiver::controller, true, false, false, 64);
    EXPECT_EQ(parsed(data_pdu(PduType::h2c_data, false, false, 64), small).data.size(), 64u);
    expect(refused(data_pdu(PduType::h2c_data, false, false, 65), small), Fes::data_limit_exceeded, 4);
    expect(refused(capsule(false, false, 65), small), Fes::data_limit_exceeded, 4);
    // The data digest is not data.
    EXPECT_EQ(parsed(capsule(false, true, 64), ctx(Receiver::controller, true, false, true, 64)).data.size(), 64u);
}

TEST(NvmfPduRefusal, DatalDisagreesWithDataCarried) {
    for (std::uint32_t datal : {63u, 65u, 0u}) {
        Bytes pdu = data_pdu(PduType::h2c_data, true, false, 64);
        wire::put32(&pdu[16], datal);
        reseal(pdu);
        expect(refused(pdu, controller(true)), Fes::invalid_header_field, 16);
    }
    Bytes c2h = data_pdu(PduType::c2h_data, false, false, 64);
    wire::put32(&c2h[16], 1);
    expect(refused(c2h, host()), Fes::invalid_header_field, 16);
}

TEST(NvmfPduRefusal, R2TForNothing) {
    Bytes out(max_header_bytes);
    Bytes pdu = whole(out, encode_r2t(out, {1, 2, 0, 0, false, false}, false));
    expect(refused(pdu, host()), Fes::invalid_header_field, 16);
}

TEST(NvmfPduRefusal, CheckCommonRefusesBeforeTheRestIsRead) {
    // Only the 8 bytes a receiver has: a plen of 4 GiB is refused on them.
    Bytes ch = {std::uint8_t(PduType::h2c_data), 0, 24, 24, 0xff, 0xff, 0xff, 0xff};
    auto r = check_common(std::span<const std::uint8_t, 8>(ch.data(), 8), controller());
    ASSERT_TRUE(std::holds_alternative<Refusal>(r));
    EXPECT_EQ(std::get<Refusal>(r).fes, Fes::data_limit_exceeded);
}

} // namespace
