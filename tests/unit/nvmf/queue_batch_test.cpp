// QueueCommands' batches (QueueCommands::on_commands): reads and in-capsule
// writes that arrived together go to the engine in one execute_many, each
// at its own 4 KiB-aligned part of the staging buffer, answered in order;
// anything else runs alone, in its turn. A recording engine stands for the
// offload engine.
#include "controller_fixture.hpp"

#include "fabric_queue_stub.hpp"
#include "nvmf/serve/queue_commands.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace rpm::nvmf::target::test {
namespace {

/// An offload queue that records what it is asked: each execute_many's
/// commands and offsets; reads get their offset's low byte as data.
class RecordingQueue final : public OffloadQueue {
public:
    explicit RecordingQueue(std::vector<std::vector<StagedCommand>>& batches, std::vector<std::uint16_t>& singles,
                            std::vector<std::byte>& staging)
        : batches_(batches), singles_(singles), staging_(staging) {}
    std::span<std::byte> staging() override { return staging_; }
    std::uint16_t execute(std::span<const std::uint8_t, 64> sqe) override {
        singles_.push_back(wire::get16(&sqe[2]));
        return wire::sc::success;
    }
    bool runs_many() const noexcept override { return true; }
    void execute_many(std::span<StagedCommand> cmds) override {
        for (auto& c : cmds) {
            c.status = wire::get16(&c.sqe[2]) == 0xBAD ? wire::sc::lba_out_of_range : wire::sc::success;
            if (c.sqe[0] == wire::io::read) std::memset(staging_.data() + c.offset, int(c.offset >> 12), 512);
        }
        batches_.emplace_back(cmds.begin(), cmds.end());
    }

private:
    std::vector<std::vector<StagedCommand>>& batches_;
    std::vector<std::uint16_t>& singles_;
    std::vector<std::byte>& staging_;
};

class BatchEngine final : public FakeEngine {
public:
    Result<std::unique_ptr<OffloadQueue>> enable(SubsystemHandle) override {
        return std::unique_ptr<OffloadQueue>(std::make_unique<RecordingQueue>(batches, singles, staging));
    }
    std::vector<std::vector<StagedCommand>> batches;
    std::vector<std::uint16_t> singles;
    std::vector<std::byte> staging = std::vector<std::byte>(128 * 1024);
};

struct Done {
    wire::Cqe cqe;
    std::vector<std::uint8_t> c2h;
};

class Recorder final : public MovingOnly {
public:
    bool complete(const wire::Sqe&, const wire::Cqe& cqe, std::span<const std::uint8_t> c2h) override {
        done.push_back({cqe, {c2h.begin(), c2h.end()}});
        return true;
    }
    Pulled pull(const wire::Sqe&, std::span<std::uint8_t> into, bool& intact) override {
        ++pulls;
        std::fill(into.begin(), into.end(), 0x77);
        intact = true;
        return Pulled::done;
    }
    std::vector<Done> done;
    int pulls = 0;
};

wire::Sqe rw(std::uint8_t op, std::uint16_t cid, std::uint64_t lba, std::uint32_t blocks) {
    wire::Sqe s;
    s.set_opcode(op);
    s.set_flags(wire::psdt_sgl);
    s.set_cid(cid);
    s.set_nsid(1);
    s.set_cdw(10, std::uint32_t(lba));
    s.set_cdw(12, blocks - 1);
    return s;
}

class QueueBatchTest : public ControllerTest {
protected:
    QueueBatchTest() {
        SubsystemSpec open;
        open.nqn = nvm_nqn;
        open.namespaces.resize(1);
        open.namespaces[0].nsid = 1;
        engine_->views = {ns_view(1, 1000, 512)};
        registry = std::make_unique<Registry>(std::vector{Subsystem::make_discovery(entries), Subsystem::make_nvm(open, engine_, 1)},
                                              Limits{});
        admin_core = std::make_unique<QueueCommands>(QueueEnv{registry.get(), &stats}, admin_fabric);
        io_core = std::make_unique<QueueCommands>(QueueEnv{registry.get(), &stats}, io_fabric);
    }
    ~QueueBatchTest() override {
        io_core->release();
        admin_core->release();
    }

    /// An admin queue enabled, and I/O queue 1 of its controller connected.
    void connect() {
        const auto data = connect_data(nvm_nqn, host_a);
        auto c = connect_sqe(0, 31);
        c.set_flags(wire::psdt_sgl);
        c.set_sgl(wire::sgl_incapsule, 0, std::uint32_t(data.size()));
        ASSERT_TRUE(admin_core->on_command(c, in_capsule(data)));
        auto en = prop_set(wire::prop::cc, cc_enable);
        en.set_flags(wire::psdt_sgl);
        ASSERT_TRUE(admin_core->on_command(en, CommandData{}));
        const auto io_data = connect_data(nvm_nqn, host_a, admin_core->controller()->cntlid());
        auto ic = connect_sqe(1, 127);
        ic.set_flags(wire::psdt_sgl);
        ic.set_sgl(wire::sgl_incapsule, 0, std::uint32_t(io_data.size()));
        ASSERT_TRUE(io_core->on_command(ic, in_capsule(io_data)));
        ASSERT_EQ(io_fabric.done.back().cqe.status(), wire::sc::success);
        io_fabric.done.clear();
    }

    static CommandData in_capsule(std::span<const std::uint8_t> bytes) {
        CommandData d;
        d.where = CommandData::Where::in_capsule;
        d.length = std::uint32_t(bytes.size());
        d.bytes = bytes;
        return d;
    }
    static CommandData in_host(std::uint32_t length) {
        CommandData d;
        d.where = CommandData::Where::host;
        d.length = length;
        return d;
    }

    std::shared_ptr<BatchEngine> engine_ = std::make_shared<BatchEngine>();
    SharedStats stats;
    Recorder admin_fabric, io_fabric;
    std::unique_ptr<QueueCommands> admin_core, io_core;  // on the registry made above
};

TEST_F(QueueBatchTest, ReadsAndInCapsuleWritesGoTogetherEachAtItsOwnPlace) {
    connect();
    std::vector<std::uint8_t> w1(1024, 0xA1), w2(512, 0xA2);
    const std::vector<Capsule> capsules = {
        {rw(wire::io::read, 1, 0, 1), in_host(512)},
        {rw(wire::io::write, 2, 8, 2), in_capsule(w1)},
        {rw(wire::io::read, 3, 16, 8), in_host(4096)},
        {rw(wire::io::write, 4, 32, 1), in_capsule(w2)},
    };
    ASSERT_TRUE(io_core->on_commands(capsules));
    ASSERT_EQ(engine_->batches.size(), 1u);
    const auto& b = engine_->batches[0];
    ASSERT_EQ(b.size(), 4u);
    // 4 KiB-aligned places, in order.
    EXPECT_EQ(b[0].offset, 0u);
    EXPECT_EQ(b[1].offset, 4096u);
    EXPECT_EQ(b[2].offset, 8192u);
    EXPECT_EQ(b[3].offset, 12288u);
    // The writes' data was put where the engine reads it.
    EXPECT_EQ(engine_->staging[4096], std::byte{0xA1});
    EXPECT_EQ(engine_->staging[4096 + 1023], std::byte{0xA1});
    EXPECT_EQ(engine_->staging[12288], std::byte{0xA2});
    EXPECT_TRUE(engine_->singles.empty());
    // Answers in order, reads with their own data.
    ASSERT_EQ(io_fabric.done.size(), 4u);
    for (std::size_t i = 0; i < 4; ++i) {
        EXPECT_EQ(io_fabric.done[i].cqe.cid(), i + 1);
        EXPECT_EQ(io_fabric.done[i].cqe.status(), wire::sc::success);
    }
    ASSERT_EQ(io_fabric.done[0].c2h.size(), 512u);
    EXPECT_EQ(io_fabric.done[0].c2h[0], 0);  // offset 0's data
    ASSERT_EQ(io_fabric.done[2].c2h.size(), 4096u);
    EXPECT_EQ(io_fabric.done[2].c2h[0], 2);  // offset 8192's
    EXPECT_TRUE(io_fabric.done[1].c2h.empty());
    EXPECT_EQ(stats.offloaded.load(), 4u);
    EXPECT_EQ(io_fabric.pulls, 0);
}

TEST_F(QueueBatchTest, OthersRunAloneInTheirTurnAndFailuresKeepTheirStatus) {
    connect();
    std::vector<std::uint8_t> w(512, 1);
    auto flush = rw(wire::io::flush, 3, 0, 1);
    const std::vector<Capsule> capsules = {
        {rw(wire::io::read, 1, 0, 1), in_host(512)},
        {rw(wire::io::read, 0xBAD, 0, 1), in_host(512)},
        {flush, CommandData{}},                            // alone
        {rw(wire::io::write, 4, 0, 1), in_host(512)},      // data to pull: alone
        {rw(wire::io::read, 5, 0, 1), in_host(1024)},      // SGL disagrees with the blocks: alone, refused
        {rw(wire::io::read, 6, 0, 1), in_host(512)},       // a batch of one: alone
    };
    ASSERT_TRUE(io_core->on_commands(capsules));
    ASSERT_EQ(engine_->batches.size(), 1u);
    EXPECT_EQ(engine_->batches[0].size(), 2u);
    EXPECT_EQ(engine_->singles, (std::vector<std::uint16_t>{3, 4, 6}));
    EXPECT_EQ(io_fabric.pulls, 1);
    ASSERT_EQ(io_fabric.done.size(), 6u);
    const std::uint16_t cids[] = {1, 0xBAD, 3, 4, 5, 6};
    for (std::size_t i = 0; i < 6; ++i) EXPECT_EQ(io_fabric.done[i].cqe.cid(), cids[i]) << i;
    EXPECT_EQ(io_fabric.done[1].cqe.status(), wire::sc::lba_out_of_range);
    EXPECT_TRUE(io_fabric.done[1].c2h.empty());
    EXPECT_EQ(io_fabric.done[4].cqe.status(), wire::sc::sgl_data_length_invalid);
}

TEST_F(QueueBatchTest, ABatchNeverOutgrowsTheStagingBuffer) {
    connect();
    // 40 reads of 4 KiB: 32 fit one batch's 128 KiB, the other 8 the next.
    std::vector<Capsule> capsules;
    for (std::uint16_t i = 0; i < 40; ++i) capsules.push_back({rw(wire::io::read, i, i * 8u, 8), in_host(4096)});
    ASSERT_TRUE(io_core->on_commands(capsules));
    ASSERT_EQ(engine_->batches.size(), 2u);
    EXPECT_EQ(engine_->batches[0].size(), 32u);
    EXPECT_EQ(engine_->batches[1].size(), 8u);
    EXPECT_EQ(engine_->batches[0].back().offset, 31u * 4096);
    EXPECT_EQ(io_fabric.done.size(), 40u);
}

} // namespace
} // namespace rpm::nvmf::target::test
