// A target queue's commands (QueueCommands) behind the fabric table: a
// fake FabricQueue records what QueueCommands asks of it (completions,
// pulls), as a fabric would carry them, and QueueCommands runs the
// commands on a registry of real controllers (controller_fixture.hpp).
#include "controller_fixture.hpp"

#include "fabric_queue_stub.hpp"
#include "nvmf/serve/queue_commands.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace rpm::nvmf::target::test {
namespace {

struct Completion {
    wire::Cqe cqe;
    std::vector<std::uint8_t> c2h;
};

class FakeTransport final : public MovingOnly {
public:
    bool complete(const wire::Sqe&, const wire::Cqe& cqe, std::span<const std::uint8_t> c2h) override {
        done.push_back({cqe, {c2h.begin(), c2h.end()}});
        return complete_ok;
    }
    Pulled pull(const wire::Sqe& sqe, std::span<std::uint8_t> into, bool& intact) override {
        pulls.push_back({sqe.cid(), into.size()});
        if (!pull_ok) return Pulled::failed;
        if (pull_later) return Pulled::later;
        std::fill(into.begin(), into.end(), 0);
        std::memcpy(into.data(), host_data.data(), std::min(into.size(), host_data.size()));
        intact = pull_intact;
        return Pulled::done;
    }

    std::vector<Completion> done;
    std::vector<std::pair<std::uint16_t, std::size_t>> pulls;  // cid, bytes
    std::vector<std::uint8_t> host_data;
    bool complete_ok = true, pull_ok = true, pull_intact = true, pull_later = false;
};

/// An SQE as a host sends it: SGL data transfer, with an SGL of `length`.
wire::Sqe with_sgl(wire::Sqe s, std::uint8_t type, std::uint32_t length) {
    s.set_flags(wire::psdt_sgl);
    s.set_sgl(type, 0, length);
    return s;
}

CommandData in_capsule(std::span<const std::uint8_t> bytes, std::uint32_t length) {
    CommandData d;
    d.where = CommandData::Where::in_capsule;
    d.length = length;
    d.bytes = bytes;
    return d;
}

CommandData in_host(std::uint32_t length) {
    CommandData d;
    d.where = CommandData::Where::host;
    d.length = length;
    return d;
}

class QueueCommandsTest : public ControllerTest {
protected:
    QueueCommandsTest() : commands(QueueEnv{registry.get(), &stats}, fabric) {}

    /// Connect the admin queue with its data in the capsule (sqsize 31).
    void connect_admin_queue() {
        const auto data = connect_data(nvm_nqn, host_a);
        const auto sqe = with_sgl(connect_sqe(0, 31), wire::sgl_incapsule, std::uint32_t(data.size()));
        ASSERT_TRUE(commands.on_command(sqe, in_capsule(data, std::uint32_t(data.size()))));
        ASSERT_EQ(fabric.done.size(), 1u);
        ASSERT_EQ(fabric.done.back().cqe.status(), wire::sc::success);
    }

    SharedStats stats;
    FakeTransport fabric;
    QueueCommands commands;
};

TEST_F(QueueCommandsTest, ACommandBeforeConnectIsACommandSequenceError) {
    const auto sqe = with_sgl(identify_sqe(1), wire::sgl_transport, 4096);
    ASSERT_TRUE(commands.on_command(sqe, in_host(4096)));
    ASSERT_EQ(fabric.done.size(), 1u);
    EXPECT_EQ(fabric.done[0].cqe.status(), wire::sc::command_sequence_error);
    EXPECT_EQ(fabric.done[0].cqe.cid(), sqe.cid());
    EXPECT_TRUE(fabric.done[0].c2h.empty());
    EXPECT_TRUE(fabric.pulls.empty());
    EXPECT_FALSE(commands.set_up());
    EXPECT_EQ(stats.errors.load(), 1u);
}

TEST_F(QueueCommandsTest, ConnectBindsTheQueueAndControllerDataGoesOutWithTheCompletion) {
    connect_admin_queue();
    EXPECT_TRUE(commands.set_up());
    ASSERT_NE(commands.controller(), nullptr);
    EXPECT_EQ(commands.qid(), 0);
    EXPECT_EQ(commands.depth(), 32u);
    ASSERT_TRUE(commands.on_command(with_sgl(prop_set(wire::prop::cc, cc_enable), wire::sgl_incapsule, 0), CommandData{}));
    ASSERT_EQ(fabric.done.back().cqe.status(), wire::sc::success);
    // Identify Controller: controller-to-host data, never pulled; the
    // transport carries it before the completion.
    auto sqe = with_sgl(identify_sqe(1), wire::sgl_transport, 4096);
    sqe.set_cid(7);
    ASSERT_TRUE(commands.on_command(sqe, in_host(4096)));
    ASSERT_EQ(fabric.done.size(), 3u);
    EXPECT_EQ(fabric.done[2].cqe.status(), wire::sc::success);
    EXPECT_EQ(fabric.done[2].cqe.cid(), 7);
    ASSERT_EQ(fabric.done[2].c2h.size(), 4096u);
    EXPECT_EQ(text(fabric.done[2].c2h, 768, std::strlen(nvm_nqn)), nvm_nqn);  // SUBNQN
    EXPECT_TRUE(fabric.pulls.empty());
    EXPECT_EQ(stats.controllers.load(), 1u);
}

// The data goes out bounded by the length the transport decoded, not by
// SQE bytes 32..35: in NVMe/RDMA's keyed SGL only three of them are the
// length (byte 35 is the key's low byte).
TEST_F(QueueCommandsTest, DataForTheHostIsBoundedByTheDecodedSglLength) {
    connect_admin_queue();
    ASSERT_TRUE(commands.on_command(with_sgl(prop_set(wire::prop::cc, cc_enable), wire::sgl_incapsule, 0), CommandData{}));
    auto sqe = identify_sqe(1);
    sqe.set_flags(wire::psdt_sgl);
    sqe.set_sgl(0x4F, 0x1000, 0xEF000400);  // as a keyed SGL of 1024 bytes, key 0x...EF reads
    ASSERT_TRUE(commands.on_command(sqe, in_host(1024)));
    ASSERT_EQ(fabric.done.back().cqe.status(), wire::sc::success);
    EXPECT_EQ(fabric.done.back().c2h.size(), 1024u);
}

TEST_F(QueueCommandsTest, HostToControllerDataIsPulledThroughTheTransport) {
    fabric.host_data = connect_data(nvm_nqn, host_a);
    const auto n = std::uint32_t(fabric.host_data.size());
    auto sqe = with_sgl(connect_sqe(0, 31), wire::sgl_transport, n);
    sqe.set_cid(3);
    ASSERT_TRUE(commands.on_command(sqe, in_host(n)));
    ASSERT_EQ(fabric.pulls.size(), 1u);
    EXPECT_EQ(fabric.pulls[0], (std::pair<std::uint16_t, std::size_t>{3, n}));
    ASSERT_EQ(fabric.done.size(), 1u);
    EXPECT_EQ(fabric.done[0].cqe.status(), wire::sc::success);
    EXPECT_TRUE(commands.set_up());
}

// NVMe/TCP's R2T whose data comes after other capsules: the queue goes
// on, and the command runs once the fabric hands its data over.
TEST_F(QueueCommandsTest, DataThatComesLaterRunsItsCommandThenAndTheQueueGoesOnMeanwhile) {
    fabric.pull_later = true;
    const auto data = connect_data(nvm_nqn, host_a);
    const auto n = std::uint32_t(data.size());
    auto connect = with_sgl(connect_sqe(0, 31), wire::sgl_transport, n);
    connect.set_cid(3);
    ASSERT_TRUE(commands.on_command(connect, in_host(n)));
    EXPECT_EQ(fabric.pulls.size(), 1u);
    EXPECT_TRUE(fabric.done.empty()) << "answered before its data came";
    auto identify = with_sgl(identify_sqe(1), wire::sgl_transport, 4096);
    identify.set_cid(4);
    ASSERT_TRUE(commands.on_command(identify, in_host(4096)));
    ASSERT_EQ(fabric.done.size(), 1u);
    EXPECT_EQ(fabric.done[0].cqe.cid(), 4);
    EXPECT_EQ(fabric.done[0].cqe.status(), wire::sc::command_sequence_error);  // the Connect has not run yet
    ASSERT_TRUE(commands.on_pulled(connect, data, true));
    ASSERT_EQ(fabric.done.size(), 2u);
    EXPECT_EQ(fabric.done[1].cqe.cid(), 3);
    EXPECT_EQ(fabric.done[1].cqe.status(), wire::sc::success);
    EXPECT_TRUE(commands.set_up());
}

TEST_F(QueueCommandsTest, APullThatFailsEndsTheQueueUnanswered) {
    fabric.pull_ok = false;
    const auto sqe = with_sgl(connect_sqe(0, 31), wire::sgl_transport, wire::connect_data_len);
    EXPECT_FALSE(commands.on_command(sqe, in_host(wire::connect_data_len)));
    EXPECT_EQ(fabric.pulls.size(), 1u);
    EXPECT_TRUE(fabric.done.empty());
    EXPECT_FALSE(commands.set_up());
}

TEST_F(QueueCommandsTest, DataThatFailedTheTransportsCheckIsATransientTransportError) {
    fabric.host_data = connect_data(nvm_nqn, host_a);
    fabric.pull_intact = false;
    const auto n = std::uint32_t(fabric.host_data.size());
    ASSERT_TRUE(commands.on_command(with_sgl(connect_sqe(0, 31), wire::sgl_transport, n), in_host(n)));
    ASSERT_EQ(fabric.done.size(), 1u);
    EXPECT_EQ(fabric.done[0].cqe.status(), wire::sc::transient_transport_error);
    EXPECT_FALSE(commands.set_up());  // the Connect never ran

    auto d = in_capsule(fabric.host_data, n);
    d.intact = false;
    ASSERT_TRUE(commands.on_command(with_sgl(connect_sqe(0, 31), wire::sgl_incapsule, n), d));
    EXPECT_EQ(fabric.done.back().cqe.status(), wire::sc::transient_transport_error);
    EXPECT_FALSE(commands.set_up());
}

TEST_F(QueueCommandsTest, TheTransportsRefusalOfAnSglIsTheCompletionsStatus) {
    auto d = in_host(4096);
    d.status = wire::sc::sgl_descriptor_type_invalid;
    ASSERT_TRUE(commands.on_command(with_sgl(identify_sqe(1), 0x20, 4096), d));
    ASSERT_EQ(fabric.done.size(), 1u);
    EXPECT_EQ(fabric.done[0].cqe.status(), wire::sc::sgl_descriptor_type_invalid);
    EXPECT_TRUE(fabric.pulls.empty());
}

TEST_F(QueueCommandsTest, InCapsuleDataMustMatchItsSglAndFitTheQueue) {
    const auto data = connect_data(nvm_nqn, host_a);
    const auto n = std::uint32_t(data.size());
    // An SGL that claims more than the capsule carried.
    ASSERT_TRUE(commands.on_command(with_sgl(connect_sqe(0, 31), wire::sgl_incapsule, n + 4), in_capsule(data, n + 4)));
    EXPECT_EQ(fabric.done.back().cqe.status(), wire::sc::sgl_data_length_invalid);
    // More than an admin queue takes in a capsule (8 KiB).
    const std::vector<std::uint8_t> big(8192 + 16);
    ASSERT_TRUE(commands.on_command(with_sgl(connect_sqe(0, 31), wire::sgl_incapsule, std::uint32_t(big.size())),
                                in_capsule(big, std::uint32_t(big.size()))));
    EXPECT_EQ(fabric.done.back().cqe.status(), wire::sc::sgl_data_length_invalid);
    EXPECT_FALSE(commands.set_up());
}

TEST_F(QueueCommandsTest, AnOversizePullIsRefusedBeforeTheTransportMovesAByte) {
    const std::uint32_t n = 8192 + 4096;  // over what an admin command may bring
    ASSERT_TRUE(commands.on_command(with_sgl(connect_sqe(0, 31), wire::sgl_transport, n), in_host(n)));
    EXPECT_EQ(fabric.done.back().cqe.status(), wire::sc::invalid_field);
    EXPECT_TRUE(fabric.pulls.empty());
}

TEST_F(QueueCommandsTest, PsdtAndFusedCommandsAreRefused) {
    auto prp = identify_sqe(1);  // PSDT 00: PRPs, which no fabric carries
    ASSERT_TRUE(commands.on_command(prp, in_host(4096)));
    EXPECT_EQ(fabric.done.back().cqe.status(), wire::sc::invalid_field);
    auto fused = with_sgl(identify_sqe(1), wire::sgl_transport, 4096);
    fused.set_flags(wire::psdt_sgl | 0x01);  // FUSE: first command of a pair
    ASSERT_TRUE(commands.on_command(fused, in_host(4096)));
    EXPECT_EQ(fabric.done.back().cqe.status(), wire::sc::invalid_field);
    EXPECT_TRUE(fabric.pulls.empty());
}

TEST_F(QueueCommandsTest, EachCompletionAdvancesTheSqHeadAroundTheQueue) {
    connect_admin_queue();  // sqsize 31: the head wraps at 32
    ASSERT_EQ(fabric.done[0].cqe.sq_head(), 1);
    for (int i = 0; i < 40; ++i)
        ASSERT_TRUE(commands.on_command(with_sgl(prop_get(wire::prop::cap, true), wire::sgl_incapsule, 0),
                                    CommandData{}));
    ASSERT_EQ(fabric.done.size(), 41u);
    for (std::size_t i = 0; i < fabric.done.size(); ++i) {
        EXPECT_EQ(fabric.done[i].cqe.sq_head(), (i + 1) % 32) << i;
        EXPECT_EQ(fabric.done[i].cqe.sq_id(), 0);
        EXPECT_EQ(fabric.done[i].cqe.status(), wire::sc::success) << i;
    }
}

TEST_F(QueueCommandsTest, ACompletionTheTransportCannotSendEndsTheQueue) {
    fabric.complete_ok = false;
    EXPECT_FALSE(commands.on_command(with_sgl(identify_sqe(1), wire::sgl_transport, 4096), in_host(4096)));
    EXPECT_EQ(fabric.done.size(), 1u);
}

TEST_F(QueueCommandsTest, DatasetManagementBringsAllItsRangesToTheEngine) {
    connect_admin_queue();
    ASSERT_TRUE(commands.on_command(with_sgl(prop_set(wire::prop::cc, cc_enable), wire::sgl_incapsule, 0), CommandData{}));
    const auto cntlid = commands.controller()->cntlid();
    // An I/O queue of the same controller, with its own commands.
    FakeTransport io_fabric;
    QueueCommands io(QueueEnv{registry.get(), &stats}, io_fabric);
    const auto data = connect_data(nvm_nqn, host_a, cntlid);
    ASSERT_TRUE(io.on_command(with_sgl(connect_sqe(1, 127), wire::sgl_incapsule, std::uint32_t(data.size())),
                              in_capsule(data, std::uint32_t(data.size()))));
    ASSERT_EQ(io_fabric.done.back().cqe.status(), wire::sc::success);
    ASSERT_EQ(io.qid(), 1);

    auto dsm = admin_sqe(wire::io::dataset_management, 11);
    dsm.set_nsid(1);
    dsm.set_cdw(10, 1);       // NR 1: two ranges, 32 bytes
    dsm.set_cdw(11, 1u << 2);  // AD
    std::vector<std::uint8_t> ranges(32);
    for (std::size_t i = 0; i < ranges.size(); ++i) ranges[i] = std::uint8_t(i + 1);
    // One range's worth: the second would be read from whatever the buffer held.
    ASSERT_TRUE(io.on_command(with_sgl(dsm, wire::sgl_incapsule, 16), in_capsule(std::span(ranges).first(16), 16)));
    EXPECT_EQ(io_fabric.done.back().cqe.status(), wire::sc::sgl_data_length_invalid);
    EXPECT_TRUE(engine->seen.empty());
    // Both ranges, in the capsule: the engine gets them at the start of its buffer.
    ASSERT_TRUE(io.on_command(with_sgl(dsm, wire::sgl_incapsule, 32), in_capsule(ranges, 32)));
    EXPECT_EQ(io_fabric.done.back().cqe.status(), wire::sc::invalid_opcode);  // the fake engine's answer
    ASSERT_GE(engine->seen.size(), 32u);
    EXPECT_EQ(std::memcmp(engine->seen.data(), ranges.data(), 32), 0);
    // Short of its ranges in host memory: refused before the data is asked for.
    ASSERT_TRUE(io.on_command(with_sgl(dsm, wire::sgl_transport, 16), in_host(16)));
    EXPECT_EQ(io_fabric.done.back().cqe.status(), wire::sc::sgl_data_length_invalid);
    EXPECT_TRUE(io_fabric.pulls.empty()) << "pulled the data of a command it refuses";
    // Pulled from the host instead: the same.
    engine->seen.clear();
    io_fabric.host_data = ranges;
    ASSERT_TRUE(io.on_command(with_sgl(dsm, wire::sgl_transport, 32), in_host(32)));
    EXPECT_EQ(io_fabric.pulls.size(), 1u);
    ASSERT_GE(engine->seen.size(), 32u);
    EXPECT_EQ(std::memcmp(engine->seen.data(), ranges.data(), 32), 0);
    io.release();
}

TEST_F(QueueCommandsTest, ReleasingTheAdminQueueEndsTheController) {
    connect_admin_queue();
    ASSERT_TRUE(commands.on_command(with_sgl(prop_set(wire::prop::cc, cc_enable), wire::sgl_incapsule, 0), CommandData{}));
    ASSERT_EQ(fabric.done.back().cqe.status(), wire::sc::success);
    const auto c = commands.controller();
    ASSERT_NE(c, nullptr);
    // While the admin queue lives, its controller takes I/O queues.
    EXPECT_EQ(connect_io(c->cntlid(), 1).second.status, wire::sc::success);
    commands.release();
    // Then the association is over: the registry no longer knows it.
    EXPECT_EQ(connect_io(c->cntlid(), 2).first, nullptr);
}

} // namespace
} // namespace rpm::nvmf::target::test
