// Recovery: a restarted primary resumes its LSNs and learns its replicas'
// positions; after the primary is lost, a new one opened on a replica's
// region finds every record that was acknowledged, even when its own copy
// lagged; open refuses when too few of the group are there to be sure.
#include "replication/fixture.hpp"

namespace rpm::test {
namespace {

constexpr std::uint64_t kLogOffset = 0;
constexpr std::uint64_t kLogLength = 2u << 20;

ReplicatorOptions with_log_rank(ReplicatorOptions o) {
    o.recovery_rank = [](std::span<const std::byte> data) {
        return ReplicatedLog::rank(data, kLogOffset, kLogLength);  // data may be cut at the high-water mark
    };
    return o;
}

std::string record_text(int i) { return "record-" + std::to_string(i) + std::string(static_cast<std::size_t>(i % 37), '.'); }

std::vector<std::string> log_of(std::span<const std::byte> data) {
    std::vector<std::string> out;
    for (const auto& rec : ReplicatedLog::scan(data.subspan(kLogOffset, kLogLength)))
        out.emplace_back(reinterpret_cast<const char*>(rec.payload.data()), rec.payload.size());
    return out;
}

std::vector<std::string> log_in_file(const ReplicaNode& n) {
    const auto raw = n.data(kLogOffset, kLogLength);
    return log_of(std::as_bytes(std::span(raw.data(), raw.size())));
}

TEST_F(ReplicatorTest, RestartedPrimaryResumesAndKnowsReplicaPositions) {
    Lsn last = 0;
    std::uint64_t generation = 0;
    {
        auto r = Replicator::open(options(Durability::majority()));
        ASSERT_TRUE(r) << r.error().message();
        generation = r->generation();
        ASSERT_TRUE(r->persist(128, bytes("before the restart")));
        last = r->last_lsn();
        // Let a heartbeat record each replica's position in its header.
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    auto o = options(Durability::majority());
    o.create = false;
    auto r = Replicator::open(o);
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r->generation(), generation + 1);  // each open starts the next one
    EXPECT_GE(r->last_lsn(), last);
    EXPECT_EQ(local_data(*r, 128, 18), "before the restart");
    for (const auto& s : r->replicas()) {
        EXPECT_EQ(s.state, ReplicaState::live) << s.uri;
        EXPECT_EQ(s.position_at_open, last) << s.uri;
    }
    auto next = r->persist(0, bytes("after"));
    ASSERT_TRUE(next);
    EXPECT_GT(*next, last);
}

TEST_F(ReplicatorTest, NewPrimaryOnALaggingReplicaFindsEveryAcknowledgedRecord) {
    std::vector<std::string> acked;
    {
        auto r = Replicator::open(with_log_rank(options(Durability::majority())));
        ASSERT_TRUE(r) << r.error().message();
        auto log = ReplicatedLog::open(*r, kLogOffset, kLogLength);
        ASSERT_TRUE(log) << log.error().message();
        for (int i = 0; i < 60; ++i) {
            if (i == 30) nodes_[0]->stop();  // node0 misses the second half
            auto a = log->append_durable(bytes(record_text(i)));
            ASSERT_TRUE(a) << i << ": " << a.error().message();
            acked.push_back(record_text(i));
        }
    }
    // The primary's machine is lost. The new primary runs on node0's disk,
    // which lags; node1 and node2 serve, node3 replaces the lost machine.
    std::filesystem::remove(dir_ / "local.pool");
    // A majority did not need node0: it may even miss the last record
    // before it stopped, but it surely misses the second half.
    EXPECT_LE(log_in_file(*nodes_[0]).size(), 30u);
    nodes_[3]->start();
    auto o = with_log_rank(options(Durability::majority(), {nodes_[1]->uri(), nodes_[2]->uri(), nodes_[3]->uri()}));
    o.local_path = nodes_[0]->path();
    o.create = false;
    auto r = Replicator::open(o);
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(log_of(r->data()), acked);
    auto log = ReplicatedLog::open(*r, kLogOffset, kLogLength);
    ASSERT_TRUE(log);
    EXPECT_EQ(log->records(), acked.size());
    ASSERT_TRUE(log->append_durable(bytes("under the new primary")));
    acked.push_back("under the new primary");
    ASSERT_TRUE(r->wait(Frontier::all, r->last_lsn(), std::chrono::seconds(10)));
    for (int n = 1; n < 4; ++n) EXPECT_EQ(log_in_file(*nodes_[n]), acked) << "node" << n;
}

TEST_F(ReplicatorTest, OpenRefusesWithoutAReadQuorumOfTheGroup) {
    {
        auto r = Replicator::open(options(Durability::k_of_n(1)));
        ASSERT_TRUE(r);
        ASSERT_TRUE(r->persist(0, bytes("on one member is enough")));
    }
    // With 1 of 4 enough to commit, any member could hold the only copy:
    // recovery must see all four.
    nodes_[1]->stop();
    auto o = options(Durability::k_of_n(1));
    o.create = false;
    auto r = Replicator::open(o);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::quorum_lost);
    EXPECT_NE(r.error().detail().find("unreachable"), std::string::npos) << r.error().message();
}

TEST_F(ReplicatorTest, GroupGrowsFromOneReplicaToThree) {
    {
        auto r = Replicator::open(options(Durability::majority(false), {nodes_[0]->uri()}));
        ASSERT_TRUE(r) << r.error().message();
        ASSERT_TRUE(r->persist(0, bytes("from the small group")));
    }
    // Two blank replicas join: new members, known to hold nothing.
    auto o = options(Durability::majority(false));
    o.create = false;
    auto r = Replicator::open(o);
    ASSERT_TRUE(r) << r.error().message();
    ASSERT_TRUE(r->wait(Frontier::all, r->last_lsn(), std::chrono::seconds(10)));
    for (int n = 0; n < 3; ++n) EXPECT_EQ(nodes_[n]->data(0, 20), "from the small group") << n;
}

TEST_F(ReplicatorTest, ReplicaOfAnotherGroupIsRefusedUnlessAdopted) {
    {
        auto r = Replicator::open(options(Durability::majority(), {nodes_[0]->uri()}));
        ASSERT_TRUE(r);
        ASSERT_TRUE(r->persist(0, bytes("group one")));
    }
    // Another primary with its own group on node3...
    nodes_[3]->start();
    auto o = options(Durability::majority(), {nodes_[3]->uri()});
    o.local_path = dir_ / "other.pool";
    {
        auto other = Replicator::open(o);
        ASSERT_TRUE(other) << other.error().message();
    }
    // ...must not take node0, which holds group one's data, by mistake.
    o.replicas.push_back(spec_for(nodes_[0]->uri()));
    auto r = Replicator::open(o);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::bad_config);
    o.adopt_foreign = true;
    auto adopted = Replicator::open(o);
    ASSERT_TRUE(adopted) << adopted.error().message();
}

} // namespace
} // namespace rpm::test
