// The RDMA transport's registered-buffer pools (rpm::MrPool) against the
// fake fabric: one peer and one set of pools per device for every client
// connection, bounce entries on the data path, waiting when a pool is
// empty, the listener's pool of session message buffers, and that
// everything registered is deregistered.
#include "support.hpp"

#include <algorithm>
#include <thread>

namespace rpm::rdma::test {
namespace {

// Two bounce entries of one 4 KiB chunk, both registered up front: the
// budget leaves the pool nothing to add.
ClientLimits two_bounce_entries() {
    ClientLimits lim;
    lim.chunk = 4096;
    lim.bounce_pool.budget = 2;
    lim.bounce_pool.initial = 2;
    lim.bounce_pool.floor = 2;
    lim.bounce_pool.l1_entries = 1;
    return lim;
}

std::vector<std::byte> pattern(std::size_t n) {
    std::vector<std::byte> d(n);
    for (std::size_t i = 0; i < n; ++i) d[i] = static_cast<std::byte>(i * 13 + 1);
    return d;
}

bool ready(Waiter& w) { return w.f.wait_for(0s) == std::future_status::ready; }

// Release held completions until `w` has its answer.
bool finish(Harness& h, Waiter& w) {
    return eventually([&] {
        h.fabric.release_held();
        return ready(w);
    });
}

TEST(RdmaPools, ConnectionsOnOneDeviceShareOnePeerAndItsPools) {
    Harness h({{"raw", PersistenceDomain::cpu_cache}});
    h.listen();
    auto a = h.connect_ok();
    auto b = h.connect_ok();
    ASSERT_TRUE(a && b);
    EXPECT_EQ(count_calls(h, "rpma_peer_new"), 2u);  // the listener's and the device's
    auto pools = client_pools(h);
    ASSERT_TRUE(pools);
    EXPECT_EQ(regs_with(h, pools->peer(), kBounceUsage).size(), kBouncePoolInitial);
    EXPECT_GE(regs_with(h, pools->peer(), kMessageUsage).size(), kMessagePoolInitial);
    EXPECT_EQ(pools->bounce().stats().users, 2u);
    EXPECT_EQ(pools->messages().stats().in_use, 2u);  // both connections' slots are pool entries
    // Each connection's receive slots are in its own entry, on the shared peer.
    std::vector<const LocalMr*> slots;
    for (const auto& r : h.fabric.recvs())
        if (r.before_connect && !r.conn->passive) {
            EXPECT_EQ(r.dst->peer, pools->peer());
            if (std::find(slots.begin(), slots.end(), r.dst) == slots.end()) slots.push_back(r.dst);
        }
    EXPECT_EQ(slots.size(), 2u);
    // Both write through entries of the same pool.
    auto ga = open(*a, "raw");
    auto gb = open(*b, "raw");
    Waiter wa, wb;
    a->write(ga, 0, bytes_of("from a"), wa.done());
    b->write(gb, 64, bytes_of("from b"), wb.done());
    ASSERT_FALSE(wa.get());
    ASSERT_FALSE(wb.get());
    const auto writes = h.fabric.writes();
    ASSERT_EQ(writes.size(), 2u);
    EXPECT_EQ(writes[0].src->peer, pools->peer());
    EXPECT_EQ(writes[1].src->peer, pools->peer());
    EXPECT_NE(writes[0].src, writes[1].src);
    EXPECT_EQ(pools->bounce().stats().l1_hits, 2u);
}

TEST(RdmaPools, TheLastConnectionToCloseDeregistersEverythingAndDeletesThePeer) {
    Harness h({{"raw", PersistenceDomain::cpu_cache}});
    h.listen();
    auto a = h.connect_ok();
    auto b = h.connect_ok();
    auto pools = client_pools(h);
    ASSERT_TRUE(pools);
    const Peer* peer = pools->peer();
    pools.reset();
    a.reset();
    EXPECT_TRUE(client_pools(h));  // b still uses them
    EXPECT_EQ(count_calls(h, "rpma_peer_delete"), 0u);
    b.reset();
    EXPECT_FALSE(client_pools(h));
    // Counted now: the pools' thread may have added entries until they went.
    std::size_t client_regs = 0;
    for (const auto& r : h.fabric.mr_regs()) client_regs += r.peer == peer ? 1 : 0;
    EXPECT_GE(client_regs, kBouncePoolInitial + kMessagePoolInitial);
    EXPECT_EQ(count_calls(h, "rpma_peer_delete"), 1u);
    EXPECT_EQ(count_calls(h, "rpma_mr_dereg"), client_regs);
    h.listener->stop();
    h.listener.reset();
    EXPECT_EQ(count_calls(h, "rpma_mr_dereg"), count_calls(h, "rpma_mr_reg"));
    EXPECT_EQ(count_calls(h, "rpma_peer_delete"), count_calls(h, "rpma_peer_new"));
    EXPECT_EQ(h.fabric.live_objects(), 0u);
}

TEST(RdmaPools, LargeTransfersAreCutIntoChunksOfOneBounceEntryEach) {
    Harness h({{"raw", PersistenceDomain::cpu_cache}});
    h.listen();
    ClientLimits lim;
    lim.chunk = 16 * 1024;
    auto t = h.connect_ok(lim);
    auto g = open(*t, "raw");
    std::vector<std::byte> data(100 * 1024);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::byte>(i * 7);
    Waiter w;
    t->write(g, 1000, data, w.done());
    ASSERT_FALSE(w.get());
    const auto writes = h.fabric.writes();
    ASSERT_EQ(writes.size(), 7u);
    std::size_t total = 0;
    for (std::size_t i = 0; i < writes.size(); ++i) {
        EXPECT_EQ(writes[i].dst_offset, 1000 + i * lim.chunk);
        EXPECT_EQ(writes[i].src_offset, 0u);
        EXPECT_EQ(writes[i].src->size, lim.chunk);  // the pool's entries are one chunk
        EXPECT_LE(writes[i].len, lim.chunk);
        EXPECT_TRUE(is_bounce_entry(h, writes[i].src));
        total += writes[i].len;
    }
    EXPECT_EQ(total, data.size());
    auto& mem = h.targets["raw"]->bytes();
    EXPECT_TRUE(std::equal(data.begin(), data.end(), mem.begin() + 1000));
    std::vector<std::byte> back(data.size());
    Waiter r;
    t->read(g, 1000, back, r.done());
    ASSERT_FALSE(r.get());
    EXPECT_EQ(back, data);
}

TEST(RdmaPools, AnOpWaitsForABounceEntryAndGoesWhenOneComesBack) {
    Harness h({{"raw", PersistenceDomain::cpu_cache}});
    h.listen();
    auto t = h.connect_ok(two_bounce_entries());
    auto g = open(*t, "raw");
    auto pools = client_pools(h);
    ASSERT_TRUE(pools);
    h.fabric.hold_client_completions(true);
    const auto data = pattern(3 * 4096);
    Waiter w;
    t->write(g, 100, data, w.done());
    // One chunk per entry: two are posted, the third waits in the queue.
    ASSERT_TRUE(eventually([&] { return h.fabric.writes().size() == 2; }));
    std::this_thread::sleep_for(20ms);
    EXPECT_EQ(h.fabric.writes().size(), 2u);
    EXPECT_FALSE(ready(w));
    const auto st = pools->bounce().stats();
    EXPECT_GT(st.none_now, 0u);
    EXPECT_EQ(st.in_use, 2u);
    EXPECT_EQ(st.registered, 2u);
    ASSERT_TRUE(finish(h, w));
    EXPECT_FALSE(w.get());
    const auto writes = h.fabric.writes();
    ASSERT_EQ(writes.size(), 3u);
    EXPECT_NE(writes[0].src, writes[1].src);
    EXPECT_TRUE(writes[2].src == writes[0].src || writes[2].src == writes[1].src);
    for (const auto& wr : writes) {
        EXPECT_EQ(wr.src_offset, 0u);
        EXPECT_EQ(wr.len, 4096u);
    }
    EXPECT_EQ(writes[2].dst_offset, 100u + 2 * 4096);
    auto& mem = h.targets["raw"]->bytes();
    EXPECT_TRUE(std::equal(data.begin(), data.end(), mem.begin() + 100));
    // The I/O path never registered: still the two entries of the start.
    EXPECT_EQ(regs_with(h, pools->peer(), kBounceUsage).size(), 2u);
    EXPECT_EQ(pools->bounce().stats().in_use, 0u);
}

TEST(RdmaPools, AReadWaitsTooAndCopiesOutOfItsEntry) {
    Harness h({{"raw", PersistenceDomain::cpu_cache}});
    auto& mem = h.targets["raw"]->bytes();
    const auto data = pattern(3 * 4096);
    std::copy(data.begin(), data.end(), mem.begin() + 8192);
    h.listen();
    auto t = h.connect_ok(two_bounce_entries());
    auto g = open(*t, "raw");
    h.fabric.hold_client_completions(true);
    std::vector<std::byte> out(data.size());
    Waiter w;
    t->read(g, 8192, out, w.done());
    ASSERT_TRUE(eventually([&] { return h.fabric.reads().size() == 2; }));
    ASSERT_TRUE(finish(h, w));
    EXPECT_FALSE(w.get());
    ASSERT_EQ(h.fabric.reads().size(), 3u);
    EXPECT_EQ(out, data);
}

TEST(RdmaPools, AStarvedConnectionTakesAnEntryAnotherConnectionGaveBack) {
    Harness h({{"raw", PersistenceDomain::cpu_cache}});
    h.listen();
    auto a = h.connect_ok(two_bounce_entries());  // its L1 holds one entry
    auto b = h.connect_ok(two_bounce_entries());  // and this one's the other
    auto g = open(*a, "raw");
    h.fabric.hold_client_completions(true);
    const auto data = pattern(2 * 4096);
    Waiter w;
    a->write(g, 0, data, w.done());
    ASSERT_TRUE(eventually([&] { return h.fabric.writes().size() == 1; }));
    std::this_thread::sleep_for(20ms);
    EXPECT_EQ(h.fabric.writes().size(), 1u);
    // b's entry goes back to the global pool. Nothing wakes a (its first
    // chunk's completion is held): its retry timer must find the entry.
    b.reset();
    ASSERT_TRUE(eventually([&] { return h.fabric.writes().size() == 2; }));
    EXPECT_FALSE(ready(w));
    ASSERT_TRUE(finish(h, w));
    EXPECT_FALSE(w.get());
    EXPECT_GT(client_pools(h)->bounce().stats().global_hits, 0u);
}

TEST(RdmaPools, SessionsTakeMessageBuffersFromTheListenersPool) {
    Harness h({{"raw", PersistenceDomain::cpu_cache}});
    ServerLimits lim;
    lim.message_pool.budget = 2;
    lim.message_pool.initial = 1;
    lim.message_pool.floor = 1;
    lim.message_pool.low_water = 0;  // no refill in the background: the accept path's own steps
    h.listen(0, lim);
    // Registered when listening, with the listener's peer, for SEND | RECV.
    const auto at_listen = h.fabric.mr_regs();
    ASSERT_EQ(at_listen.size(), 1u);
    const Peer* server_peer = at_listen[0].peer;
    const SlotLayout layout(kRecvSlots, kSendSlots, kSlotSize);
    EXPECT_EQ(at_listen[0].usage, kMessageUsage);
    EXPECT_EQ(at_listen[0].size, layout.total_bytes());
    // The first session takes that entry: accepting registers nothing.
    auto a = h.connect_ok();
    EXPECT_EQ(regs_with(h, server_peer, kMessageUsage).size(), 1u);
    std::vector<const void*> slot_memory;
    for (const auto& r : h.fabric.recvs())
        if (r.before_connect && r.conn->passive) slot_memory.push_back(r.dst->ptr);
    ASSERT_EQ(slot_memory.size(), kRecvSlots);
    EXPECT_EQ(slot_memory[0], at_listen[0].ptr);
    // The second grows the pool to its budget; the third registers its own.
    auto b = h.connect_ok();
    auto c = h.connect_ok();
    const auto regs = regs_with(h, server_peer, kMessageUsage);
    ASSERT_EQ(regs.size(), 3u);
    for (const auto& r : regs) EXPECT_GE(r.size, layout.total_bytes());
    for (auto* t : {&a, &b, &c}) EXPECT_TRUE((*t)->open_region(proto::OpenRegion{"raw", std::nullopt, false}));
    a.reset();
    b.reset();
    c.reset();
    h.listener->stop();
    h.listener.reset();
    EXPECT_EQ(count_calls(h, "rpma_mr_dereg"), count_calls(h, "rpma_mr_reg"));
    EXPECT_EQ(h.fabric.live_objects(), 0u);
}

TEST(RdmaPools, AReturnedSessionBufferServesTheNextSession) {
    Harness h({{"raw", PersistenceDomain::cpu_cache}});
    h.listen();
    const std::size_t at_listen = h.fabric.mr_regs().size();
    EXPECT_EQ(at_listen, kServerMessagePoolInitial);
    for (int i = 0; i < 3 * static_cast<int>(kServerMessagePoolInitial); ++i) {
        auto t = h.connect_ok();
        ASSERT_TRUE(t);
        t.reset();
        // The session gives its entry back once its connection is deleted.
        ASSERT_TRUE(eventually([&] { return !h.listener->send(static_cast<std::uint64_t>(i + 1), bytes_of("x")); }));
    }
    const Peer* server_peer = h.fabric.mr_regs()[0].peer;
    EXPECT_EQ(regs_with(h, server_peer, kMessageUsage).size(), kServerMessagePoolInitial);
}

} // namespace
} // namespace rpm::rdma::test
