// The replicator's data path: LSNs, commit, frontiers and callbacks, the
// durability policies, parallel replica writes, and bad input.
#include "replication/fixture.hpp"

#include <atomic>
#include <cstring>
#include <thread>

namespace rpm::test {
namespace {

TEST_F(ReplicatorTest, CommitPutsEveryWriteOnEveryReplica) {
    auto r = Replicator::open(options(Durability::majority()));
    ASSERT_TRUE(r) << r.error().message();
    const auto a = bytes("first record"), b = bytes("second, further on");
    auto l1 = r->write(0, a);
    auto l2 = r->write(100000, b);
    ASSERT_TRUE(l1 && l2);
    EXPECT_EQ(*l2, *l1 + 1);
    auto c = r->commit();
    ASSERT_TRUE(c) << c.error().message();
    EXPECT_EQ(*c, *l2);
    EXPECT_GE(r->frontier(Frontier::quorum), *l2);
    ASSERT_TRUE(r->wait(Frontier::all, *l2, std::chrono::seconds(10)));
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(nodes_[i]->data(0, a.size()), "first record") << i;
        EXPECT_EQ(nodes_[i]->data(100000, b.size()), "second, further on") << i;
    }
    EXPECT_EQ(local_data(*r, 0, a.size()), "first record");
}

TEST_F(ReplicatorTest, AtomicWritesAndManyWritesBeforeOneCommit) {
    auto r = Replicator::open(options(Durability::all()));
    ASSERT_TRUE(r) << r.error().message();
    for (std::uint64_t i = 0; i < 500; ++i) ASSERT_TRUE(r->atomic_write(i * 8, i * 3 + 1));
    ASSERT_TRUE(r->commit());
    for (int n = 0; n < 3; ++n) {
        const auto raw = nodes_[n]->data(0, 500 * 8);
        for (std::uint64_t i = 0; i < 500; ++i) {
            std::uint64_t v;
            std::memcpy(&v, raw.data() + i * 8, 8);
            ASSERT_EQ(v, i * 3 + 1) << "node " << n << " word " << i;
        }
    }
}

TEST_F(ReplicatorTest, ProgressCallbacksReportLocalQuorumAndAll) {
    std::mutex mu;
    std::condition_variable cv;
    std::map<Frontier, Lsn> seen;
    auto o = options(Durability::majority());
    o.on_progress = [&](Frontier f, Lsn lsn) {
        std::lock_guard lock(mu);
        seen[f] = std::max(seen[f], lsn);
        cv.notify_all();
    };
    auto r = Replicator::open(std::move(o));
    ASSERT_TRUE(r) << r.error().message();
    ASSERT_TRUE(r->write(64, bytes("x")));
    auto c = r->commit();
    ASSERT_TRUE(c);
    ASSERT_TRUE(r->wait(Frontier::all, *c, std::chrono::seconds(10)));
    // Callbacks run after the frontier moved, on another thread.
    std::unique_lock lock(mu);
    cv.wait_for(lock, std::chrono::seconds(10), [&] {
        return seen[Frontier::all] >= *c && seen[Frontier::quorum] >= *c && seen[Frontier::local] >= *c;
    });
    EXPECT_EQ(seen[Frontier::local], *c);
    EXPECT_EQ(seen[Frontier::quorum], *c);
    EXPECT_EQ(seen[Frontier::all], *c);
}

TEST_F(ReplicatorTest, ACommitReadsItsAnswersOnItsOwnThread) {
    // All-of-3: the quorum forms with the last replica's answer, so the
    // thread reporting it is the one that read that answer. The committing
    // thread drives the replicas' I/O group: it must be that thread, not
    // the group's (which would have to wake it).
    std::mutex mu;
    std::vector<std::thread::id> quorum_threads;
    auto o = options(Durability::all());
    o.on_progress = [&](Frontier f, Lsn) {
        if (f != Frontier::quorum) return;
        std::lock_guard lock(mu);
        quorum_threads.push_back(std::this_thread::get_id());
    };
    auto r = Replicator::open(std::move(o));
    ASSERT_TRUE(r) << r.error().message();
    {
        std::lock_guard lock(mu);
        quorum_threads.clear();  // open()'s own
    }
    for (int i = 0; i < 20; ++i) ASSERT_TRUE(r->persist(static_cast<std::uint64_t>(i) * 64, bytes("own thread")));
    for (int i = 0; i < 5; ++i) {
        ASSERT_TRUE(r->write(static_cast<std::uint64_t>(i) * 64 + 4096, bytes("then commit")));
        ASSERT_TRUE(r->commit());
    }
    std::lock_guard lock(mu);
    ASSERT_EQ(quorum_threads.size(), 25u);
    for (auto id : quorum_threads) EXPECT_EQ(id, std::this_thread::get_id());
}

TEST_F(ReplicatorTest, ConcurrentCommitsAllComplete) {
    // One committing thread drives the replicas' I/O at a time; the others
    // wait for it (or for the group's thread) to read their answers.
    auto r = Replicator::open(options(Durability::majority()));
    ASSERT_TRUE(r) << r.error().message();
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            for (int i = 0; i < 50; ++i) {
                const std::uint64_t off = static_cast<std::uint64_t>(t) * 65536 + static_cast<std::uint64_t>(i) * 64;
                auto c = (i % 2 == 0) ? r->persist(off, bytes("concurrent"))
                                      : (r->write(off, bytes("concurrent")) ? r->commit() : Result<Lsn>(Error(errc::io_error, "write")));
                if (!c) ++failures;
            }
        });
    for (auto& th : threads) th.join();
    EXPECT_EQ(failures.load(), 0);
    ASSERT_TRUE(r->wait(Frontier::all, r->last_lsn(), std::chrono::seconds(10)));
    for (int n = 0; n < 3; ++n)
        for (int t = 0; t < 4; ++t)
            EXPECT_EQ(nodes_[n]->data(static_cast<std::uint64_t>(t) * 65536 + 49 * 64, 10), "concurrent") << n << " " << t;
}

TEST_F(ReplicatorTest, PoliciesNeedTheirMemberCounts) {
    struct Case {
        Durability d;
        unsigned members, needed;
    } cases[] = {{Durability::all(), 4, 4},          {Durability::all(false), 3, 3},
                 {Durability::majority(), 4, 3},     {Durability::majority(false), 3, 2},
                 {Durability::k_of_n(1, false), 3, 1}, {Durability::k_of_n(2), 4, 2}};
    for (const auto& c : cases) {
        auto r = Replicator::open(options(c.d));
        ASSERT_TRUE(r) << to_string(c.d) << ": " << r.error().message();
        EXPECT_EQ(r->members(), c.members) << to_string(c.d);
        EXPECT_EQ(r->needed(), c.needed) << to_string(c.d);
        ASSERT_TRUE(r->persist(0, bytes("policy"))) << to_string(c.d);
    }
}

TEST_F(ReplicatorTest, ReplicasAreWrittenInParallel) {
    // Replica 0 stops answering (its connection stays open); with a long
    // failure timeout, a commit that needs two of three replicas can only
    // succeed if the other two were not waiting behind it.
    PausableProxy proxy(nodes_[0]->port());
    auto o = options(Durability::majority(false), {proxy.uri(), nodes_[1]->uri(), nodes_[2]->uri()});
    o.failure_timeout = std::chrono::seconds(30);
    auto r = Replicator::open(std::move(o));
    ASSERT_TRUE(r) << r.error().message();
    proxy.pause(true);
    for (int i = 0; i < 20; ++i) {
        auto c = r->persist(static_cast<std::uint64_t>(i) * 4096, bytes("parallel"));
        ASSERT_TRUE(c) << c.error().message();
    }
    EXPECT_EQ(nodes_[0]->data(0, 8), std::string(8, '\0'));  // nothing reached it
    EXPECT_EQ(nodes_[1]->data(19 * 4096, 8), "parallel");
    proxy.pause(false);
    auto last = r->last_lsn();
    ASSERT_TRUE(r->wait(Frontier::all, last, std::chrono::seconds(10)));
    EXPECT_EQ(nodes_[0]->data(19 * 4096, 8), "parallel");
}

TEST_F(ReplicatorTest, AVectoredPersistPutsEverySliceOnEveryReplica) {
    auto r = Replicator::open(options(Durability::all()));
    ASSERT_TRUE(r) << r.error().message();
    const auto body = bytes("a record's body");
    const std::uint64_t word = 0x0123456789abcdefull;
    std::byte raw[8];
    std::memcpy(raw, &word, 8);
    const auto far = bytes("far away");
    const WriteSlice slices[] = {{4104, body}, {4096, raw}, {300000, far}};
    auto lsn = r->persist(slices);
    ASSERT_TRUE(lsn) << lsn.error().message();
    EXPECT_EQ(*lsn, r->last_lsn()) << "one LSN for the whole persist";
    EXPECT_GE(r->frontier(Frontier::all), *lsn);
    for (int n = 0; n < 3; ++n) {
        EXPECT_EQ(nodes_[n]->data(4104, body.size()), "a record's body") << n;
        EXPECT_EQ(nodes_[n]->data(300000, far.size()), "far away") << n;
        const auto w = nodes_[n]->data(4096, 8);
        std::uint64_t got = 0;
        std::memcpy(&got, w.data(), 8);
        EXPECT_EQ(got, word) << n;
    }
    EXPECT_EQ(local_data(*r, 4104, body.size()), "a record's body");
    // With a write not yet committed, the same call sends writes and flushes.
    ASSERT_TRUE(r->write(500000, bytes("pending")));
    auto again = r->persist(slices);
    ASSERT_TRUE(again);
    for (int n = 0; n < 3; ++n) EXPECT_EQ(nodes_[n]->data(500000, 7), "pending") << n;

    // Bad input: nothing is written.
    const auto untouched = bytes("must not land");
    const WriteSlice outside[] = {{8192, untouched}, {r->size() - 2, body}};
    auto bad = r->persist(outside);
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error(), errc::invalid_argument);
    EXPECT_NE(bad.error().detail().find("outside the data area"), std::string::npos);
    EXPECT_EQ(local_data(*r, 8192, untouched.size()), std::string(untouched.size(), '\0'));
    EXPECT_EQ(r->persist(std::span<const WriteSlice>()).error(), errc::invalid_argument);
    std::vector<WriteSlice> many(kMaxPersistSlices + 1, WriteSlice{0, body});
    EXPECT_EQ(r->persist(many).error(), errc::invalid_argument);
}

// Small writes wait for the commit and go as one vectored persist per
// member; a larger write is sent at once, after the small ones before it,
// so every member ends with the newest bytes, as the local copy does.
TEST_F(ReplicatorTest, SmallWritesWaitForTheCommitAndEveryWriteLandsInIssueOrder) {
    auto r = Replicator::open(options(Durability::all()));
    ASSERT_TRUE(r) << r.error().message();
    ASSERT_TRUE(r->write(0, bytes("old bytes")));
    ASSERT_TRUE(r->write(65536, bytes("first")));
    ASSERT_TRUE(r->write(65536, bytes("again")));  // the same bytes twice in one batch
    for (int n = 0; n < 3; ++n) EXPECT_EQ(nodes_[n]->data(65536, 5), std::string(5, '\0')) << "sent before the commit " << n;
    // Larger than what waits (16 KiB): sent now, over the first write.
    std::string big(20 * 1024, 'n');
    big.replace(0, 9, "new bytes");
    ASSERT_TRUE(r->write(0, bytes(big)));
    ASSERT_TRUE(r->atomic_write(131072, 42));
    ASSERT_TRUE(r->commit());
    for (int n = 0; n < 3; ++n) {
        EXPECT_EQ(nodes_[n]->data(0, 9), "new bytes") << "a small write sent after the larger one that followed it: " << n;
        EXPECT_EQ(nodes_[n]->data(65536, 5), "again") << n;
        const auto w = nodes_[n]->data(131072, 8);
        std::uint64_t got = 0;
        std::memcpy(&got, w.data(), 8);
        EXPECT_EQ(got, 42u) << n;
    }
    EXPECT_EQ(local_data(*r, 0, 9), "new bytes");
}

// A group commit of many small writes (a node's pipelined puts: three
// writes each) waits whole for the commit and goes as several persists per
// member, in order; before, the first 256 were sent at once as 256 writes.
TEST_F(ReplicatorTest, ManySmallWritesWaitForTheCommitAndGoInOrderAcrossItsPersists) {
    auto r = Replicator::open(options(Durability::all()));
    ASSERT_TRUE(r) << r.error().message();
    constexpr std::uint64_t kWrites = 3 * kMaxPersistSlices - 10;  // three persists
    for (std::uint64_t i = 0; i < kWrites; ++i) ASSERT_TRUE(r->atomic_write(i * 8, i + 1));
    ASSERT_TRUE(r->write(8, bytes("rewrite!")));  // over the first persist's second word, from the third
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    for (int n = 0; n < 3; ++n)
        EXPECT_EQ(nodes_[n]->data(0, kWrites * 8), std::string(kWrites * 8, '\0')) << "sent before the commit: " << n;
    ASSERT_TRUE(r->commit());
    for (int n = 0; n < 3; ++n) {
        const auto raw = nodes_[n]->data(0, kWrites * 8);
        EXPECT_EQ(raw.substr(8, 8), "rewrite!") << "the later write must win: " << n;
        for (std::uint64_t i = 2; i < kWrites; ++i) {
            std::uint64_t v;
            std::memcpy(&v, raw.data() + i * 8, 8);
            ASSERT_EQ(v, i + 1) << "node " << n << " word " << i;
        }
    }
}

TEST_F(ReplicatorTest, BadInputGetsClearErrors) {
    auto r = Replicator::open(options(Durability::majority()));
    ASSERT_TRUE(r);
    auto w = r->write(r->size() - 2, bytes("four"));
    ASSERT_FALSE(w);
    EXPECT_EQ(w.error(), errc::invalid_argument);
    EXPECT_NE(w.error().detail().find("outside the data area"), std::string::npos);
    EXPECT_EQ(r->atomic_write(4, 1).error(), errc::invalid_argument);
    EXPECT_EQ(Replicator::open(options(Durability::k_of_n(5))).error(), errc::invalid_argument);
    auto o = options(Durability::majority());
    o.local_path.clear();
    EXPECT_EQ(Replicator::open(o).error(), errc::invalid_argument);
    auto small = options(Durability::majority());
    small.local_size = 16u << 20;  // larger than the replicas' regions
    small.local_path = dir_ / "big.pool";
    auto big = Replicator::open(small);
    ASSERT_FALSE(big);
    EXPECT_EQ(big.error(), errc::bad_size);
    auto twice = options(Durability::majority(), {nodes_[0]->uri(), nodes_[1]->uri(), nodes_[0]->uri()});
    auto dup = Replicator::open(twice);
    ASSERT_FALSE(dup);
    EXPECT_EQ(dup.error(), errc::invalid_argument);
    EXPECT_NE(dup.error().detail().find("same region"), std::string::npos) << dup.error().message();
    EXPECT_EQ(parse_durability("most").error(), errc::invalid_argument);
    EXPECT_EQ(parse_durability("0").error(), errc::invalid_argument);
    EXPECT_EQ(to_string(*parse_durability("2-local")), "2-of-n-local");
    EXPECT_EQ(to_string(*parse_durability("majority")), "majority+local");
}

} // namespace
} // namespace rpm::test
