// NVMe/RDMA's wire pieces (src/nvmf/rdma_wire.cpp): the rdma_cm private
// data of a request, accept and reject, and the SGLs a command capsule
// names its data with, field by field as the RDMA transport binding has them.
#include "nvmf/rdma_wire.hpp"

#include <gtest/gtest.h>

#include <array>
#include <vector>

namespace rpm::nvmf::rdma_wire {
namespace {

using target::CommandData;

std::array<std::uint8_t, cm_req_len> request(std::uint16_t recfmt, std::uint16_t qid, std::uint16_t hrqsize,
                                             std::uint16_t hsqsize, std::uint16_t cntlid = 0xFFFF) {
    std::array<std::uint8_t, cm_req_len> r{};
    wire::put16(&r[0], recfmt);
    wire::put16(&r[2], qid);
    wire::put16(&r[4], hrqsize);
    wire::put16(&r[6], hsqsize);
    wire::put16(&r[8], cntlid);
    return r;
}

// The Linux host's requests: the admin queue 32 deep, an I/O queue 128.
TEST(RdmaCmRequest, TheLinuxHostsAdminAndIoRequestsAreTaken) {
    auto admin = parse_cm_request(request(0, 0, 32, 31), 8, 32, 128);
    ASSERT_TRUE(admin.request);
    EXPECT_EQ(admin.request->qid, 0);
    EXPECT_EQ(admin.request->hrqsize, 32);
    EXPECT_EQ(admin.request->depth(), 32u);
    auto io = parse_cm_request(request(0, 2, 128, 127, 1), 8, 32, 128);
    ASSERT_TRUE(io.request);
    EXPECT_EQ(io.request->qid, 2);
    EXPECT_EQ(io.request->cntlid, 1);
    EXPECT_EQ(io.request->depth(), 128u);
}

TEST(RdmaCmRequest, EachBadFieldHasItsRejectStatus) {
    const auto r = request(0, 1, 16, 15);
    EXPECT_EQ(parse_cm_request(std::span(r).first(31), 8, 32, 128).reject, CmStatus::invalid_length);
    EXPECT_FALSE(parse_cm_request({}, 8, 32, 128).request);
    EXPECT_EQ(parse_cm_request(request(1, 1, 16, 15), 8, 32, 128).reject, CmStatus::invalid_recfmt);
    EXPECT_EQ(parse_cm_request(request(0, 9, 16, 15), 8, 32, 128).reject, CmStatus::invalid_qid);
    EXPECT_EQ(parse_cm_request(request(0, 1, 16, 0), 8, 32, 128).reject, CmStatus::invalid_hsqsize);
    EXPECT_EQ(parse_cm_request(request(0, 1, 130, 128), 8, 32, 128).reject, CmStatus::invalid_hsqsize);
    EXPECT_EQ(parse_cm_request(request(0, 0, 64, 63), 8, 32, 128).reject, CmStatus::invalid_hsqsize);
    EXPECT_EQ(parse_cm_request(request(0, 1, 15, 15), 8, 32, 128).reject, CmStatus::invalid_hrqsize);
    EXPECT_EQ(parse_cm_request(request(0, 1, 200, 15), 8, 32, 128).reject, CmStatus::invalid_hrqsize);
    for (const auto& bad : {request(1, 1, 16, 15), request(0, 9, 16, 15), request(0, 1, 15, 15)})
        EXPECT_FALSE(parse_cm_request(bad, 8, 32, 128).request);
    // The largest queue it serves, and the longest private data, are fine.
    std::vector<std::uint8_t> longer(56, 0);
    const auto most = request(0, 8, 129, 127);
    std::copy(most.begin(), most.end(), longer.begin());
    EXPECT_TRUE(parse_cm_request(longer, 8, 32, 128).request);
}

TEST(RdmaCmReply, AcceptAndRejectCarryRecfmtZeroAndTheirField) {
    const auto a = cm_accept(128);
    EXPECT_EQ(a.size(), 32u);
    EXPECT_EQ(wire::get16(&a[0]), 0);
    EXPECT_EQ(wire::get16(&a[2]), 128);
    for (std::size_t i = 4; i < a.size(); ++i) EXPECT_EQ(a[i], 0) << i;
    const auto r = cm_reject(CmStatus::invalid_hsqsize);
    EXPECT_EQ(r.size(), 4u);
    EXPECT_EQ(wire::get16(&r[0]), 0);
    EXPECT_EQ(wire::get16(&r[2]), 4);
}

wire::Sqe keyed(std::uint8_t type, std::uint64_t addr, std::uint32_t len24, std::uint32_t key) {
    wire::Sqe s;
    wire::put64(&s.b[24], addr);
    s.b[32] = std::uint8_t(len24);
    s.b[33] = std::uint8_t(len24 >> 8);
    s.b[34] = std::uint8_t(len24 >> 16);
    wire::put32(&s.b[35], key);
    s.b[39] = type;
    return s;
}

TEST(RdmaSgl, AKeyedDataBlockNamesHostMemory) {
    const auto r = decode_sgl(keyed(sgl_keyed, 0x1122334455667788, 0xABCDEF, 0xCAFEF00D), {});
    EXPECT_EQ(r.data.where, CommandData::Where::host);
    EXPECT_EQ(r.data.length, 0xABCDEFu);  // three bytes, not four: the key's low byte is not length
    EXPECT_EQ(r.addr, 0x1122334455667788u);
    EXPECT_EQ(r.key, 0xCAFEF00Du);
    EXPECT_FALSE(r.invalidate);
    EXPECT_EQ(r.data.status, 0);
    const auto inv = decode_sgl(keyed(sgl_keyed_invalidate, 4096, 512, 7), {});
    EXPECT_TRUE(inv.invalidate);
    EXPECT_EQ(inv.key, 7u);
    EXPECT_EQ(inv.data.length, 512u);
}

TEST(RdmaSgl, AKeyedBlockOfLengthZeroCarriesNoDataButItsKey) {
    const auto r = decode_sgl(keyed(sgl_keyed_invalidate, 0, 0, 9), {});
    EXPECT_EQ(r.data.where, CommandData::Where::none);
    EXPECT_TRUE(r.invalidate);
    EXPECT_EQ(r.key, 9u);
}

TEST(RdmaSgl, AnOffsetBlockTakesItsBytesFromTheCapsule) {
    std::vector<std::uint8_t> capsule(100);
    for (std::size_t i = 0; i < capsule.size(); ++i) capsule[i] = std::uint8_t(i);
    wire::Sqe s;
    s.set_sgl(wire::sgl_incapsule, 10, 50);
    const auto r = decode_sgl(s, capsule);
    EXPECT_EQ(r.data.where, CommandData::Where::in_capsule);
    ASSERT_EQ(r.data.bytes.size(), 50u);
    EXPECT_EQ(r.data.bytes[0], 10);
    EXPECT_EQ(r.data.bytes[49], 59);
    EXPECT_EQ(r.data.status, 0);
}

TEST(RdmaSgl, AnOffsetOrLengthOutsideTheCapsuleIsRefused) {
    std::vector<std::uint8_t> capsule(100);
    wire::Sqe s;
    s.set_sgl(wire::sgl_incapsule, 101, 0);
    EXPECT_EQ(decode_sgl(s, capsule).data.status, wire::sc::sgl_offset_invalid);
    s.set_sgl(wire::sgl_incapsule, 60, 41);
    EXPECT_EQ(decode_sgl(s, capsule).data.status, wire::sc::sgl_data_length_invalid);
    s.set_sgl(wire::sgl_incapsule, 0, 1);
    EXPECT_EQ(decode_sgl(s, {}).data.status, wire::sc::sgl_data_length_invalid);
    // A bare SQE with an empty offset block has no data.
    s.set_sgl(wire::sgl_incapsule, 0, 0);
    EXPECT_EQ(decode_sgl(s, {}).data.where, CommandData::Where::none);
}

TEST(RdmaSgl, DescriptorsNvmeRdmaDoesNotCarryAreRefused) {
    // NVMe/TCP's transport data block, a plain address data block, a bit bucket.
    for (std::uint8_t type : {wire::sgl_transport, std::uint8_t(0x00), std::uint8_t(0x10), std::uint8_t(0x41)}) {
        wire::Sqe s;
        s.set_sgl(type, 0, 512);
        EXPECT_EQ(decode_sgl(s, {}).data.status, wire::sc::sgl_descriptor_type_invalid) << int(type);
    }
}

} // namespace
} // namespace rpm::nvmf::rdma_wire
