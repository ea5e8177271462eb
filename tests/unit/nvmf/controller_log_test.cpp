// Get Log Page: the discovery log nvme-cli reads (in 4 KiB pieces, with
// offsets), the Error Information and SMART logs, and the window rules.
#include "controller_fixture.hpp"

namespace rpm::nvmf::target::test {
namespace {

using wire::get16;
using wire::get32;
using wire::get64;

class NvmfControllerLogPages : public ControllerTest {
protected:
    std::shared_ptr<Controller> discovery() {
        auto c = connect_admin(wire::discovery_nqn, host_a).first;
        EXPECT_TRUE(c);
        if (c) {
            EXPECT_EQ(c->property_set(prop_set(wire::prop::cc, 1)).status, wire::sc::success);
        }
        return c;
    }
    std::vector<std::uint8_t> read(Controller& c, const wire::Sqe& sqe) {
        auto o = run(c, sqe);
        EXPECT_EQ(o.status, wire::sc::success);
        return o.data;
    }
};

TEST_F(NvmfControllerLogPages, DiscoveryHeader) {
    auto c = discovery();
    const auto d = read(*c, log_sqe(wire::lid::discovery, 1024));
    ASSERT_EQ(d.size(), 1024u);
    EXPECT_EQ(get64(&d[0]), 1u) << "GENCTR";
    EXPECT_EQ(get64(&d[8]), 2u) << "NUMREC";
    EXPECT_EQ(get16(&d[16]), 0) << "RECFMT";
}

TEST_F(NvmfControllerLogPages, DiscoveryEntryFields) {
    auto c = discovery();
    const auto d = read(*c, log_sqe(wire::lid::discovery, 3072));
    ASSERT_EQ(d.size(), 3072u);
    const auto* e = &d[1024];
    EXPECT_EQ(e[0], 3) << "TRTYPE: TCP";
    EXPECT_EQ(e[1], 1) << "ADRFAM: IPv4";
    EXPECT_EQ(e[2], 2) << "SUBTYPE: NVM subsystem";
    EXPECT_EQ(e[3], 2) << "TREQ: secure channel not required";
    EXPECT_EQ(get16(e + 4), 1) << "PORTID";
    EXPECT_EQ(get16(e + 6), 0xFFFF) << "CNTLID: dynamic";
    EXPECT_EQ(get16(e + 8), 32) << "ASQSZ";
    EXPECT_EQ(text(d, 1024 + 32, 32), padded("4420", 32, ' ')) << "TRSVCID";
    EXPECT_EQ(text(d, 1024 + 256, 256), padded(nvm_nqn, 256, '\0')) << "SUBNQN";
    EXPECT_EQ(text(d, 1024 + 512, 256), padded("127.0.0.1", 256, ' ')) << "TRADDR";
    EXPECT_EQ(e[768], 0) << "TSAS.SECTYPE: none";
    EXPECT_EQ(text(d, 2048 + 256, 256), padded(restricted_nqn, 256, '\0')) << "second entry";
}

TEST_F(NvmfControllerLogPages, DiscoveryEntryFallsBackToLimitsForAddress) {
    entries[0].traddr.clear();
    entries[0].trsvcid.clear();
    Limits l;
    l.traddr = "10.0.0.7";
    l.trsvcid = 4421;
    // rebuild() resets entries; make the registry by hand.
    registry = std::make_unique<Registry>(std::vector{Subsystem::make_discovery(entries)}, l);
    auto c = discovery();
    const auto d = read(*c, log_sqe(wire::lid::discovery, 2048));
    EXPECT_EQ(text(d, 1024 + 32, 32), padded("4421", 32, ' '));
    EXPECT_EQ(text(d, 1024 + 512, 256), padded("10.0.0.7", 256, ' '));
}

TEST_F(NvmfControllerLogPages, OffsetSelectsTheWindow) {
    auto c = discovery();
    const auto whole = read(*c, log_sqe(wire::lid::discovery, 3072));
    const auto part = read(*c, log_sqe(wire::lid::discovery, 1024, 2048));
    ASSERT_EQ(part.size(), 1024u);
    EXPECT_TRUE(std::equal(part.begin(), part.end(), whole.begin() + 2048));
    const auto odd = read(*c, log_sqe(wire::lid::discovery, 8, 1028));
    EXPECT_TRUE(std::equal(odd.begin(), odd.end(), whole.begin() + 1028));
}

TEST_F(NvmfControllerLogPages, LengthPastThePageIsZeroPadded) {
    auto c = discovery();
    const auto d = read(*c, log_sqe(wire::lid::discovery, 4096));
    ASSERT_EQ(d.size(), 4096u) << "what the host asked for";
    EXPECT_EQ(d[1024], 3);
    EXPECT_TRUE(std::all_of(d.begin() + 3072, d.end(), [](std::uint8_t b) { return b == 0; }));
    const auto at_end = read(*c, log_sqe(wire::lid::discovery, 16, 3072));
    EXPECT_EQ(at_end, std::vector<std::uint8_t>(16, 0));
}

TEST_F(NvmfControllerLogPages, UnalignedOffsetIsInvalidField) {
    auto c = discovery();
    EXPECT_EQ(run(*c, log_sqe(wire::lid::discovery, 16, 2)).status, wire::sc::invalid_field);
}

TEST_F(NvmfControllerLogPages, OffsetBeyondThePageIsInvalidField) {
    auto c = discovery();
    EXPECT_EQ(run(*c, log_sqe(wire::lid::discovery, 16, 3076)).status, wire::sc::invalid_field);
    EXPECT_EQ(run(*c, log_sqe(wire::lid::discovery, 16, 1ull << 32)).status, wire::sc::invalid_field) << "LPOU";
}

TEST_F(NvmfControllerLogPages, LengthUsesNumduAndIsBoundByMdts) {
    Limits l;
    l.max_io_size = 512 * 1024;
    rebuild(l);
    auto c = discovery();
    auto sqe = log_sqe(wire::lid::discovery, 4);
    sqe.set_cdw(10, wire::lid::discovery | 0xFFFFu << 16);  // NUMDL
    EXPECT_EQ(read(*c, sqe).size(), 0x10000u * 4);
    sqe.set_cdw(11, 1);  // NUMDU: (0x1FFFF + 1) dwords = 512 KiB
    EXPECT_EQ(read(*c, sqe).size(), 0x20000u * 4);
    sqe.set_cdw(10, wire::lid::discovery | 1u << 16);  // NUMD 0x20001: just over 512 KiB
    sqe.set_cdw(11, 2);
    EXPECT_EQ(run(*c, sqe).status, wire::sc::invalid_field);
}

TEST_F(NvmfControllerLogPages, UnknownOrForeignPagesAreInvalidLogPage) {
    auto nvm = enabled();
    EXPECT_EQ(run(*nvm, log_sqe(wire::lid::discovery, 1024)).status, wire::sc::invalid_log_page);
    EXPECT_EQ(run(*nvm, log_sqe(0x05, 512)).status, wire::sc::invalid_log_page);
    auto d = discovery();
    EXPECT_EQ(run(*d, log_sqe(wire::lid::smart, 512)).status, wire::sc::invalid_log_page);
    EXPECT_EQ(run(*d, log_sqe(wire::lid::error, 64)).status, wire::sc::invalid_log_page);
}

TEST_F(NvmfControllerLogPages, ErrorLogNewestFirst) {
    auto c = enabled();
    c->record_error(1, 10, wire::sc::lba_out_of_range, 1);
    c->record_error(2, 11, wire::sc::invalid_ns, 7);
    const auto d = read(*c, log_sqe(wire::lid::error, 1024, 0, 0));
    ASSERT_EQ(d.size(), 1024u);
    EXPECT_EQ(get64(&d[0]), 2u) << "error count";
    EXPECT_EQ(get16(&d[8]), 2) << "SQID";
    EXPECT_EQ(get16(&d[10]), 11) << "CID";
    EXPECT_EQ(get16(&d[12]), wire::sc::invalid_ns << 1) << "status field, phase bit 0";
    EXPECT_EQ(get32(&d[24]), 7u) << "NSID";
    EXPECT_EQ(get64(&d[64]), 1u);
    EXPECT_EQ(get16(&d[64 + 12]), wire::sc::lba_out_of_range << 1);
    EXPECT_EQ(get64(&d[128]), 0u) << "no third entry";
}

TEST_F(NvmfControllerLogPages, ErrorLogKeepsSixteen) {
    auto c = enabled();
    for (std::uint16_t i = 1; i <= 20; ++i) c->record_error(0, i, wire::sc::invalid_field, 0);
    const auto d = read(*c, log_sqe(wire::lid::error, 2048, 0, 0));
    EXPECT_EQ(get64(&d[0]), 20u);
    EXPECT_EQ(get64(&d[15 * 64]), 5u);
    EXPECT_EQ(get64(&d[16 * 64]), 0u) << "past 16 entries: zeros";
    const auto one = read(*c, log_sqe(wire::lid::error, 64, 64, 0));
    EXPECT_EQ(get64(&one[0]), 19u) << "second entry through the offset";
}

TEST_F(NvmfControllerLogPages, SmartHealthAndCounters) {
    auto c = enabled();
    c->record_io(false, 512000);
    c->record_io(false, 1);
    c->record_io(true, 4096);
    c->record_error(1, 1, wire::sc::write_fault, 1);
    const auto d = read(*c, log_sqe(wire::lid::smart, 512));
    ASSERT_EQ(d.size(), 512u);
    EXPECT_EQ(d[0], 0) << "critical warning";
    EXPECT_EQ(get16(&d[1]), 298) << "25 C in kelvin";
    EXPECT_EQ(d[3], 100) << "available spare";
    EXPECT_EQ(d[4], 10) << "spare threshold";
    EXPECT_EQ(d[5], 0) << "percentage used";
    EXPECT_EQ(get64(&d[32]), 2u) << "data units read, rounded up";
    EXPECT_EQ(get64(&d[40]), 0u);
    EXPECT_EQ(get64(&d[48]), 1u) << "data units written";
    EXPECT_EQ(get64(&d[64]), 2u) << "host read commands";
    EXPECT_EQ(get64(&d[80]), 1u) << "host write commands";
    EXPECT_EQ(get64(&d[176]), 1u) << "error log entries";
}

TEST_F(NvmfControllerLogPages, SmartIsControllerWideOnly) {
    auto c = enabled();
    EXPECT_EQ(run(*c, log_sqe(wire::lid::smart, 512, 0, 0)).status, wire::sc::success);
    EXPECT_EQ(run(*c, log_sqe(wire::lid::smart, 512, 0, 1)).status, wire::sc::invalid_field);
}

TEST_F(NvmfControllerLogPages, BeforeEnableIsSequenceError) {
    auto c = connect_admin(wire::discovery_nqn, host_a).first;
    ASSERT_TRUE(c);
    EXPECT_EQ(run(*c, log_sqe(wire::lid::discovery, 1024)).status, wire::sc::command_sequence_error);
}

} // namespace
} // namespace rpm::nvmf::target::test
