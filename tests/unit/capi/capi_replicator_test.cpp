// The Replicator through the C API: a primary and two replicas (in-process
// servers), majority durability. Writes, commits, persists and atomic
// writes checked by content (the local copy and the replicas' files),
// LSNs increasing, frontiers, waits, status and events; the refusals; and
// losing the replicas one at a time: the first leaves a majority, the
// second loses the quorum.
#include "capi_replicator_helpers.hpp"

#include <cstring>
#include <fstream>
#include <thread>

namespace capi {
namespace {

using CapiReplicator = ReplicaGroup;

/// The data area of a replica's file (after its 4 KiB header), `n` bytes at `offset`.
std::vector<unsigned char> replica_bytes(const TempDir& d, std::uint64_t offset, std::size_t n) {
    std::ifstream f(d.path("rep"), std::ios::binary);
    f.seekg(static_cast<std::streamoff>(4096 + offset));
    std::vector<unsigned char> v(n);
    f.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(n));
    if (!f) v.clear();
    return v;
}

TEST_F(CapiReplicator, OpenReportsMembersAndJoinedEvents) {
    unsigned members = 0, needed = 0;
    CAPI_ASSERT_OK(rpm_replicator_get_members(rep, &members, &needed));
    EXPECT_EQ(members, 3u);  // two replicas and the local copy
    EXPECT_EQ(needed, 2u);
    std::size_t count = 0;
    CAPI_ASSERT_OK(rpm_replicator_get_replica_count(rep, &count));
    EXPECT_EQ(count, 2u);
    std::uint64_t generation = 0;
    CAPI_ASSERT_OK(rpm_replicator_get_generation(rep, &generation));
    EXPECT_GE(generation, 1u);
    const void* data = nullptr;
    std::size_t size = 0;
    CAPI_ASSERT_OK(rpm_replicator_get_data(rep, &data, &size));
    EXPECT_NE(data, nullptr);
    EXPECT_EQ(size, kDataSize);
    // Told in open, on this thread, before it returned.
    const auto ev = events.snapshot();
    int joined = 0;
    for (const auto& e : ev) {
        if (e.kind != RPM_EVENT_JOINED) continue;
        ++joined;
        ASSERT_LT(e.replica, 2u);
        EXPECT_EQ(e.uri, (e.replica == 0 ? s1 : s2).uri());
        EXPECT_EQ(e.error, 0);
    }
    EXPECT_EQ(joined, 2);
    for (std::size_t i = 0; i < 2; ++i) {
        const auto st = status(i);
        EXPECT_EQ(st.state, RPM_REPLICA_LIVE) << i;
        EXPECT_EQ(st.method, RPM_METHOD_SEND_FLUSH) << i;
        EXPECT_EQ(st.degraded, 0) << i;
    }
}

TEST_F(CapiReplicator, WritesCommitsAndPersistsByContent) {
    const auto a = pattern(3000, 21), b = pattern(500, 22), c = pattern(40, 23);
    std::uint64_t l1 = 0, l2 = 0, lc = 0, l3 = 0, l4 = 0;
    CAPI_ASSERT_OK(rpm_replicator_write(rep, 0, a.data(), a.size(), &l1));
    CAPI_ASSERT_OK(rpm_replicator_atomic_write(rep, 4096, 0x0102030405060708ull, &l2));
    EXPECT_GT(l1, 0u);
    EXPECT_GT(l2, l1);
    CAPI_ASSERT_OK(rpm_replicator_commit(rep, &lc));
    EXPECT_GE(lc, l2);
    CAPI_ASSERT_OK(rpm_replicator_persist(rep, 8192, b.data(), b.size(), &l3));
    EXPECT_GT(l3, lc);
    const rpm_slice slices[] = {{20000, c.data(), c.size()}, {30000, a.data(), 16}};
    CAPI_ASSERT_OK(rpm_replicator_persistv(rep, slices, 2, &l4));
    EXPECT_GT(l4, l3);
    CAPI_ASSERT_OK(rpm_replicator_write(rep, 50000, c.data(), c.size(), nullptr));  // lsn_out may be NULL
    std::uint64_t last = 0;
    CAPI_ASSERT_OK(rpm_replicator_get_last_lsn(rep, &last));
    EXPECT_GT(last, l4);
    CAPI_ASSERT_OK(rpm_replicator_commit(rep, nullptr));
    CAPI_ASSERT_OK(rpm_replicator_wait(rep, RPM_FRONTIER_ALL, last, 5000));
    for (int f : {RPM_FRONTIER_LOCAL, RPM_FRONTIER_QUORUM, RPM_FRONTIER_ALL}) {
        std::uint64_t at = 0;
        CAPI_ASSERT_OK(rpm_replicator_get_frontier(rep, f, &at));
        EXPECT_GE(at, last) << f;
    }
    const void* data = nullptr;
    std::size_t size = 0;
    CAPI_ASSERT_OK(rpm_replicator_get_data(rep, &data, &size));
    const auto* d = static_cast<const unsigned char*>(data);
    EXPECT_EQ(0, std::memcmp(d, a.data(), a.size()));
    EXPECT_EQ(0, std::memcmp(d + 8192, b.data(), b.size()));
    EXPECT_EQ(0, std::memcmp(d + 20000, c.data(), c.size()));
    EXPECT_EQ(0, std::memcmp(d + 30000, a.data(), 16));
    std::uint64_t word = 0;
    std::memcpy(&word, d + 4096, 8);
    EXPECT_EQ(word, 0x0102030405060708ull);
    for (const TempDir* rd : {&d1, &d2}) {
        EXPECT_EQ(replica_bytes(*rd, 0, a.size()), a);
        EXPECT_EQ(replica_bytes(*rd, 8192, b.size()), b);
        EXPECT_EQ(replica_bytes(*rd, 20000, c.size()), c);
        EXPECT_EQ(replica_bytes(*rd, 50000, c.size()), c);
    }
    for (std::size_t i = 0; i < 2; ++i) {
        EXPECT_GE(status(i).frontier, last) << i;
        EXPECT_EQ(status(i).lag, 0u) << i;
    }
}

TEST_F(CapiReplicator, RefusesBadArguments) {
    unsigned char buf[16] = {};
    std::uint64_t lsn = 0;
    EXPECT_EQ(rpm_replicator_write(rep, kDataSize - 8, buf, 16, &lsn), RPM_E_INVALID_ARGUMENT);
    EXPECT_NE(std::string(rpm_errormsg()), "");
    EXPECT_EQ(rpm_replicator_write(rep, 0, nullptr, 16, &lsn), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_replicator_write(nullptr, 0, buf, 16, &lsn), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_replicator_atomic_write(rep, 12, 1, &lsn), RPM_E_INVALID_ARGUMENT);  // misaligned
    EXPECT_EQ(rpm_replicator_atomic_write(nullptr, 8, 1, &lsn), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_replicator_persist(rep, kDataSize, buf, 1, &lsn), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_replicator_persist(rep, 0, nullptr, 1, &lsn), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_replicator_persistv(rep, nullptr, 1, &lsn), RPM_E_INVALID_ARGUMENT);
    const rpm_slice one[] = {{0, buf, 8}};
    EXPECT_EQ(rpm_replicator_persistv(rep, one, 0, &lsn), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_replicator_commit(nullptr, &lsn), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(lsn, 0u);  // no refusal wrote an LSN
    EXPECT_EQ(rpm_replicator_wait(rep, 3, 1, 10), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_replicator_wait(rep, -1, 1, 10), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_replicator_wait(nullptr, RPM_FRONTIER_LOCAL, 1, 10), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_replicator_get_frontier(rep, 3, &lsn), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_replicator_get_frontier(rep, RPM_FRONTIER_LOCAL, nullptr), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_replicator_get_last_lsn(nullptr, &lsn), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_replicator_get_last_lsn(rep, nullptr), RPM_E_INVALID_ARGUMENT);
    const void* data = nullptr;
    std::size_t size = 0;
    EXPECT_EQ(rpm_replicator_get_data(rep, nullptr, &size), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_replicator_get_data(rep, &data, nullptr), RPM_E_INVALID_ARGUMENT);
    unsigned m = 0;
    EXPECT_EQ(rpm_replicator_get_members(rep, nullptr, &m), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_replicator_get_generation(rep, nullptr), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_replicator_get_replica_count(rep, nullptr), RPM_E_INVALID_ARGUMENT);
    rpm_replica_status st{};
    EXPECT_EQ(rpm_replicator_get_replica_status(rep, 2, &st), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_replicator_wait(rep, RPM_FRONTIER_LOCAL, 1, -1), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_replicator_get_replica_status(rep, 0, nullptr), RPM_E_INVALID_ARGUMENT);
    rpm_replicator* other = nullptr;
    EXPECT_EQ(rpm_replicator_open(nullptr, &other), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(other, nullptr);
    EXPECT_EQ(rpm_replicator_open(opts, nullptr), RPM_E_INVALID_ARGUMENT);
}

TEST_F(CapiReplicator, WaitTimesOutOnAnLsnNotIssued) {
    std::uint64_t last = 0;
    CAPI_ASSERT_OK(rpm_replicator_get_last_lsn(rep, &last));
    EXPECT_EQ(rpm_replicator_wait(rep, RPM_FRONTIER_LOCAL, last + 1000, 30), RPM_E_IO_ERROR);
    CAPI_EXPECT_OK(rpm_replicator_wait(rep, RPM_FRONTIER_QUORUM, last, 30));  // reached already
}

/// Waits for the quorum frontier to pass the last LSN with `timeout_ms`
/// while this thread persists; the wait's result.
int wait_across_a_persist(rpm_replicator* rep, std::int64_t timeout_ms) {
    std::uint64_t last = 0;
    if (int rc = rpm_replicator_get_last_lsn(rep, &last)) return rc;
    std::atomic<int> rc{1};
    std::atomic<bool> waiting{false};
    std::thread waiter([&] {
        waiting = true;
        rc = rpm_replicator_wait(rep, RPM_FRONTIER_QUORUM, last + 1, timeout_ms);
    });
    while (!waiting) std::this_thread::yield();  // the persist's round trip starts after the wait
    const int persisted = rpm_replicator_persist(rep, 0, "w", 1, nullptr);
    waiter.join();
    return persisted != 0 ? persisted : rc.load();
}

TEST_F(CapiReplicator, WaitWithALongTimeoutSeesTheCommit) {
    EXPECT_EQ(wait_across_a_persist(rep, std::int64_t{1000000000000}), 0);  // 10^12 ms
}

TEST_F(CapiReplicator, WaitWithTheLargestTimeoutSeesTheCommit) {
    // INT64_MAX ms once overflowed the wait's deadline and timed out at once
    // (src/core/longest_wait.hpp caps waits at ten years).
    EXPECT_EQ(wait_across_a_persist(rep, INT64_MAX), 0);
}

TEST_F(CapiReplicator, CloseSetsNull) {
    rpm_replicator* r = rep.p;
    rep.p = nullptr;
    CAPI_ASSERT_OK(rpm_replicator_close(&r));
    EXPECT_EQ(r, nullptr);
    CAPI_EXPECT_OK(rpm_replicator_close(&r));
    EXPECT_EQ(rpm_replicator_close(nullptr), RPM_E_INVALID_ARGUMENT);
    // Reopening the group: a larger generation, the data kept.
    ReplicatorHandle again;
    CAPI_ASSERT_OK(rpm_replicator_open(opts, again.out()));
    std::uint64_t generation = 0;
    CAPI_ASSERT_OK(rpm_replicator_get_generation(again, &generation));
    EXPECT_GE(generation, 2u);
}

TEST_F(CapiReplicator, WrongReplicaSecretFailsOpen) {
    CAPI_ASSERT_OK(rep.reset());
    ReplicatorOpts bad;
    ASSERT_NO_FATAL_FAILURE(options(bad, "wrong-secret"));
    rpm_replicator* r = nullptr;
    EXPECT_EQ(rpm_replicator_open(bad, &r), RPM_E_AUTH_FAILED);
    EXPECT_EQ(r, nullptr);
    EXPECT_NE(std::string(rpm_errormsg()), "");
}

TEST_F(CapiReplicator, FencingTermReachesTheReplicas) {
    CAPI_ASSERT_OK(rep.reset());
    CAPI_ASSERT_OK(rpm_replicator_opts_set_fencing_term(opts, 7));
    CAPI_ASSERT_OK(rpm_replicator_open(opts, rep.out()));
    CAPI_ASSERT_OK(rpm_replicator_persist(rep, 0, "fenced", 6, nullptr));
    // Each replica region now holds term 7: an opener without one, or with
    // an older one, is refused.
    for (const TestServer* s : {&s1, &s2}) {
        Conn c;
        CAPI_ASSERT_OK(connect(s->uri(), c));
        rpm_region* r = nullptr;
        EXPECT_EQ(rpm_region_open(c, "rep", nullptr, &r), RPM_E_FENCED) << s->uri();
        RegionOpts ro;
        CAPI_ASSERT_OK(rpm_region_opts_new(ro.out()));
        CAPI_ASSERT_OK(rpm_region_opts_set_fencing_term(ro, 6));
        EXPECT_EQ(rpm_region_open(c, "rep", ro, &r), RPM_E_FENCED) << s->uri();
        EXPECT_EQ(r, nullptr);
    }
}

TEST_F(CapiReplicator, ForeignGroupNeedsAdoptForeign) {
    CAPI_ASSERT_OK(rpm_replicator_persist(rep, 0, "group A", 7, nullptr));
    CAPI_ASSERT_OK(rep.reset());
    // Group C: its own local file and replica; then s1, which holds group A.
    TempDir dc, d3;
    TestServer s3;
    CAPI_ASSERT_OK(s3.start(d3, {{"rep", kLocalSize}}));
    ClientOpts co;
    CAPI_ASSERT_OK(make_client_opts(co));
    ReplicatorOpts c;
    CAPI_ASSERT_OK(rpm_replicator_opts_new(c.out()));
    CAPI_ASSERT_OK(rpm_replicator_opts_set_local(c, dc.path("c").c_str(), kLocalSize, 1));
    CAPI_ASSERT_OK(rpm_replicator_opts_add_replica(c, s3.uri().c_str(), "rep", co));
    {
        ReplicatorHandle group_c;
        CAPI_ASSERT_OK(rpm_replicator_open(c, group_c.out()));
        CAPI_ASSERT_OK(rpm_replicator_persist(group_c, 0, "group C", 7, nullptr));
    }
    CAPI_ASSERT_OK(rpm_replicator_opts_add_replica(c, s1.uri().c_str(), "rep", co));
    rpm_replicator* r = nullptr;
    EXPECT_EQ(rpm_replicator_open(c, &r), RPM_E_BAD_CONFIG);
    EXPECT_EQ(r, nullptr);
    EXPECT_NE(std::string(rpm_errormsg()).find(s1.uri()), std::string::npos) << rpm_errormsg();
    CAPI_ASSERT_OK(rpm_replicator_opts_set_adopt_foreign(c, 1));
    ReplicatorHandle adopted;
    CAPI_ASSERT_OK(rpm_replicator_open(c, adopted.out()));
    CAPI_ASSERT_OK(rpm_replicator_wait(adopted, RPM_FRONTIER_ALL, 1, 5000));
    EXPECT_EQ(replica_bytes(d1, 0, 7), (std::vector<unsigned char>{'g', 'r', 'o', 'u', 'p', ' ', 'C'}));
}

TEST_F(CapiReplicator, CommitKeepsMajorityThenLosesQuorum) {
    Rlog log;
    CAPI_ASSERT_OK(rpm_rlog_open(rep, 256 * 1024, 64 * 1024, log.out()));
    CAPI_ASSERT_OK(rpm_rlog_append_durable(log, "before", 6, nullptr));
    const auto a = pattern(100, 24);
    std::uint64_t l1 = 0, c1 = 0;
    CAPI_ASSERT_OK(s1.stop());
    CAPI_ASSERT_OK(rpm_replicator_write(rep, 0, a.data(), a.size(), &l1));
    CAPI_ASSERT_OK(rpm_replicator_commit(rep, &c1));  // local + replica 1 are a majority
    EXPECT_GE(c1, l1);
    const auto left = events.wait_for(RPM_EVENT_LEFT, 0);
    ASSERT_TRUE(left.has_value());
    EXPECT_LT(left->error, 0);
    EXPECT_EQ(left->uri, s1.uri());
    EXPECT_TRUE(eventually([&] { return status(0).state == RPM_REPLICA_FAILED; }));
    EXPECT_EQ(status(1).state, RPM_REPLICA_LIVE);
    CAPI_ASSERT_OK(s2.stop());
    std::uint64_t l2 = 0, c2 = 0;
    CAPI_ASSERT_OK(rpm_replicator_write(rep, 200, a.data(), a.size(), &l2));  // the local copy takes it
    EXPECT_GT(l2, c1);
    EXPECT_EQ(rpm_replicator_commit(rep, &c2), RPM_E_QUORUM_LOST);
    EXPECT_NE(std::string(rpm_errormsg()), "");
    EXPECT_EQ(rpm_replicator_wait(rep, RPM_FRONTIER_QUORUM, l2, 1000), RPM_E_QUORUM_LOST);
    // The log still appends to the local copy and iterates in order; a
    // durable append cannot be.
    rpm_rlog_append_info info{};
    CAPI_ASSERT_OK(rpm_rlog_append(log, "after", 5, &info));
    EXPECT_EQ(info.index, 2u);
    EXPECT_EQ(rpm_rlog_append_durable(log, "never", 5, nullptr), RPM_E_QUORUM_LOST);
    std::vector<std::string> seen;
    CAPI_ASSERT_OK(rpm_rlog_foreach(
        log,
        [](void* ctx, std::uint64_t, const void* p, std::size_t n) {
            static_cast<std::vector<std::string>*>(ctx)->emplace_back(static_cast<const char*>(p), n);
            return 0;
        },
        &seen));
    ASSERT_GE(seen.size(), 2u);
    EXPECT_EQ(seen[0], "before");
    EXPECT_EQ(seen[1], "after");
}

}  // namespace
}  // namespace capi
