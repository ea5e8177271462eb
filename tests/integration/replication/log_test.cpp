// The replicated log over a replicator: format once, append, learn each
// record's LSN, find records again after reopening, refuse what does not fit.
#include "replication/fixture.hpp"

namespace rpm::test {
namespace {

TEST_F(ReplicatorTest, LogAppendsAreDurableAtTheirLsnAndSurviveReopen) {
    std::uint64_t generation = 0;
    {
        auto r = Replicator::open(options(Durability::majority()));
        ASSERT_TRUE(r) << r.error().message();
        auto log = ReplicatedLog::open(*r, 4096, 1u << 20);
        ASSERT_TRUE(log) << log.error().message();
        generation = log->generation();
        EXPECT_NE(generation, 0u);
        std::vector<LogAppend> appended;
        for (int i = 0; i < 10; ++i) {
            auto a = log->append(bytes("entry " + std::to_string(i)));
            ASSERT_TRUE(a);
            EXPECT_EQ(a->index, static_cast<std::uint64_t>(i + 1));
            appended.push_back(*a);
        }
        EXPECT_LT(r->frontier(Frontier::quorum), appended.back().lsn);
        auto c = r->commit();
        ASSERT_TRUE(c);
        EXPECT_GE(r->frontier(Frontier::quorum), appended.back().lsn);
        auto d = log->append_durable(bytes("last"));
        ASSERT_TRUE(d);
        EXPECT_GE(r->frontier(Frontier::quorum), d->lsn);
        EXPECT_EQ(log->records(), 11u);
    }
    auto o = options(Durability::majority());
    o.create = false;
    auto r = Replicator::open(o);
    ASSERT_TRUE(r);
    auto log = ReplicatedLog::open(*r, 4096, 1u << 20);
    ASSERT_TRUE(log);
    EXPECT_EQ(log->generation(), generation);  // opened, not formatted again
    EXPECT_EQ(log->records(), 11u);
    std::vector<std::string> seen;
    log->for_each([&](const LogRecord& rec) {
        seen.emplace_back(reinterpret_cast<const char*>(rec.payload.data()), rec.payload.size());
        return true;
    });
    ASSERT_EQ(seen.size(), 11u);
    EXPECT_EQ(seen[3], "entry 3");
    EXPECT_EQ(seen[10], "last");
    // Every replica holds the same log.
    for (int n = 0; n < 3; ++n) {
        const auto raw = nodes_[n]->data(4096, 1u << 20);
        EXPECT_EQ(ReplicatedLog::scan(std::as_bytes(std::span(raw.data(), raw.size()))).size(), 11u) << n;
    }
}

// reset: every member shows an empty log, its space reused from the start,
// and a reopen finds the new log, not the old records.
TEST_F(ReplicatorTest, ALogResetIsEmptyOnEveryMemberAndReusesItsSpace) {
    auto r = Replicator::open(options(Durability::all()));
    ASSERT_TRUE(r) << r.error().message();
    auto log = ReplicatedLog::open(*r, 0, 1u << 16);
    ASSERT_TRUE(log);
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(log->append_durable(bytes("old " + std::to_string(i))));
    const auto before = log->generation();
    auto reset = log->reset();
    ASSERT_TRUE(reset) << reset.error().message();
    EXPECT_GE(r->frontier(Frontier::all), *reset);
    EXPECT_NE(log->generation(), before);
    EXPECT_EQ(log->records(), 0u);
    EXPECT_EQ(log->used(), ReplicatedLog::kHeaderSize);
    for (int n = 0; n < 3; ++n) {
        const auto raw = nodes_[n]->data(0, 1u << 16);
        EXPECT_TRUE(ReplicatedLog::scan(std::as_bytes(std::span(raw.data(), raw.size()))).empty()) << n;
    }
    auto a = log->append_durable(bytes("new"));
    ASSERT_TRUE(a);
    EXPECT_EQ(a->index, 1u);
    EXPECT_EQ(a->position, ReplicatedLog::kHeaderSize);
    auto again = ReplicatedLog::open(*r, 0, 1u << 16);
    ASSERT_TRUE(again);
    EXPECT_EQ(again->generation(), log->generation());
    EXPECT_EQ(again->records(), 1u);
}

TEST_F(ReplicatorTest, DurableAppendsAfterUncommittedOnesCoverThemToo) {
    // append_durable is one vectored persist; with appends not yet
    // committed it falls back to writes and one commit, which covers them.
    auto r = Replicator::open(options(Durability::all()));
    ASSERT_TRUE(r) << r.error().message();
    auto log = ReplicatedLog::open(*r, 0, 1u << 16);
    ASSERT_TRUE(log);
    for (int round = 0; round < 3; ++round) {
        ASSERT_TRUE(log->append(bytes("loose " + std::to_string(round))));
        auto d = log->append_durable(bytes("durable " + std::to_string(round)));
        ASSERT_TRUE(d) << d.error().message();
        EXPECT_GE(r->frontier(Frontier::all), d->lsn);
        auto solo = log->append_durable(bytes("alone " + std::to_string(round)));
        ASSERT_TRUE(solo);
        EXPECT_GE(r->frontier(Frontier::all), solo->lsn);
    }
    EXPECT_EQ(log->records(), 9u);
    for (int n = 0; n < 3; ++n) {
        const auto raw = nodes_[n]->data(0, 1u << 16);
        const auto recs = ReplicatedLog::scan(std::as_bytes(std::span(raw.data(), raw.size())));
        ASSERT_EQ(recs.size(), 9u) << n;
        EXPECT_EQ(std::string(reinterpret_cast<const char*>(recs[8].payload.data()), recs[8].payload.size()), "alone 2");
    }
}

TEST_F(ReplicatorTest, ALogKeepsItsReplicatorWhenTheObjectItWasOpenedOnIsGone) {
    // The log shares the replicator's state (as a RemoteRegion its
    // connection): the Replicator object may be moved away or destroyed.
    auto log = [&]() -> Result<ReplicatedLog> {
        auto r = Replicator::open(options(Durability::all()));
        if (!r) return r.error();
        auto opened = ReplicatedLog::open(*r, 0, 1u << 16);
        Replicator moved = std::move(*r);  // the object open was given is now moved-from
        return opened;                     // ... and `moved` goes here
    }();
    ASSERT_TRUE(log) << log.error().message();
    auto d = log->append_durable(bytes("after its replicator object went"));
    ASSERT_TRUE(d) << d.error().message();
    EXPECT_GE(log->replicator().frontier(Frontier::all), d->lsn);
    for (int n = 0; n < 3; ++n) {
        const auto raw = nodes_[n]->data(0, 1u << 16);
        const auto recs = ReplicatedLog::scan(std::as_bytes(std::span(raw.data(), raw.size())));
        ASSERT_EQ(recs.size(), 1u) << n;
    }
}

TEST_F(ReplicatorTest, LogRefusesWhatDoesNotFit) {
    auto r = Replicator::open(options(Durability::majority()));
    ASSERT_TRUE(r);
    EXPECT_EQ(ReplicatedLog::open(*r, 3, 4096).error(), errc::invalid_argument);
    EXPECT_EQ(ReplicatedLog::open(*r, 0, r->size() + 8).error(), errc::invalid_argument);
    EXPECT_EQ(ReplicatedLog::open(*r, 0, 32).error(), errc::invalid_argument);
    auto log = ReplicatedLog::open(*r, 0, 256);
    ASSERT_TRUE(log);
    std::vector<std::byte> big(200);
    auto full = log->append(big);
    ASSERT_FALSE(full);
    EXPECT_EQ(full.error(), errc::bad_size);
    EXPECT_NE(full.error().detail().find("full"), std::string::npos);
    EXPECT_EQ(ReplicatedLog::open(*r, 0, 512).error(), errc::bad_size);  // formatted with 256
}

} // namespace
} // namespace rpm::test
