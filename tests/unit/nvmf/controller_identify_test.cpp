// Identify: every field the kernel host checks (drivers/nvme/host/core.c,
// tcp.c), the namespace data it builds a disk from, and the lists it scans.
#include "controller_fixture.hpp"

namespace rpm::nvmf::target::test {
namespace {

using wire::get16;
using wire::get32;
using wire::get64;

using NvmfControllerIdentify = ControllerTest;

std::vector<std::uint8_t> identify_ok(Controller& c, std::uint8_t cns, std::uint32_t nsid = 0) {
    auto o = c.admin(identify_sqe(cns, nsid), {});
    EXPECT_EQ(o.status, wire::sc::success);
    EXPECT_EQ(o.data.size(), 4096u);
    o.data.resize(4096);
    return o.data;
}

TEST_F(NvmfControllerIdentify, ControllerIdentityFields) {
    auto c = enabled();
    const auto d = identify_ok(*c, wire::cns::ctrl);
    EXPECT_EQ(text(d, 4, 20), padded("rpm0001", 20, ' ')) << "SN";
    EXPECT_EQ(text(d, 24, 40), padded("rpm NVMe-oF target", 40, ' ')) << "MN";
    EXPECT_EQ(text(d, 64, 8), padded("1.0", 8, ' ')) << "FR";
    EXPECT_EQ(get16(&d[78]), c->cntlid()) << "CNTLID must match Connect";
    EXPECT_EQ(get32(&d[80]), 0x00010300u) << "VER";
    EXPECT_EQ(text(d, 768, 256), padded(nvm_nqn, 256, '\0')) << "SUBNQN";
}

TEST_F(NvmfControllerIdentify, ControllerCapabilityFields) {
    auto c = enabled();
    const auto d = identify_ok(*c, wire::cns::ctrl);
    EXPECT_EQ(d[76] & 0x2, 0x2) << "CMIC: multi-controller";
    EXPECT_EQ(d[77], 5) << "MDTS: 128 KiB in 4 KiB pages";
    EXPECT_EQ(get32(&d[92]), 0u) << "OAES";
    EXPECT_EQ(d[111], 1) << "CNTRLTYPE: I/O";
    EXPECT_EQ(d[259], 3) << "AERL";
    EXPECT_EQ(d[261] & 0x4, 0x4) << "LPA: extended data";
    EXPECT_EQ(d[262], 15) << "ELPE";
    EXPECT_EQ(get16(&d[320]), 1) << "KAS must not be 0 on fabrics";
    EXPECT_EQ(d[512], 0x66) << "SQES";
    EXPECT_EQ(d[513], 0x44) << "CQES";
    EXPECT_EQ(get16(&d[514]), 128) << "MAXCMD";
    EXPECT_EQ(get32(&d[516]), 3u) << "NN: highest nsid";
    EXPECT_EQ(get16(&d[520]) & 0x8, 0x8) << "ONCS: Write Zeroes";
    EXPECT_EQ(get16(&d[520]) & 0x4, 0x4) << "ONCS: Dataset Management";
    EXPECT_EQ(d[525], 1) << "VWC";
    EXPECT_EQ(get32(&d[536]), 1u | 1u << 20) << "SGLS";
}

TEST_F(NvmfControllerIdentify, ControllerFabricsFields) {
    auto c = enabled();
    const auto d = identify_ok(*c, wire::cns::ctrl);
    EXPECT_EQ(get32(&d[1792]), (64u + 8192u) / 16) << "IOCCSZ";
    EXPECT_EQ(get32(&d[1796]), 1u) << "IORCSZ";
    EXPECT_EQ(get16(&d[1800]), 0) << "ICDOFF";
    EXPECT_EQ(d[1802], 0) << "FCATT: dynamic";
    EXPECT_EQ(d[1803], 1) << "MSDBD";
}

TEST_F(NvmfControllerIdentify, LimitsShapeMdtsMaxcmdAndIoccsz) {
    Limits l;
    l.max_io_size = 1u << 20;
    l.max_queue_size = 64;
    l.in_capsule_data = 4096;
    rebuild(l);
    auto c = enabled();
    const auto d = identify_ok(*c, wire::cns::ctrl);
    EXPECT_EQ(d[77], 8);
    EXPECT_EQ(get16(&d[514]), 64);
    EXPECT_EQ(get32(&d[1792]), (64u + 4096u) / 16);
}

TEST_F(NvmfControllerIdentify, DiscoveryController) {
    auto [c, o] = connect_admin(wire::discovery_nqn, host_a);
    ASSERT_TRUE(c);
    ASSERT_EQ(c->property_set(prop_set(wire::prop::cc, 1)).status, wire::sc::success);
    const auto d = identify_ok(*c, wire::cns::ctrl);
    EXPECT_EQ(d[111], 2) << "CNTRLTYPE: discovery";
    EXPECT_EQ(get32(&d[516]), 0u) << "NN";
    EXPECT_EQ(get16(&d[78]), c->cntlid());
    EXPECT_EQ(get16(&d[514]), 128) << "MAXCMD";
    EXPECT_EQ(get32(&d[536]), 1u | 1u << 20) << "SGLS";
    EXPECT_EQ(get32(&d[1792]), 4u) << "IOCCSZ: a bare SQE";
    EXPECT_EQ(get32(&d[1796]), 1u);
    EXPECT_EQ(text(d, 768, 256), padded(wire::discovery_nqn, 256, '\0'));
    EXPECT_EQ(c->admin(identify_sqe(wire::cns::ns, 1), {}).status, wire::sc::invalid_field);
}

TEST_F(NvmfControllerIdentify, NamespaceFields) {
    auto c = enabled();
    const auto d = identify_ok(*c, wire::cns::ns, 1);
    EXPECT_EQ(get64(&d[0]), 1000u) << "NSZE";
    EXPECT_EQ(get64(&d[8]), 1000u) << "NCAP";
    EXPECT_EQ(get64(&d[16]), 1000u) << "NUSE";
    EXPECT_EQ(d[25], 0) << "NLBAF";
    EXPECT_EQ(d[26], 0) << "FLBAS";
    EXPECT_EQ(d[30] & 1, 1) << "NMIC: shared";
    const auto nguid = ns_view(1, 0, 0).nguid;
    EXPECT_TRUE(std::equal(nguid.begin(), nguid.end(), d.begin() + 104)) << "NGUID";
    EXPECT_EQ(get16(&d[128]), 0) << "LBAF0.MS";
    EXPECT_EQ(d[130], 9) << "LBAF0.LBADS: 512";
    EXPECT_EQ(identify_ok(*c, wire::cns::ns, 3)[130], 12) << "4096";
    EXPECT_EQ(d[33], 0) << "DLFEAT: a namespace that does not say what deallocated blocks read as";
}

TEST_F(NvmfControllerIdentify, DlfeatSaysWhetherDeallocatedBlocksReadAsZeroes) {
    engine->views[1].deallocated_reads_zeroes = true;  // nsid 3
    auto c = enabled();
    EXPECT_EQ(identify_ok(*c, wire::cns::ns, 3)[33] & 0x7, 1) << "DLFEAT 001b";
    EXPECT_EQ(identify_ok(*c, wire::cns::ns, 1)[33] & 0x7, 0);
}

TEST_F(NvmfControllerIdentify, InactiveNamespaceReadsAsZeros) {
    auto c = enabled();
    const auto d = identify_ok(*c, wire::cns::ns, 2);  // 1..NN, not mapped
    EXPECT_TRUE(std::all_of(d.begin(), d.end(), [](std::uint8_t b) { return b == 0; }));
}

TEST_F(NvmfControllerIdentify, NamespaceOutsideOneToNnIsInvalid) {
    auto c = enabled();
    for (std::uint32_t nsid : {0u, 4u, 0xFFFFFFFFu})
        EXPECT_EQ(run(*c, identify_sqe(wire::cns::ns, nsid)).status, wire::sc::invalid_ns) << nsid;
}

TEST_F(NvmfControllerIdentify, NnCountsConfiguredNamespacesTheEngineDoesNotReport) {
    engine->views = {ns_view(1, 1000, 512)};
    auto c = enabled();
    EXPECT_EQ(get32(&identify_ok(*c, wire::cns::ctrl)[516]), 3u);
    EXPECT_EQ(get64(&identify_ok(*c, wire::cns::ns, 3)[0]), 0u);
}

TEST_F(NvmfControllerIdentify, ActiveNamespaceListAscendingAfterNsid) {
    engine->views = {ns_view(3, 50, 4096), ns_view(1, 1000, 512)};
    auto c = enabled();
    auto d = identify_ok(*c, wire::cns::active_ns_list, 0);
    EXPECT_EQ(get32(&d[0]), 1u);
    EXPECT_EQ(get32(&d[4]), 3u);
    EXPECT_EQ(get32(&d[8]), 0u) << "the list ends with zeros";
    d = identify_ok(*c, wire::cns::active_ns_list, 1);
    EXPECT_EQ(get32(&d[0]), 3u);
    EXPECT_EQ(get32(&d[4]), 0u);
    d = identify_ok(*c, wire::cns::active_ns_list, 3);
    EXPECT_EQ(get32(&d[0]), 0u);
}

TEST_F(NvmfControllerIdentify, ActiveNamespaceListHoldsAtMost1024) {
    engine->views.clear();
    for (std::uint32_t n = 1; n <= 1100; ++n) engine->views.push_back(ns_view(n, 8, 512));
    auto c = enabled();
    auto d = identify_ok(*c, wire::cns::active_ns_list, 0);
    EXPECT_EQ(get32(&d[4092]), 1024u);
    d = identify_ok(*c, wire::cns::active_ns_list, 1024);
    EXPECT_EQ(get32(&d[0]), 1025u);
    EXPECT_EQ(get32(&d[75 * 4]), 1100u);
    EXPECT_EQ(get32(&d[76 * 4]), 0u);
}

TEST_F(NvmfControllerIdentify, ActiveNamespaceListRefusesBroadcastNsids) {
    auto c = enabled();
    EXPECT_EQ(run(*c, identify_sqe(wire::cns::active_ns_list, 0xFFFFFFFE)).status, wire::sc::invalid_ns);
    EXPECT_EQ(run(*c, identify_sqe(wire::cns::active_ns_list, 0xFFFFFFFF)).status, wire::sc::invalid_ns);
}

TEST_F(NvmfControllerIdentify, DescriptorListHasOneNguid) {
    auto c = enabled();
    const auto d = identify_ok(*c, wire::cns::ns_desc_list, 3);
    EXPECT_EQ(d[0], 2) << "NIDT: NGUID";
    EXPECT_EQ(d[1], 16) << "NIDL";
    const auto nguid = ns_view(3, 0, 0).nguid;
    EXPECT_TRUE(std::equal(nguid.begin(), nguid.end(), d.begin() + 4));
    EXPECT_EQ(d[20], 0) << "then the list ends (NIDL 0)";
    EXPECT_EQ(d[21], 0);
}

TEST_F(NvmfControllerIdentify, DescriptorListOfInactiveNamespaceIsInvalid) {
    auto c = enabled();
    EXPECT_EQ(run(*c, identify_sqe(wire::cns::ns_desc_list, 2)).status, wire::sc::invalid_ns);
    EXPECT_EQ(run(*c, identify_sqe(wire::cns::ns_desc_list, 0)).status, wire::sc::invalid_ns);
}

TEST_F(NvmfControllerIdentify, OtherCnsIsInvalidField) {
    auto c = enabled();
    for (std::uint8_t cns : std::vector<std::uint8_t>{0x04, 0x06, 0x10, 0x12})
        EXPECT_EQ(run(*c, identify_sqe(cns, 1)).status, wire::sc::invalid_field) << int(cns);
}

TEST_F(NvmfControllerIdentify, CnsComesFromLowByteOfCdw10Only) {
    auto c = enabled();
    auto sqe = identify_sqe(wire::cns::ctrl);
    sqe.set_cdw(10, 0xABCD0001);  // CNTID in 31:16
    EXPECT_EQ(run(*c, sqe).status, wire::sc::success);
}

TEST_F(NvmfControllerIdentify, BeforeEnableIsSequenceError) {
    auto [c, o] = connect_admin();
    ASSERT_TRUE(c);
    EXPECT_EQ(run(*c, identify_sqe(wire::cns::ctrl)).status, wire::sc::command_sequence_error);
}

} // namespace
} // namespace rpm::nvmf::target::test
