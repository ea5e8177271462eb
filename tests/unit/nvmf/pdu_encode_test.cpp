// The encoders' bytes against the NVMe/TCP layouts written out by hand (a
// round trip alone would pass with consistently wrong offsets), padding,
// reserved bytes, and what they refuse to write.
#include "pdu_fixture.hpp"

namespace {
using namespace rpm::nvmf;
using namespace rpm::nvmf::pdu;
using namespace rpm::nvmf::pdu::test;
using wire::PduType;

TEST(NvmfPduEncode, IcReqBytes) {
    Bytes out(max_header_bytes, 0xAA);
    ASSERT_EQ(encode_icreq(out, {0x0102, 5, true, true, 0x0A0B0C0D}), 128u);
    const Bytes head = {0x00, 0x00, 128, 0, 128, 0, 0, 0, 0x02, 0x01, 5, 0x03, 0x0D, 0x0C, 0x0B, 0x0A};
    EXPECT_EQ(Bytes(out.begin(), out.begin() + 16), head);
    EXPECT_EQ(std::count(out.begin() + 16, out.begin() + 128, 0), 112) << "reserved bytes are zero";
    EXPECT_EQ(out[128], 0xAA) << "nothing written past the PDU";
}

TEST(NvmfPduEncode, IcRespDigestBits) {
    Bytes out(max_header_bytes);
    ASSERT_EQ(encode_icresp(out, {0, 0, false, true, 4096}), 128u);
    EXPECT_EQ(out[0], 0x01);
    EXPECT_EQ(out[11], 0x02);
    EXPECT_EQ(wire::get32(&out[12]), 4096u);
}

TEST(NvmfPduEncode, CapsuleRespBytesAndDigest) {
    wire::Cqe c;
    c.set_cid(0xBEEF);
    Bytes out(max_header_bytes, 0xAA);
    ASSERT_EQ(encode_capsule_resp(out, c, true), 28u);
    const Bytes common = {0x05, wire::flag_hdgst, 24, 0, 28, 0, 0, 0};
    EXPECT_EQ(Bytes(out.begin(), out.begin() + 8), common);
    EXPECT_EQ(out[8 + 12], 0xEF);
    EXPECT_EQ(out[8 + 13], 0xBE);
    // The header digest: CRC32C of the 24 header bytes, little-endian.
    const std::uint32_t d = crc32c(std::span(out).first(24));
    EXPECT_EQ(Bytes(out.begin() + 24, out.begin() + 28),
              (Bytes{std::uint8_t(d), std::uint8_t(d >> 8), std::uint8_t(d >> 16), std::uint8_t(d >> 24)}));
}

TEST(NvmfPduEncode, H2CDataBytes) {
    Bytes out(max_header_bytes, 0xAA);
    const DataHeader h{0x0201, 0x0403, 0x08070605, 0x0C0B0A09, true, true};
    ASSERT_EQ(encode_data(out, PduType::h2c_data, h, false, true, 4), 24u);
    const std::uint32_t plen = 24 + 0x0C0B0A09u + 4;
    const Bytes head = {0x06, wire::flag_ddgst | wire::flag_last_pdu, 24, 24,
                        std::uint8_t(plen), std::uint8_t(plen >> 8), std::uint8_t(plen >> 16), std::uint8_t(plen >> 24),
                        0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0, 0, 0, 0};
    EXPECT_EQ(Bytes(out.begin(), out.begin() + 24), head) << "SUCCESS is C2HData's alone";
}

TEST(NvmfPduEncode, C2HDataFlagsAndReservedTtag) {
    Bytes out(max_header_bytes);
    ASSERT_EQ(encode_data(out, PduType::c2h_data, {1, 0xFFFF, 0, 16, true, true}, false, false, 4), 24u);
    EXPECT_EQ(out[1], wire::flag_last_pdu | wire::flag_success);
    EXPECT_EQ(wire::get16(&out[10]), 0) << "ttag is reserved in C2HData";
}

TEST(NvmfPduEncode, R2TBytes) {
    Bytes out(max_header_bytes);
    ASSERT_EQ(encode_r2t(out, {3, 4, 512, 1024, true, true}, false), 24u);
    const Bytes common = {0x09, 0, 24, 0, 24, 0, 0, 0};
    EXPECT_EQ(Bytes(out.begin(), out.begin() + 8), common) << "no LAST_PDU/SUCCESS on an R2T";
    EXPECT_EQ(wire::get32(&out[12]), 512u);
    EXPECT_EQ(wire::get32(&out[16]), 1024u);
}

TEST(NvmfPduEncode, PaddingUpToTheAlignment) {
    wire::Sqe s;
    struct Case {
        bool hd;
        std::uint32_t align;
        std::size_t pdo;
    };
    for (Case c : {Case{false, 0, 72}, Case{false, 4, 72}, Case{true, 4, 76}, Case{false, 16, 80},
                   Case{true, 64, 128}, Case{true, 128, 128}}) {
        Bytes out(max_header_bytes, 0xAA);
        ASSERT_EQ(encode_capsule_cmd(out, s, 10, c.hd, false, c.align), c.pdo) << c.align;
        EXPECT_EQ(out[3], c.pdo);
        EXPECT_EQ(wire::get32(&out[4]), c.pdo + 10);
        const std::size_t pad_from = 72 + (c.hd ? 4 : 0);
        EXPECT_EQ(std::count(out.begin() + std::ptrdiff_t(pad_from), out.begin() + std::ptrdiff_t(c.pdo), 0),
                  std::ptrdiff_t(c.pdo - pad_from)) << "padding is zeros";
    }
}

TEST(NvmfPduEncode, RefusesWhatItCannotWrite) {
    wire::Sqe s;
    Bytes out(max_header_bytes);
    EXPECT_EQ(encode_capsule_cmd(out, s, 10, false, false, 6), 0u) << "align not a multiple of 4";
    EXPECT_EQ(encode_capsule_cmd(out, s, 10, false, false, 256), 0u) << "align over 128";
    EXPECT_EQ(encode_capsule_cmd(out, s, 0xFFFFFFFF, false, true, 4), 0u) << "plen overflows";
    EXPECT_EQ(encode_data(out, PduType::h2c_data, {1, 1, 0, 0, true, false}, false, false, 4), 0u) << "no data";
    EXPECT_EQ(encode_data(out, PduType::r2t, {1, 1, 0, 8, true, false}, false, false, 4), 0u) << "not a data type";
    EXPECT_EQ(encode_term(out, PduType::capsule_resp, {}, {}), 0u);
    Bytes tiny(70);
    EXPECT_EQ(encode_capsule_cmd(tiny, s, 0, false, false, 4), 0u);
    EXPECT_EQ(encode_icreq(tiny, {}), 0u);
    Bytes small(27);
    EXPECT_EQ(encode_capsule_resp(small, {}, true), 0u);
    EXPECT_EQ(encode_capsule_resp(small, {}, false), 24u);
}

TEST(NvmfPduEncode, TermReqCopiesAtMost128Bytes) {
    Bytes out(max_header_bytes);
    const Bytes bad = pattern(200);
    const TermReq t{wire::Fes::data_limit_exceeded, 0x01020304};
    ASSERT_EQ(encode_term(out, PduType::c2h_term, t, bad), 152u);
    EXPECT_EQ(out[0], 0x03);
    EXPECT_EQ(out[2], 24);
    EXPECT_EQ(wire::get32(&out[4]), 152u);
    EXPECT_EQ(wire::get16(&out[8]), 0x05);
    EXPECT_EQ(wire::get32(&out[10]), 0x01020304u);
    EXPECT_TRUE(std::equal(bad.begin(), bad.begin() + 128, out.begin() + 24));
    Bytes short_out(100);
    EXPECT_EQ(encode_term(short_out, PduType::c2h_term, t, bad), 0u) << "does not fit";
}

TEST(NvmfPduEncode, C2HDataReservedTtagDecodesAsZero) {
    Bytes out(max_header_bytes);
    ASSERT_EQ(encode_data(out, PduType::c2h_data, {1, 0, 0, 16, true, false}, false, false, 4), 24u);
    wire::put16(&out[10], 0x1234);   // a sender that leaves garbage in the reserved field
    EXPECT_EQ(decode_data(std::span(out).first(24)).ttag, 0);
    out[0] = std::uint8_t(PduType::h2c_data);
    EXPECT_EQ(decode_data(std::span(out).first(24)).ttag, 0x1234);
}

TEST(NvmfPduEncode, DecodersTolerateShortHeaders) {
    const Bytes few(10, 0xFF);
    EXPECT_EQ(decode_icreq(few).maxr2t, 0u);
    EXPECT_EQ(decode_icresp(few).maxh2cdata, 0u);
    EXPECT_EQ(decode_capsule_cmd(few).cid(), 0);
    EXPECT_EQ(decode_capsule_resp(few).cid(), 0);
    EXPECT_EQ(decode_data(few).length, 0u);
    EXPECT_EQ(decode_term(few).fei, 0u);
}

} // namespace
