// Bad input to rpm's NVMe/TCP target: each gets its NVMe status, or the
// connection is terminated with a C2HTermReq; the target keeps serving.
#include "target_support.hpp"

#include <thread>

namespace rpm::nvmf {
namespace {

using testing::TempDir;

struct NvmfTargetBadInput : ::testing::Test {
    TempDir dir;
    std::optional<Target> target;
    std::optional<Host> host;
    void SetUp() override {
        auto t = Target::start(testing::options(dir));
        ASSERT_TRUE(t) << t.error().message();
        target = std::move(*t);
        auto h = Host::connect(testing::host_options(target->port()));
        ASSERT_TRUE(h) << h.error().message();
        host.emplace(std::move(*h));
    }
    std::uint16_t io(wire::Sqe s, std::span<const std::byte> out = {}, std::span<std::byte> in = {}) {
        auto c = host->raw(1, std::span<const std::uint8_t, 64>(s.b.data(), 64), out, in);
        EXPECT_TRUE(c) << c.error().message();
        return c ? c->status : 0xFFFF;
    }
    /// The target still serves a new host after whatever a test did.
    void still_serving() {
        auto h = Host::connect(testing::host_options(target->port()));
        ASSERT_TRUE(h) << h.error().message();
        std::vector<std::byte> b(512);
        EXPECT_TRUE(h->read(1, 0, b));
    }
};

wire::Sqe rw(std::uint8_t op, std::uint32_t nsid, std::uint64_t lba, std::uint32_t blocks) {
    wire::Sqe s;
    s.set_opcode(op);
    s.set_nsid(nsid);
    s.set_cdw(10, std::uint32_t(lba));
    s.set_cdw(11, std::uint32_t(lba >> 32));
    s.set_cdw(12, blocks - 1);
    return s;
}

/// Over raw connections: an admin queue (Connect, CC.EN = 1) and I/O queue 1
/// of the same controller.
void connect_io_queue(testing::Raw& admin, testing::Raw& io) {
    admin.handshake(false, false);
    admin.send(admin.connect_capsule(0));
    auto p = admin.read();
    ASSERT_EQ(p.size(), wire::capsule_resp_hlen);
    const auto cntlid = std::uint16_t(pdu::decode_capsule_resp(p).dw0());
    wire::Sqe cc;
    cc.set_opcode(wire::admin::fabrics);
    cc.set_fctype(wire::fctype::property_set);
    wire::put32(&cc.b[44], wire::prop::cc);
    wire::put64(&cc.b[48], 1u | 6u << 16 | 4u << 20);
    admin.send(admin.capsule(cc, 0));
    ASSERT_EQ(admin.status(), wire::sc::success);
    io.handshake(false, false);
    io.send(io.connect_capsule(0, false, 1, cntlid));
    ASSERT_EQ(io.status(), wire::sc::success);
}

/// The H2CData PDU the target reads for a write of 8 blocks (4096 bytes)
/// on a raw I/O queue: its R2T's transfer tag.
std::uint16_t write_r2t(testing::Raw& io, std::uint16_t cid) {
    wire::Sqe w = rw(wire::io::write, 1, 0, 8);
    w.set_cid(cid);
    io.send(io.capsule(w, 4096));
    auto r2t = io.read();
    EXPECT_EQ(r2t.size(), wire::data_hlen);
    EXPECT_EQ(r2t.empty() ? 0 : r2t[0], std::uint8_t(wire::PduType::r2t));
    return r2t.size() == wire::data_hlen ? pdu::decode_data(r2t).ttag : 0;
}

TEST_F(NvmfTargetBadInput, UnknownOpcodeIsInvalidOpcode) {
    wire::Sqe s;
    s.set_opcode(0x7E);
    s.set_nsid(1);
    EXPECT_EQ(io(s), wire::sc::invalid_opcode);
    still_serving();
}

TEST_F(NvmfTargetBadInput, LbaOutOfRange) {
    std::vector<std::byte> b(512);
    const std::uint64_t blocks = (4u << 20) / 512;
    EXPECT_EQ(io(rw(wire::io::read, 1, blocks, 1), {}, b), wire::sc::lba_out_of_range);
    std::vector<std::byte> two(1024), four(2048);
    EXPECT_EQ(io(rw(wire::io::read, 1, blocks - 1, 2), {}, two), wire::sc::lba_out_of_range);
    EXPECT_EQ(io(rw(wire::io::read, 1, ~0ull - 1, 4), {}, four), wire::sc::lba_out_of_range);
    EXPECT_EQ(io(rw(wire::io::read, 1, blocks - 1, 1), {}, b), wire::sc::success);  // the last block is fine
    EXPECT_EQ(io(rw(wire::io::write_zeroes, 1, blocks, 1)), wire::sc::lba_out_of_range);
}

TEST_F(NvmfTargetBadInput, UnknownNamespaceIsInvalidNs) {
    std::vector<std::byte> b(512);
    EXPECT_EQ(io(rw(wire::io::read, 9, 0, 1), {}, b), wire::sc::invalid_ns);
}

TEST_F(NvmfTargetBadInput, TransferOverMdtsIsRefusedBeforeAnyData) {
    // 256 KiB write (MDTS is 128 KiB): refused without an R2T.
    const auto data = testing::random_bytes(256 * 1024, 1);
    EXPECT_EQ(io(rw(wire::io::write, 1, 0, 512), data), wire::sc::invalid_field);
    std::vector<std::byte> in(256 * 1024);
    EXPECT_NE(io(rw(wire::io::read, 1, 0, 512), {}, in), wire::sc::success);
    still_serving();
}

TEST_F(NvmfTargetBadInput, SglLengthDisagreeingWithBlocksIsRefused) {
    // 2 blocks asked, 1 block of data sent.
    const auto data = testing::random_bytes(512, 2);
    EXPECT_EQ(io(rw(wire::io::write, 1, 0, 2), data), wire::sc::sgl_data_length_invalid);
    std::vector<std::byte> in(512);
    EXPECT_EQ(io(rw(wire::io::read, 1, 0, 2), {}, in), wire::sc::sgl_data_length_invalid);
}

TEST_F(NvmfTargetBadInput, IoBeforeConnectIsASequenceError) {
    testing::Raw raw(target->port());
    raw.handshake(false, false);
    wire::Sqe s = rw(wire::io::read, 1, 0, 1);
    s.set_flags(wire::psdt_sgl);
    s.set_sgl(wire::sgl_transport, 0, 512);
    std::vector<std::uint8_t> out(pdu::max_header_bytes);
    out.resize(pdu::encode_capsule_cmd(out, s, 0, false, false, 4));
    raw.send(out);
    auto p = raw.read();
    ASSERT_EQ(p.size(), wire::capsule_resp_hlen);
    EXPECT_EQ(pdu::decode_capsule_resp(p).status(), wire::sc::command_sequence_error);
}

TEST_F(NvmfTargetBadInput, MalformedPduTerminatesTheConnection) {
    testing::Raw raw(target->port());
    raw.handshake(false, false);
    // A common header of an unknown type.
    std::array<std::uint8_t, 8> junk{0x42, 0, 8, 0, 8, 0, 0, 0};
    raw.send(junk);
    auto p = raw.read();
    ASSERT_GE(p.size(), wire::term_hlen);
    EXPECT_EQ(p[0], std::uint8_t(wire::PduType::c2h_term));
    EXPECT_TRUE(raw.closed());
    EXPECT_GE(target->stats().connections_terminated, 1u);
    still_serving();
}

TEST_F(NvmfTargetBadInput, NonIcFirstTerminatesTheConnection) {
    testing::Raw raw(target->port());
    // A CapsuleCmd before ICReq.
    wire::Sqe s;
    std::vector<std::uint8_t> out(pdu::max_header_bytes);
    out.resize(pdu::encode_capsule_cmd(out, s, 0, false, false, 4));
    raw.send(out);
    auto p = raw.read();
    ASSERT_GE(p.size(), wire::term_hlen);
    EXPECT_EQ(p[0], std::uint8_t(wire::PduType::c2h_term));
    EXPECT_EQ(pdu::decode_term(p).fes, wire::Fes::pdu_sequence_error);
    EXPECT_TRUE(raw.closed());
}

// An H2CTermReq as the very first PDU (the 24 bytes of the report in issue
// 16): the host ends the connection; no ICResp, no set-up.
TEST_F(NvmfTargetBadInput, TermReqFirstClosesWithoutAnIcResp) {
    testing::Raw raw(target->port());
    std::array<std::uint8_t, 24> term{0x02, 0x00, 0x18, 0x00, 0x18, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00};
    raw.send(term);
    EXPECT_TRUE(raw.read().empty()) << "the target answered a TermReq as if it were an ICReq";
    still_serving();
}

TEST_F(NvmfTargetBadInput, HeaderDigestMismatchTerminates) {
    testing::Raw raw(target->port());
    ASSERT_TRUE(raw.handshake(true, false).hdgst);
    auto capsule = raw.connect_capsule(0);
    capsule[wire::capsule_cmd_hlen] ^= 0xFF;  // first byte of the header digest
    raw.send(capsule);
    auto p = raw.read();
    ASSERT_GE(p.size(), wire::term_hlen);
    EXPECT_EQ(pdu::decode_term(p).fes, wire::Fes::header_digest_error);
    EXPECT_TRUE(raw.closed());
    EXPECT_GE(target->stats().digest_errors, 1u);
}

TEST_F(NvmfTargetBadInput, DataDigestMismatchFailsTheCommand) {
    testing::Raw raw(target->port());
    ASSERT_TRUE(raw.handshake(false, true).ddgst);
    raw.send(raw.connect_capsule(0, /*corrupt_digest=*/true));
    auto p = raw.read();
    ASSERT_EQ(p.size(), wire::capsule_resp_hlen);
    EXPECT_EQ(pdu::decode_capsule_resp(p).status(), wire::sc::transient_transport_error);
    // The framing was intact: the same connection can still Connect.
    raw.send(raw.connect_capsule(0));
    p = raw.read();
    ASSERT_EQ(p.size(), wire::capsule_resp_hlen);
    EXPECT_EQ(pdu::decode_capsule_resp(p).status(), wire::sc::success);
}

TEST_F(NvmfTargetBadInput, UnknownSubsystemAndRefusedHostAreConnectErrors) {
    auto o = testing::host_options(target->port());
    o.subnqn = "nqn.2026-11.io.rpm:nobody";
    auto h = Host::connect(o);
    ASSERT_FALSE(h);
    EXPECT_EQ(h.error(), errc::nvme_status);
    EXPECT_NE(h.error().detail().find("SC 0x82"), std::string::npos) << h.error().detail();

    TempDir d2;
    auto opts = testing::options(d2);
    opts.subsystems[0].allowed_hosts = {"nqn.2026-11.io.rpm:someone-else"};
    auto t = Target::start(opts);
    ASSERT_TRUE(t);
    auto refused = Host::connect(testing::host_options(t->port()));
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().detail().find("SC 0x84"), std::string::npos) << refused.error().detail();
}

TEST_F(NvmfTargetBadInput, KeepAliveExpiryTearsTheControllerDown) {
    testing::Raw raw(target->port());
    raw.handshake(false, false);
    raw.send(raw.connect_capsule(300));  // KATO 300 ms, then silence
    auto p = raw.read();
    ASSERT_EQ(p.size(), wire::capsule_resp_hlen);
    ASSERT_EQ(pdu::decode_capsule_resp(p).status(), wire::sc::success);
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_TRUE(raw.closed());  // blocks until the target closes it
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
    EXPECT_GE(target->stats().keep_alive_expired, 1u);
}

/// A read's answer: its C2HData's bytes (empty when it was something else)
/// and the CapsuleResp's status after it.
std::vector<std::uint8_t> read_answer(testing::Raw& io, std::uint16_t cid, std::uint16_t& status) {
    auto c2h = io.read();
    status = 0xFFFF;
    if (c2h.size() < wire::data_hlen || c2h[0] != std::uint8_t(wire::PduType::c2h_data) ||
        pdu::decode_data(c2h).cccid != cid)
        return {};
    auto p = io.read();
    if (p.size() == wire::capsule_resp_hlen && pdu::decode_capsule_resp(p).cid() == cid)
        status = pdu::decode_capsule_resp(p).status();
    return {c2h.begin() + wire::data_hlen, c2h.end()};
}

/// Hosts pipeline: the Linux host sends the next capsule before the
/// H2CData of a write it was asked for. The target answers it at once (it
/// does not wait for the write's data) and runs the write once its data came.
TEST_F(NvmfTargetBadInput, CapsuleArrivingWhileAwaitingH2CDataRunsNext) {
    testing::Raw admin(target->port()), io(target->port());
    connect_io_queue(admin, io);
    std::vector<std::uint8_t> p;

    wire::Sqe w = rw(wire::io::write, 1, 0, 8);
    w.set_cid(1);
    wire::Sqe r = rw(wire::io::read, 1, 0, 8);
    r.set_cid(2);
    io.send(io.capsule(w, 4096));
    io.send(io.capsule(r, 4096));  // before the write's data
    auto r2t = io.read();
    ASSERT_EQ(r2t.size(), wire::data_hlen);
    ASSERT_EQ(r2t[0], std::uint8_t(wire::PduType::r2t));
    const auto h = pdu::decode_data(r2t);
    std::uint16_t status = 0;
    EXPECT_EQ(read_answer(io, 2, status), std::vector<std::uint8_t>(4096)) << "the read ran before the write";
    EXPECT_EQ(status, wire::sc::success);
    std::vector<std::uint8_t> data(4096);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = std::uint8_t(i * 7);
    io.h2c(1, h.ttag, 0, data);
    p = io.read();
    ASSERT_EQ(p.size(), wire::capsule_resp_hlen);
    EXPECT_EQ(pdu::decode_capsule_resp(p).cid(), 1);
    EXPECT_EQ(pdu::decode_capsule_resp(p).status(), wire::sc::success);
    r.set_cid(3);
    io.send(io.capsule(r, 4096));
    EXPECT_EQ(read_answer(io, 3, status), data);
    EXPECT_EQ(status, wire::sc::success);
}

/// While a write's R2T is outstanding the host may wait for other commands'
/// answers before it sends the data: they are answered; a second write
/// gets its R2T once the first one's data came, and both are applied.
TEST_F(NvmfTargetBadInput, CapsulesAreAnsweredWhileAnR2TIsOutstanding) {
    testing::Raw admin(target->port()), io(target->port());
    connect_io_queue(admin, io);
    const auto ttag = write_r2t(io, 1);  // writes blocks 0-7; the R2T stays outstanding
    wire::Sqe second = rw(wire::io::write, 1, 8, 8);
    second.set_cid(2);
    io.send(io.capsule(second, 4096));  // waits behind the first write's transfer
    for (std::uint16_t cid : {std::uint16_t(3), std::uint16_t(4)}) {
        wire::Sqe r = rw(wire::io::read, 1, 16, 1);
        r.set_cid(cid);
        io.send(io.capsule(r, 512));
        std::uint16_t status = 0;
        EXPECT_EQ(read_answer(io, cid, status).size(), 512u) << "a read answered while the R2T is outstanding";
        EXPECT_EQ(status, wire::sc::success);
    }
    wire::Sqe flush;
    flush.set_opcode(wire::io::flush);
    flush.set_nsid(1);
    flush.set_cid(5);
    io.send(io.capsule(flush, 0));
    auto p = io.read();
    ASSERT_EQ(p.size(), wire::capsule_resp_hlen);
    EXPECT_EQ(pdu::decode_capsule_resp(p).cid(), 5);
    const std::vector<std::uint8_t> one(4096, 0x11), two(4096, 0x22);
    io.h2c(1, ttag, 0, one);
    p = io.read();
    ASSERT_EQ(p.size(), wire::capsule_resp_hlen);
    EXPECT_EQ(pdu::decode_capsule_resp(p).cid(), 1);
    EXPECT_EQ(pdu::decode_capsule_resp(p).status(), wire::sc::success);
    auto r2t = io.read();
    ASSERT_EQ(r2t.size(), wire::data_hlen);
    ASSERT_EQ(r2t[0], std::uint8_t(wire::PduType::r2t));
    EXPECT_EQ(pdu::decode_data(r2t).cccid, 2);
    io.h2c(2, pdu::decode_data(r2t).ttag, 0, two);
    EXPECT_EQ(io.status(), wire::sc::success);
    wire::Sqe r = rw(wire::io::read, 1, 0, 16);
    r.set_cid(6);
    io.send(io.capsule(r, 8192));
    std::uint16_t status = 0;
    auto both = one;
    both.insert(both.end(), two.begin(), two.end());
    EXPECT_EQ(read_answer(io, 6, status), both);
    still_serving();
}

/// A write whose SGL is longer (or shorter) than its blocks is refused
/// with Data SGL Length Invalid before its R2T: no data is asked for.
TEST_F(NvmfTargetBadInput, AWriteWhoseSglDisagreesWithItsBlocksIsRefusedBeforeItsR2T) {
    testing::Raw admin(target->port()), io(target->port());
    connect_io_queue(admin, io);
    for (std::uint32_t len : {8192u, 1024u}) {  // 8 blocks of 512 bytes are 4096
        wire::Sqe w = rw(wire::io::write, 1, 0, 8);
        w.set_cid(1);
        io.send(io.capsule(w, len));
        auto p = io.read();
        ASSERT_EQ(p.size(), wire::capsule_resp_hlen) << len << " bytes: an R2T instead of a refusal";
        EXPECT_EQ(pdu::decode_capsule_resp(p).status(), wire::sc::sgl_data_length_invalid);
    }
    const auto ttag = write_r2t(io, 2);  // the queue goes on
    io.h2c(2, ttag, 0, std::vector<std::uint8_t>(4096, 0x33));
    EXPECT_EQ(io.status(), wire::sc::success);
}

TEST_F(NvmfTargetBadInput, ReadWhoseSglDisagreesWithItsBlocksIsRefused) {
    std::vector<std::byte> in(1024);  // one 512-byte block asked, 1024 bytes offered
    EXPECT_EQ(io(rw(wire::io::read, 1, 0, 1), {}, in), wire::sc::sgl_data_length_invalid);
    testing::Raw admin(target->port()), raw(target->port());
    connect_io_queue(admin, raw);
    raw.send(raw.capsule(rw(wire::io::read, 1, 0, 1), 32u << 20));
    EXPECT_EQ(raw.status(), wire::sc::sgl_data_length_invalid);
}

TEST_F(NvmfTargetBadInput, FusedCommandIsInvalidField) {
    testing::Raw admin(target->port()), raw(target->port());
    connect_io_queue(admin, raw);
    raw.send(raw.capsule(rw(wire::io::read, 1, 0, 1), 512, /*fuse=*/1));
    EXPECT_EQ(raw.status(), wire::sc::invalid_field);
    raw.send(raw.capsule(rw(wire::io::read, 1, 0, 1), 512));
    auto c2h = raw.read();
    EXPECT_EQ(c2h.size(), wire::data_hlen + 512) << "a plain read after it is served";
}

// The whole transfer in one H2CData without LAST_PDU, or LAST_PDU on a
// PDU before the end: a PDU sequence error; nothing is written.
TEST_F(NvmfTargetBadInput, H2CDataMustMarkItsLastPduExactly) {
    for (bool early : {false, true}) {
        testing::Raw admin(target->port()), raw(target->port());
        connect_io_queue(admin, raw);
        const auto ttag = write_r2t(raw, 1);
        std::vector<std::uint8_t> data(4096, 0xAB);
        if (early) raw.h2c(1, ttag, 0, std::span(data).first(2048), /*last=*/true);
        else raw.h2c(1, ttag, 0, data, /*last=*/false);
        auto p = raw.read();
        ASSERT_GE(p.size(), wire::term_hlen) << (early ? "early" : "missing");
        EXPECT_EQ(p[0], std::uint8_t(wire::PduType::c2h_term));
        EXPECT_EQ(pdu::decode_term(p).fes, wire::Fes::pdu_sequence_error);
        EXPECT_TRUE(raw.closed());
        EXPECT_EQ(testing::file_bytes(dir.path() / "disk", 0, 4096), std::vector<std::byte>(4096))
            << "a write without a proper LAST_PDU was applied";
    }
    still_serving();
}

TEST(NvmfTargetStart, BadOptionsAreRefused) {
    TempDir dir;
    TargetOptions none;
    EXPECT_EQ(Target::start(none).error(), errc::invalid_argument);
    auto o = testing::options(dir);
    o.subsystems[0].namespaces[1].nsid = 1;
    EXPECT_EQ(Target::start(o).error(), errc::invalid_argument);
    o = testing::options(dir);
    o.subsystems[0].namespaces[0].nsid = 0;
    EXPECT_EQ(Target::start(o).error(), errc::invalid_argument);
    o = testing::options(dir);
    o.max_io_size = 5000;
    EXPECT_EQ(Target::start(o).error(), errc::invalid_argument);
    o = testing::options(dir);
    o.subsystems[0].nqn = wire::discovery_nqn;
    EXPECT_EQ(Target::start(o).error(), errc::invalid_argument);
    o = testing::options(dir);
    o.subsystems[0].namespaces[0].create = false;
    o.subsystems[0].namespaces[0].path = dir.path() / "missing";
    auto r = Target::start(o);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().detail().find("nsid 1"), std::string::npos) << r.error().detail();
}

} // namespace
} // namespace rpm::nvmf
