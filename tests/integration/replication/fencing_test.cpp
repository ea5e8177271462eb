// Fencing through the replicator (docs/replication.md, "Fencing"): a newer
// primary's open takes the replicas over; the older primary's writes and
// commits fail with errc::fenced from then on, none of its bytes reach a
// replica, and it cannot open again with its old term.
#include "replication/fixture.hpp"

#include <rpm/replicated_log.hpp>

namespace rpm::test {
namespace {

using namespace std::chrono_literals;

TEST_F(ReplicatorTest, ANewerPrimaryFencesTheOlderOne) {
    auto first = options(Durability::majority());
    first.fencing_term = 1;
    auto opened = Replicator::open(first);
    ASSERT_TRUE(opened) << opened.error().message();
    auto a = std::make_optional(std::move(*opened));
    ASSERT_TRUE(a->persist(0, bytes("A: acknowledged")));

    // The newer primary on another machine (its own blank local copy).
    auto second = options(Durability::majority());
    second.fencing_term = 2;
    second.local_path = dir_ / "b.pool";
    auto b = Replicator::open(second);
    ASSERT_TRUE(b) << b.error().message();
    EXPECT_EQ(local_data(*b, 0, 15), "A: acknowledged");

    // The older primary resumes, as after a long pause.
    auto late = a->persist(0, bytes("A: after the takeover"));
    ASSERT_FALSE(late);
    EXPECT_EQ(late.error().code(), errc::fenced) << late.error().message();
    auto w = a->write(64, bytes("A: another write"));
    ASSERT_FALSE(w);
    EXPECT_EQ(w.error().code(), errc::fenced);
    auto c = a->commit();
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().code(), errc::fenced);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(nodes_[i]->data(0, 15), "A: acknowledged") << "node" << i;

    // The newer primary goes on; the older one cannot come back with its term.
    auto lsn = b->persist(0, bytes("B: the newer primary"));
    ASSERT_TRUE(lsn);
    ASSERT_TRUE(b->wait(Frontier::all, *lsn, 10s));  // a majority acknowledged it; now every replica
    for (int i = 0; i < 3; ++i) EXPECT_EQ(nodes_[i]->data(0, 20), "B: the newer primary") << "node" << i;
    a.reset();
    first.create = false;
    auto again = Replicator::open(first);
    ASSERT_FALSE(again);
    EXPECT_EQ(again.error().code(), errc::fenced) << again.error().message();
}

// A fenced primary's log counts what its local copy holds: an
// append_durable() refused with fenced leaves records() equal to the
// records in the local copy (it used to count one never written, when the
// replicator knew it was fenced before the call; when it learns it from
// that call's answers the record is in the local copy, and counted).
TEST_F(ReplicatorTest, AFencedLogCountsWhatItsLocalCopyHolds) {
    auto first = options(Durability::majority());
    first.fencing_term = 3;
    auto a = Replicator::open(first);
    ASSERT_TRUE(a) << a.error().message();
    auto log = ReplicatedLog::open(*a, 0, 1u << 16);
    ASSERT_TRUE(log) << log.error().message();
    ASSERT_TRUE(log->append_durable(bytes("before")));
    ASSERT_EQ(log->records(), 1u);

    auto second = options(Durability::majority());
    second.fencing_term = 4;
    second.local_path = dir_ / "b.pool";
    ASSERT_TRUE(Replicator::open(second));

    auto count = [&] {
        std::uint64_t seen = 0;
        log->for_each([&](const LogRecord&) { return ++seen, true; });
        return seen;
    };
    auto refused = log->append_durable(bytes("after the takeover"));
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code(), errc::fenced) << refused.error().message();
    EXPECT_EQ(log->records(), count());
    // Now it knows: the next one is refused before any write.
    const auto before = count();
    auto again = log->append_durable(bytes("and again"));
    ASSERT_FALSE(again);
    EXPECT_EQ(again.error().code(), errc::fenced);
    EXPECT_EQ(count(), before) << "a fenced replicator wrote its local copy";
    EXPECT_EQ(log->records(), before);
}

// An idle older primary learns it without writing: its replicas' goodbyes
// fail them with fenced, and its next commit says so at once.
TEST_F(ReplicatorTest, AnIdleOlderPrimaryIsFencedBeforeItWrites) {
    auto first = options(Durability::majority());
    first.fencing_term = 5;
    auto a = Replicator::open(first);
    ASSERT_TRUE(a) << a.error().message();
    auto second = options(Durability::majority());
    second.fencing_term = 6;
    second.local_path = dir_ / "b.pool";
    auto b = Replicator::open(second);
    ASSERT_TRUE(b) << b.error().message();
    // Bounded: the replicas' goodbyes reach a's connections' I/O thread.
    bool failed = false;
    for (int i = 0; i < 100 && !failed; ++i) {
        failed = true;
        for (const auto& s : a->replicas()) failed = failed && s.state == ReplicaState::failed;
        if (!failed) std::this_thread::sleep_for(20ms);
    }
    ASSERT_TRUE(failed);
    for (const auto& s : a->replicas()) EXPECT_EQ(s.last_error.code(), errc::fenced) << s.uri << ": " << s.last_error.message();
    auto c = a->commit();
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().code(), errc::fenced);
    // Waiting for a frontier says so too, at once.
    auto w = a->wait(Frontier::quorum, a->last_lsn() + 1, 10s);
    ASSERT_FALSE(w);
    EXPECT_EQ(w.error().code(), errc::fenced) << w.error().message();
}

// The group has one fencing term: a replica that sets its own is refused
// before anything is opened, rather than overridden in silence.
TEST_F(ReplicatorTest, AFencingTermPerReplicaIsRefused) {
    auto o = options(Durability::majority());
    o.fencing_term = 7;
    o.replicas[1].region_options.fencing_term = 7;  // even the same value: one place to set it
    auto r = Replicator::open(o);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), errc::invalid_argument);
    EXPECT_NE(r.error().message().find("replica 1"), std::string::npos) << r.error().message();
    EXPECT_NE(r.error().message().find("ReplicatorOptions::fencing_term"), std::string::npos) << r.error().message();
    EXPECT_FALSE(std::filesystem::exists(o.local_path)) << "refused before the local region was created";
    // Nothing was fenced either: a primary with an older term still opens.
    o.replicas[1].region_options.fencing_term = 0;
    o.fencing_term = 1;
    auto ok = Replicator::open(o);
    ASSERT_TRUE(ok) << ok.error().message();
}

} // namespace
} // namespace rpm::test
