// Bad input to rpm's NVMe/RDMA target over real verbs (Soft-RoCE in the
// lab VM; suite.sh runs it, never on a machine without an RDMA device).
// Raw queues (host::RdmaHostQueue::submit_raw) send what a broken or
// hostile host would: each case gets the status the specification names,
// or its queue is torn down, and a well-behaved host on another queue pair
// is served before and after; the namespace holds only what it wrote.
#include "nvmf/host/impl.hpp"
#include "nvmf/host/rdma_queue.hpp"
#include "nvmf/rdma_wire.hpp"

#include <rpm/nvmf.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <vector>

namespace rpm::nvmf {
namespace {

constexpr char nqn[] = "nqn.2026-11.io.rpm:rdma-bad-input";
constexpr std::uint32_t block = 512;
constexpr std::uint64_t blocks = 2048;  // a 1 MiB namespace

std::string lab_addr() {
    const char* a = std::getenv("RPM_LAB_RDMA_ADDR");
    return a ? a : "";
}

class RdmaBadInput : public ::testing::Test {
protected:
    void SetUp() override {
        if (lab_addr().empty()) GTEST_SKIP() << "needs the lab VM (RPM_LAB_RDMA_ADDR)";
        path_ = std::filesystem::path("/dev/shm") / ("rpm-rdma-bad-" + std::to_string(::getpid()));
        pattern_.resize(blocks * block);
        std::mt19937 rng(7);
        for (auto& b : pattern_) b = std::uint8_t(rng());
        std::ofstream(path_, std::ios::binary).write(reinterpret_cast<const char*>(pattern_.data()), std::streamsize(pattern_.size()));
        TargetOptions o;
        o.transport = Transport::rdma;
        o.address = lab_addr();
        o.port = 0;
        SubsystemSpec sub;
        sub.nqn = nqn;
        NamespaceSpec ns;
        ns.path = path_;
        ns.block_size = block;
        sub.namespaces.push_back(ns);
        o.subsystems.push_back(sub);
        auto t = Target::start(o);
        ASSERT_TRUE(t) << t.error().message();
        target_ = std::move(*t);
        host_.transport = Transport::rdma;
        host_.address = lab_addr();
        host_.port = target_->port();
        host_.subnqn = nqn;
        host_.timeout = std::chrono::milliseconds(5000);
    }
    void TearDown() override {
        target_.reset();
        if (!path_.empty()) std::filesystem::remove(path_);
    }

    /// An I/O queue, connected, as raw as a test needs it.
    std::unique_ptr<host::Queue> io_queue(std::unique_ptr<host::Queue>& admin) {
        std::uint16_t cntlid = 0;
        auto a = host::open_admin(host_, cntlid);
        EXPECT_TRUE(a) << a.error().message();
        if (!a) return nullptr;
        admin = std::move(*a);
        auto q = host::Queue::open(host_, 1, 32);
        EXPECT_TRUE(q) << q.error().message();
        if (!q) return nullptr;
        auto c = host::connect_queue(**q, host_, 1, 31, cntlid);
        EXPECT_TRUE(c && c->status == 0);
        return std::move(*q);
    }

    /// A well-behaved host writes and reads back 4 KiB at `lba`.
    void good_host_round(std::uint64_t lba, std::uint8_t seed) {
        auto h = Host::connect(host_);
        ASSERT_TRUE(h) << h.error().message();
        std::vector<std::byte> data(4096), back(4096);
        for (std::size_t i = 0; i < data.size(); ++i) data[i] = std::byte(seed + i);
        ASSERT_TRUE(h->write(1, lba, data));
        ASSERT_TRUE(h->read(1, lba, back));
        EXPECT_EQ(data, back);
        std::memcpy(pattern_.data() + lba * block, data.data(), data.size());
    }

    /// The namespace's file holds the pattern and the good hosts' writes only.
    void expect_namespace_untouched() {
        std::ifstream f(path_, std::ios::binary);
        std::vector<std::uint8_t> now(pattern_.size());
        f.read(reinterpret_cast<char*>(now.data()), std::streamsize(now.size()));
        EXPECT_EQ(std::filesystem::file_size(path_), pattern_.size());
        EXPECT_TRUE(now == pattern_) << "bytes of the namespace changed that no good host wrote";
    }

    static std::vector<std::uint8_t> rw(std::uint8_t op, std::uint16_t cid, std::uint64_t lba, std::uint32_t nblocks,
                                        std::uint8_t sgl_type, std::uint64_t addr, std::uint32_t len, std::uint32_t key) {
        wire::Sqe s;
        s.set_opcode(op);
        s.set_flags(wire::psdt_sgl);
        s.set_cid(cid);
        s.set_nsid(1);
        s.set_cdw(10, std::uint32_t(lba));
        s.set_cdw(11, std::uint32_t(lba >> 32));
        s.set_cdw(12, nblocks - 1);
        wire::put64(&s.b[24], addr);
        if (sgl_type == rdma_wire::sgl_keyed || sgl_type == rdma_wire::sgl_keyed_invalidate) {
            s.b[32] = std::uint8_t(len);
            s.b[33] = std::uint8_t(len >> 8);
            s.b[34] = std::uint8_t(len >> 16);
            wire::put32(&s.b[35], key);
        } else {
            wire::put32(&s.b[32], len);
        }
        s.b[39] = sgl_type;
        return {s.b.begin(), s.b.end()};
    }

    static host::RdmaHostQueue& raw(host::Queue& q) { return dynamic_cast<host::RdmaHostQueue&>(q); }

    std::filesystem::path path_;
    std::vector<std::uint8_t> pattern_;
    std::optional<Target> target_;
    HostOptions host_;
};

TEST_F(RdmaBadInput, ACommandBeforeConnectIsACommandSequenceError) {
    auto q = host::Queue::open(host_, 0, 32);
    ASSERT_TRUE(q) << q.error().message();
    wire::Sqe s;
    s.set_opcode(wire::admin::identify);
    s.set_flags(wire::psdt_sgl);
    s.set_cid(3);
    s.set_cdw(10, 1);
    s.set_sgl(rdma_wire::sgl_keyed, 0, 0);
    auto c = raw(**q).submit_raw(s.b);
    ASSERT_TRUE(c) << c.error().message();
    EXPECT_EQ(c->status, wire::sc::command_sequence_error);
    good_host_round(0, 1);
}

TEST_F(RdmaBadInput, SglsTheBindingDoesNotCarryOrThatDisagreeGetTheirStatus) {
    std::unique_ptr<host::Queue> admin;
    auto q = io_queue(admin);
    ASSERT_TRUE(q);
    auto& r = raw(*q);
    struct Case {
        std::vector<std::uint8_t> capsule;
        std::uint16_t status;
        const char* what;
    };
    auto in_capsule = [](std::vector<std::uint8_t> c, std::size_t extra) {
        c.resize(c.size() + extra, 0xAB);
        return c;
    };
    const std::vector<Case> cases = {
        {rw(wire::io::read, 10, 0, 1, wire::sgl_transport, 0, 512, 0), wire::sc::sgl_descriptor_type_invalid, "NVMe/TCP's descriptor"},
        {rw(wire::io::read, 11, 0, 1, 0x00, 0x1000, 512, 0), wire::sc::sgl_descriptor_type_invalid, "a plain address data block"},
        {in_capsule(rw(wire::io::write, 12, 0, 1, wire::sgl_incapsule, 600, 512, 0), 512), wire::sc::sgl_offset_invalid, "an offset past the capsule"},
        {in_capsule(rw(wire::io::write, 13, 0, 1, wire::sgl_incapsule, 100, 512, 0), 512), wire::sc::sgl_data_length_invalid, "data past the capsule"},
        {rw(wire::io::read, 14, 0, 1, rdma_wire::sgl_keyed, 0x1000, 8192, 1), wire::sc::sgl_data_length_invalid, "an SGL longer than the blocks"},
        {rw(wire::io::read, 15, 0, 16, rdma_wire::sgl_keyed, 0x1000, 512, 1), wire::sc::sgl_data_length_invalid, "an SGL shorter than the blocks"},
        {rw(wire::io::read, 16, blocks, 1, rdma_wire::sgl_keyed, 0x1000, 512, 1), wire::sc::lba_out_of_range, "an LBA past the namespace"},
        {in_capsule(rw(wire::io::write, 17, blocks - 1, 2, wire::sgl_incapsule, 0, 1024, 0), 1024), wire::sc::lba_out_of_range,
         "a write running past the end"},
        {rw(wire::io::write, 18, 0, 512, rdma_wire::sgl_keyed, 0x1000, 512 * 512, 1), wire::sc::invalid_field, "a transfer over MDTS"},
    };
    for (const auto& k : cases) {
        auto c = r.submit_raw(k.capsule);
        ASSERT_TRUE(c) << k.what << ": " << c.error().message();
        EXPECT_EQ(c->status, k.status) << k.what;
    }
    EXPECT_FALSE(q->broken());
    good_host_round(8, 2);
    expect_namespace_untouched();
}

// The target's RDMA READ of a write's data fails on a key the host never
// gave: the queue is torn down (no status can say more), others go on.
TEST_F(RdmaBadInput, AnInvalidKeyTearsDownOnlyItsQueue) {
    std::unique_ptr<host::Queue> admin;
    auto q = io_queue(admin);
    ASSERT_TRUE(q);
    auto c = raw(*q).submit_raw(rw(wire::io::write, 20, 0, 8, rdma_wire::sgl_keyed, 0x10000, 4096, 0xDEADBEEF));
    EXPECT_FALSE(c) << "a write whose data could not be read was answered with status " << (c ? c->status : 0);
    good_host_round(16, 3);
    expect_namespace_untouched();
}

TEST_F(RdmaBadInput, ACapsuleShorterThanAnSqeTearsDownOnlyItsQueue) {
    std::unique_ptr<host::Queue> admin;
    auto q = io_queue(admin);
    ASSERT_TRUE(q);
    std::vector<std::uint8_t> shortc(40, 0x5A);
    EXPECT_FALSE(raw(*q).submit_raw(shortc));
    good_host_round(24, 4);
    expect_namespace_untouched();
}

// A queue pair that vanishes while the target serves it: closed by the
// host mid-command, the target notices and serves the next host.
TEST_F(RdmaBadInput, AQueuePairClosedMidCommandLeavesTheTargetServing) {
    std::unique_ptr<host::Queue> admin;
    auto q = io_queue(admin);
    ASSERT_TRUE(q);
    q->close();
    EXPECT_FALSE(raw(*q).submit_raw(rw(wire::io::read, 30, 0, 8, rdma_wire::sgl_keyed, 0x10000, 4096, 1)));
    q.reset();
    admin.reset();
    good_host_round(32, 5);
    expect_namespace_untouched();
}

} // namespace
} // namespace rpm::nvmf
