// The RDMA client transport against the fake fabric and the real listener:
// every Api argument on the data path, the flush methods, ordering,
// queueing, and failure.
#include "support.hpp"

#include <algorithm>
#include <optional>
#include <thread>

namespace rpm::rdma::test {
namespace {

bool is_op_ctx(const void* ctx) {
    const auto v = reinterpret_cast<std::uint64_t>(ctx);
    return v != 0 && (v & kRecvTag) == 0;
}

struct Order {
    std::mutex mu;
    std::vector<std::pair<int, Result<void>>> seen;
    client::Done cb(int id) {
        return [this, id](Result<void> r) {
            std::lock_guard lock(mu);
            seen.emplace_back(id, std::move(r));
        };
    }
    std::size_t size() {
        std::lock_guard lock(mu);
        return seen.size();
    }
};

TEST(RdmaClient, ConnectRegistersBuffersAndPostsReceivesBeforeConnecting) {
    Harness h({{"raw", PersistenceDomain::cpu_cache}});
    h.listen();
    auto t = h.connect_ok();
    ASSERT_TRUE(t);
    EXPECT_EQ(t->scheme(), Scheme::rdma);
    EXPECT_EQ(t->profile_json(), R"({"profile":"test"})");
    // The device's pools, made by its first connection with the client's own
    // peer: bounce entries of one chunk, message buffers of one slot layout.
    auto pools = client_pools(h);
    ASSERT_TRUE(pools);
    const SlotLayout layout(kRecvSlots, kSendSlots, kSlotSize);
    const auto bounce = regs_with(h, pools->peer(), kBounceUsage);
    ASSERT_EQ(bounce.size(), kBouncePoolInitial);
    for (const auto& r : bounce) {
        EXPECT_EQ(r.size, kMaxChunk);
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(r.ptr) % 4096, 0u);
    }
    const auto msgs = regs_with(h, pools->peer(), kMessageUsage);
    ASSERT_EQ(msgs.size(), kMessagePoolInitial);
    for (const auto& r : msgs) EXPECT_EQ(r.size, layout.total_bytes());
    std::size_t client_regs = 0;
    for (const auto& r : h.fabric.mr_regs()) client_regs += r.peer == pools->peer() ? 1 : 0;
    EXPECT_EQ(client_regs, bounce.size() + msgs.size());  // nothing else, and nothing per connection
    EXPECT_EQ(pools->bounce().stats().registered, kBouncePoolInitial);
    EXPECT_EQ(pools->bounce().stats().users, 1u);
    const auto reqs = h.fabric.conn_reqs();
    ASSERT_EQ(reqs.size(), 1u);
    EXPECT_EQ(reqs[0].addr, kHost);
    EXPECT_EQ(reqs[0].port, std::to_string(h.listener->port()));
    EXPECT_EQ(reqs[0].cfg.sq, kSqDepth);
    EXPECT_EQ(reqs[0].cfg.rq, kRecvSlots);
    EXPECT_EQ(reqs[0].cfg.cq, kSqDepth + kRecvSlots);
    EXPECT_EQ(reqs[0].cfg.timeout, 5000);
    std::vector<fake::RecvCall> early;
    for (const auto& r : h.fabric.recvs())
        if (r.before_connect && !r.conn->passive) early.push_back(r);
    ASSERT_EQ(early.size(), kRecvSlots);
    for (std::uint32_t i = 0; i < kRecvSlots; ++i) {
        EXPECT_EQ(early[i].offset, layout.recv_offset(i));
        EXPECT_EQ(early[i].len, kSlotSize);
        EXPECT_EQ(reinterpret_cast<std::uint64_t>(early[i].ctx), kRecvTag | i);
        EXPECT_EQ(early[i].dst->usage, kMessageUsage);
        EXPECT_EQ(early[i].dst->peer, pools->peer());
        EXPECT_EQ(early[i].dst, early[0].dst);  // one pool entry holds every slot
    }
    const bool pooled = std::any_of(msgs.begin(), msgs.end(), [&](const auto& r) { return r.ptr == early[0].dst->ptr; });
    EXPECT_TRUE(pooled) << "the receive slots are not in a message-pool entry";
}

// A lone write goes direct (client_direct.cpp): signaled, rung by its own
// post. One behind an operation on the wire goes through the op queue:
// signaled, its doorbell deferred to the round's ring, its op's seq as wr_id.
TEST(RdmaClient, WritePostsRpmaWriteFromTheBounceBuffer) {
    Harness h({{"raw", PersistenceDomain::cpu_cache}});
    h.listen();
    auto t = h.connect_ok();
    auto g = open(*t, "raw");
    auto& mem = h.targets["raw"]->bytes();
    const auto check = [&](const fake::WriteCall& c, std::uint64_t at, const std::vector<std::byte>& data) {
        EXPECT_FALSE(c.conn->passive);
        EXPECT_EQ(c.dst_offset, at);
        EXPECT_EQ(c.dst->size, 1u << 20);
        EXPECT_EQ(c.src->usage, kBounceUsage);
        EXPECT_EQ(c.src->size, kMaxChunk);
        EXPECT_TRUE(is_bounce_entry(h, c.src));
        EXPECT_EQ(c.src_offset, 0u);
        EXPECT_EQ(c.len, data.size());
        EXPECT_EQ(c.data, data);
        EXPECT_TRUE(std::equal(data.begin(), data.end(), mem.begin() + static_cast<std::ptrdiff_t>(at)));
    };
    const auto data = bytes_of("persistent bytes");
    Waiter w;
    t->write(g, 4096, data, w.done());
    ASSERT_FALSE(w.get());
    auto writes = h.fabric.writes();
    ASSERT_EQ(writes.size(), 1u);
    check(writes[0], 4096, data);
    EXPECT_EQ(writes[0].flags, kCompletionAlways);
    EXPECT_EQ(writes[0].ctx, direct_ctx());

    DirectHeld held(h, *t, g);
    const auto queued = bytes_of("queued bytes");
    Waiter q;
    t->write(g, 8192, queued, q.done());
    ASSERT_TRUE(eventually([&] { return h.fabric.writes().size() == 2; }));
    ASSERT_FALSE(held.release());
    ASSERT_FALSE(q.get());
    writes = h.fabric.writes();
    check(writes[1], 8192, queued);
    EXPECT_EQ(writes[1].flags, kCompletionAlways | kDeferDoorbell);
    EXPECT_TRUE(is_op_ctx(writes[1].ctx));
    EXPECT_NE(writes[1].ctx, direct_ctx());
}

TEST(RdmaClient, ReadPostsRpmaReadIntoTheBounceBufferAndCopiesOut) {
    Harness h({{"raw", PersistenceDomain::cpu_cache}});
    auto& mem = h.targets["raw"]->bytes();
    for (std::size_t i = 0; i < 256; ++i) mem[128 + i] = static_cast<std::byte>(i);
    h.listen();
    auto t = h.connect_ok();
    auto g = open(*t, "raw");
    const auto check = [&](const fake::ReadCall& r, std::uint64_t at, const std::vector<std::byte>& out) {
        EXPECT_EQ(r.dst->usage, kBounceUsage);
        EXPECT_TRUE(is_bounce_entry(h, r.dst));
        EXPECT_EQ(r.dst_offset, 0u);
        EXPECT_EQ(r.src_offset, at);
        EXPECT_EQ(r.len, out.size());
        EXPECT_TRUE(std::equal(out.begin(), out.end(), mem.begin() + static_cast<std::ptrdiff_t>(at)));
    };
    std::vector<std::byte> out(64);
    Waiter w;
    t->read(g, 128, out, w.done());
    ASSERT_FALSE(w.get());
    auto reads = h.fabric.reads();
    ASSERT_EQ(reads.size(), 1u);
    check(reads[0], 128, out);
    EXPECT_EQ(reads[0].flags, kCompletionAlways);
    EXPECT_EQ(reads[0].ctx, direct_ctx());

    DirectHeld held(h, *t, g);  // reads()[1]
    std::vector<std::byte> queued(32);
    Waiter q;
    t->read(g, 256, queued, q.done());
    ASSERT_TRUE(eventually([&] { return h.fabric.reads().size() == 3; }));
    ASSERT_FALSE(held.release());
    ASSERT_FALSE(q.get());
    reads = h.fabric.reads();
    check(reads[2], 256, queued);
    EXPECT_EQ(reads[2].flags, kCompletionAlways | kDeferDoorbell);
    EXPECT_TRUE(is_op_ctx(reads[2].ctx));
    EXPECT_NE(reads[2].ctx, direct_ctx());
}

// Which atomic write ran is visible: the method the connection's device
// allows, and the completions it reported as native atomic writes.
TEST(RdmaClient, AtomicWriteStatsSayWhichKindWentOnTheWire) {
    for (const bool native : {false, true}) {
        Harness h({{"raw", PersistenceDomain::cpu_cache}});
        h.fabric.native_atomic_write = native;
        h.listen();
        auto t = h.connect_ok();
        auto g = open(*t, "raw");
        EXPECT_EQ(t->atomic_write_stats().kind, native ? AtomicWriteKind::native : AtomicWriteKind::fenced_write);
        for (std::uint64_t i = 0; i < 3; ++i) {
            Waiter ok;
            t->atomic_write(g, 8 * i, i, ok.done());
            ASSERT_FALSE(ok.get());
        }
        EXPECT_EQ(t->atomic_write_stats().native_completed, native ? 3u : 0u) << "native " << native;
    }
}

// A doorbell that fails leaves part of a chain unposted: no completion
// would finish those ops, so the connection fails (pump_locked), whether
// the round's ring or the one in front of an atomic write failed.
TEST(RdmaClient, AFailedDoorbellFailsTheConnection) {
    for (const bool atomic : {false, true}) {
        Harness h({{"raw", PersistenceDomain::cpu_cache}});
        h.listen();
        auto t = h.connect_ok();
        auto g = open(*t, "raw");
        // A lone write would go direct, rung by its own post: queue it.
        std::optional<DirectHeld> held;
        if (!atomic) held.emplace(h, *t, g);
        h.fabric.fail_next("ring", kErrProvider);
        Waiter first;
        if (atomic)
            t->atomic_write(g, 8, 1, first.done());
        else
            t->write(g, 0, bytes_of("lost?"), first.done());
        if (held) (void)held->release();  // the connection failed under it
        (void)first.get();  // the op itself may have completed before the failure was seen
        Waiter later;
        t->write(g, 64, bytes_of("after"), later.done());
        EXPECT_EQ(later.get(), errc::io_error) << (atomic ? "atomic" : "write");
    }
}

TEST(RdmaClient, AtomicWriteIsEightAlignedBytes) {
    Harness h({{"raw", PersistenceDomain::cpu_cache}});
    h.listen();
    auto t = h.connect_ok();
    auto g = open(*t, "raw");
    Waiter ok;
    t->atomic_write(g, 16, 0x1122334455667788ull, ok.done());
    ASSERT_FALSE(ok.get());
    auto atomics = h.fabric.atomics();
    ASSERT_EQ(atomics.size(), 1u);
    EXPECT_EQ(atomics[0].dst_offset, 16u);
    EXPECT_EQ(atomics[0].value, 0x1122334455667788ull);
    EXPECT_EQ(atomics[0].flags, kCompletionAlways);
    EXPECT_TRUE(is_op_ctx(atomics[0].ctx));
    EXPECT_EQ(h.targets["raw"]->bytes()[16], std::byte{0x88});  // little-endian on the wire
    Waiter bad;
    t->atomic_write(g, 12, 1, bad.done());
    EXPECT_EQ(bad.get(), errc::misaligned);
    EXPECT_EQ(h.fabric.atomics().size(), 1u);  // nothing posted
}

TEST(RdmaClient, ReadAfterWriteFlushIsOnePersistentRpmaFlush) {
    Harness h({{"raw", PersistenceDomain::cpu_cache}});
    h.listen();
    auto t = h.connect_ok();
    auto g = open(*t, "raw");
    ASSERT_EQ(g.method, flush::Method::read_after_write);
    const auto applied = h.fabric.applied_peer_cfgs();
    ASSERT_EQ(applied.size(), 1u);
    EXPECT_FALSE(applied[0].first->passive);
    EXPECT_TRUE(applied[0].second);
    const std::vector<proto::Range> ranges{{0, 100}, {4096, 64}};
    Waiter w;
    t->flush(g, ranges, w.done());
    ASSERT_FALSE(w.get());
    const auto flushes = h.fabric.flushes();
    ASSERT_EQ(flushes.size(), 1u);
    EXPECT_EQ(flushes[0].type, kFlushPersistent);
    EXPECT_EQ(flushes[0].dst_offset, 4096u);
    EXPECT_EQ(flushes[0].len, 64u);
    EXPECT_EQ(flushes[0].flags, kCompletionAlways | kDeferDoorbell);
    EXPECT_TRUE(flushes[0].direct_write);
    EXPECT_TRUE(is_op_ctx(flushes[0].ctx));
    EXPECT_TRUE(h.targets["raw"]->persists().empty());  // no server CPU involved
}

TEST(RdmaClient, TheReadAfterWriteStaysInsideTheRegion) {
    Harness h({{"raw", PersistenceDomain::cpu_cache, 4096}});
    h.listen();
    auto t = h.connect_ok();
    auto g = open(*t, "raw");
    const proto::Range tail{4092, 4};  // the flush reads 8 bytes: not at 4092
    Waiter w;
    t->flush(g, std::span(&tail, 1), w.done());
    ASSERT_FALSE(w.get());
    ASSERT_EQ(h.fabric.flushes().size(), 1u);
    EXPECT_EQ(h.fabric.flushes()[0].dst_offset, 4088u);
    Waiter empty;
    t->flush(g, {}, empty.done());
    ASSERT_FALSE(empty.get());
    EXPECT_EQ(h.fabric.flushes()[1].dst_offset, 0u);
}

TEST(RdmaClient, SendFlushSendsAFlushFrameAndWaitsForThePersistStep) {
    Harness h({{"adr", PersistenceDomain::memory_controller}});
    h.listen();
    auto t = h.connect_ok();
    auto g = open(*t, "adr");
    ASSERT_EQ(g.method, flush::Method::send_flush) << g.reason;
    EXPECT_TRUE(h.fabric.applied_peer_cfgs().empty());
    const std::vector<proto::Range> ranges{{0, 100}, {4096, 64}};
    Waiter w;
    t->flush(g, ranges, w.done());
    ASSERT_FALSE(w.get());
    EXPECT_TRUE(h.fabric.flushes().empty());
    int flush_frames = 0;
    for (const auto& s : h.fabric.sends()) {
        if (s.passive) continue;
        // Signaled or not (PersistChain.RequestSendsAreSignaledOneInSignalEvery), always deferred.
        EXPECT_TRUE(s.flags == (kCompletionAlways | kDeferDoorbell) || s.flags == (kCompletionOnError | kDeferDoorbell))
            << s.flags;
        EXPECT_EQ(s.src->usage, kMessageUsage);
        auto f = parse_frame(s.bytes, kSlotSize);
        ASSERT_TRUE(f);
        if (f->first.type != proto::Type::flush) continue;
        ++flush_frames;
        auto body = proto::decode_flush(f->second);
        ASSERT_TRUE(body);
        EXPECT_EQ(body->region, g.id);
        ASSERT_EQ(body->ranges.size(), 2u);
        EXPECT_EQ(body->ranges[1].offset, 4096u);
        EXPECT_EQ(body->ranges[1].length, 64u);
    }
    EXPECT_EQ(flush_frames, 1);
    const auto persists = h.targets["adr"]->persists();
    ASSERT_EQ(persists.size(), 1u);
    EXPECT_EQ(persists[0].step, flush::ServerPersist::cache_flush_sfence);
    EXPECT_EQ(persists[0].ranges.size(), 2u);
}

TEST(RdmaClient, ServerErrorsReachTheFlushCallback) {
    Harness h({{"adr", PersistenceDomain::memory_controller}});
    h.listen();
    auto t = h.connect_ok();
    auto g = open(*t, "adr");
    const std::vector<proto::Range> outside{{(1u << 20) - 8, 64}};
    Waiter w;
    t->flush(g, outside, w.done());
    EXPECT_EQ(w.get(), errc::out_of_range);
    // The server's answer (a send_flush flush is a request), not a failed connection.
    EXPECT_TRUE(detail_has(w.result(), "request over rdma://"));
    EXPECT_TRUE(detail_has(w.result(), "refused by the server"));
    EXPECT_TRUE(detail_lacks(w.result(), "the connection failed"));
}

TEST(RdmaClient, AFlushIsPostedBehindTheWritesAndCompletesAfterThem) {
    Harness h({{"raw", PersistenceDomain::cpu_cache}});
    h.listen();
    auto t = h.connect_ok();
    auto g = open(*t, "raw");
    h.fabric.hold_client_completions(true);
    Order order;
    const auto data = bytes_of("0123456789abcdef");
    t->write(g, 0, data, order.cb(1));
    t->write(g, 64, data, order.cb(2));
    const proto::Range r{64, 16};
    t->flush(g, std::span(&r, 1), order.cb(3));
    std::vector<std::string> posted;
    for (const auto& c : h.fabric.calls())
        if (c == "rpma_write" || c == "rpma_flush") posted.push_back(c);
    EXPECT_EQ(posted, (std::vector<std::string>{"rpma_write", "rpma_write", "rpma_flush"}));
    EXPECT_EQ(order.size(), 0u);
    h.fabric.release_held();
    ASSERT_TRUE(eventually([&] { return order.size() == 3; }));
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(order.seen[static_cast<std::size_t>(i)].first, i + 1);
        EXPECT_TRUE(ok(order.seen[static_cast<std::size_t>(i)].second));
    }
}

TEST(RdmaClient, AFailingRpmaWriteFailsItsCallbackOnly) {
    Harness h({{"raw", PersistenceDomain::cpu_cache}});
    h.listen();
    auto t = h.connect_ok();
    auto g = open(*t, "raw");
    h.fabric.fail_next("rpma_write", kErrProvider);
    const auto data = bytes_of("x");
    Waiter bad;
    t->write(g, 0, data, bad.done());
    EXPECT_EQ(bad.get(), errc::io_error);
    Waiter good;
    t->write(g, 0, data, good.done());
    EXPECT_FALSE(good.get());
}

TEST(RdmaClient, AFailedCompletionFailsTheConnection) {
    Harness h({{"raw", PersistenceDomain::cpu_cache}});
    h.listen();
    auto t = h.connect_ok();
    auto g = open(*t, "raw");
    h.fabric.fail_wc_next("write", IBV_WC_REM_ACCESS_ERR);
    const auto data = bytes_of("x");
    Waiter bad;
    t->write(g, 0, data, bad.done());
    EXPECT_EQ(bad.get(), errc::io_error);
    Waiter after;
    t->write(g, 0, data, after.done());
    EXPECT_EQ(after.get(), errc::io_error);  // RC: the queue pair is in the error state
    EXPECT_TRUE(detail_has(after.result(), "the connection failed"));
    EXPECT_TRUE(detail_has(after.result(), "work request failed"));
}

TEST(RdmaClient, AConnectionDropFailsEveryPendingOperation) {
    Harness h({{"raw", PersistenceDomain::cpu_cache}});
    h.listen();
    auto t = h.connect_ok();
    auto g = open(*t, "raw");
    h.fabric.hold_client_completions(true);
    Order order;
    const auto data = bytes_of("abc");
    t->write(g, 0, data, order.cb(1));
    t->atomic_write(g, 8, 7, order.cb(2));
    const proto::Range r{0, 3};
    t->flush(g, std::span(&r, 1), order.cb(3));
    std::vector<std::byte> in(16);
    std::promise<Result<std::size_t>> recv_done;
    t->recv(in, [&](Result<std::size_t> got) { recv_done.set_value(std::move(got)); });
    h.fabric.drop_all();
    ASSERT_TRUE(eventually([&] { return order.size() == 3; }));
    const std::string where = "over rdma://" + std::string(kHost) + ":" + std::to_string(h.listener->port());
    const char* names[] = {"write", "atomic_write", "flush"};
    for (const auto& [id, res] : order.seen) {
        EXPECT_EQ(code_of(res), errc::io_error) << id;
        // What failed, where, and that the connection went (not the server's answer).
        EXPECT_TRUE(detail_has(res, std::string(names[id - 1]) + " " + where + ": the connection failed: ")) << id;
        EXPECT_TRUE(detail_has(res, "connection lost")) << id;
    }
    auto f = recv_done.get_future();
    ASSERT_EQ(f.wait_for(5s), std::future_status::ready);
    const auto rr = f.get();
    EXPECT_EQ(code_of(rr), errc::io_error);
    EXPECT_TRUE(detail_has(rr, "the connection failed"));
    Waiter later;
    t->write(g, 0, data, later.done());
    EXPECT_EQ(later.get(), errc::io_error);
    EXPECT_TRUE(detail_has(later.result(), "the connection failed"));
}

TEST(RdmaClient, CloseFailsPendingOperationsExactlyOnce) {
    Harness h({{"raw", PersistenceDomain::cpu_cache}});
    h.listen();
    auto t = h.connect_ok();
    auto g = open(*t, "raw");
    h.fabric.hold_client_completions(true);
    Order order;
    const auto data = bytes_of("abc");
    for (int i = 0; i < 4; ++i) t->write(g, 0, data, order.cb(i));
    t->close();
    ASSERT_TRUE(eventually([&] { return order.size() == 4; }));
    h.fabric.release_held();
    std::this_thread::sleep_for(20ms);
    EXPECT_EQ(order.size(), 4u);
    for (const auto& [id, res] : order.seen) EXPECT_EQ(code_of(res), errc::io_error) << id;
}

// As tcp://'s: close() returns once every pending operation's callback has
// run (the Replicator lets go of what its callbacks touch right after
// closing its members). The first callback takes its time, so that a
// close() that only leaves them to the I/O thread returns before it ends.
TEST(RdmaClient, CloseReturnsOnceThePendingCallbacksHaveRun) {
    Harness h({{"raw", PersistenceDomain::cpu_cache}});
    h.listen();
    auto t = h.connect_ok();
    auto g = open(*t, "raw");
    h.fabric.hold_client_completions(true);
    std::atomic<int> ran{0};
    const auto data = bytes_of("abc");
    t->write(g, 0, data, [&](Result<void>) {
        std::this_thread::sleep_for(200ms);
        ++ran;
    });
    for (int i = 0; i < 3; ++i) t->write(g, 8, data, [&](Result<void>) { ++ran; });
    t->close();
    EXPECT_EQ(ran.load(), 4) << "close() returned before the pending operations' callbacks had run";
    h.fabric.release_held();
    EXPECT_TRUE(eventually([&] { return ran.load() == 4; }));
}

// A callback may close its own connection: it does not wait for itself,
// and the other pending callbacks run right after it, on the same thread.
TEST(RdmaClient, ACallbackClosesItsOwnConnection) {
    Harness h({{"raw", PersistenceDomain::cpu_cache}});
    h.listen();
    auto t = h.connect_ok();
    auto g = open(*t, "raw");
    h.fabric.hold_client_completions(true);
    const auto data = bytes_of("abc");
    std::atomic<bool> closed{false};
    std::atomic<std::thread::id> first{}, second{};
    Waiter last;
    t->write(g, 0, data, [&](Result<void>) {
        first = std::this_thread::get_id();
        t->close();
        closed = true;
    });
    t->write(g, 8, data, [&, d = last.done()](Result<void> r) {
        second = std::this_thread::get_id();
        d(std::move(r));
    });
    h.fabric.release_held();
    // Its completion may have come in the same poll as the first's: done
    // either way, but called back.
    EXPECT_NE(last.get(5s), std::make_error_code(std::errc::timed_out)) << "the second operation never called back";
    EXPECT_TRUE(closed);
    EXPECT_EQ(first.load(), second.load());
}

TEST(RdmaClient, OperationsAfterCloseFailOnTheIoThread) {
    Harness h({{"raw", PersistenceDomain::cpu_cache}});
    h.listen();
    auto t = h.connect_ok();
    auto g = open(*t, "raw");
    t->close();
    std::promise<std::pair<Result<void>, std::thread::id>> p;
    t->write(g, 0, bytes_of("late"), [&](Result<void> r) { p.set_value({std::move(r), std::this_thread::get_id()}); });
    auto f = p.get_future();
    ASSERT_EQ(f.wait_for(5s), std::future_status::ready);
    auto [r, id] = f.get();
    EXPECT_EQ(code_of(r), errc::io_error);
    EXPECT_NE(id, std::this_thread::get_id());
    auto g2 = t->open_region(proto::OpenRegion{"raw", std::nullopt, false});
    ASSERT_FALSE(g2);
    EXPECT_EQ(g2.error(), errc::io_error);
}

TEST(RdmaClient, RequestsInFlightAreBoundedBySendSlots) {
    Harness h({{"adr", PersistenceDomain::memory_controller}});
    h.listen();
    auto t = h.connect_ok();
    auto g = open(*t, "adr");
    // No reply comes (a request's send may go unsignaled: the reply frees
    // its slot), so the slots stay taken.
    h.targets["adr"]->hold_persists(true);
    Order order;
    const proto::Range r{0, 8};
    for (int i = 0; i < static_cast<int>(kSendSlots) + 3; ++i) t->flush(g, std::span(&r, 1), order.cb(i));
    auto client_sends = [&] {
        std::size_t n = 0;
        for (const auto& s : h.fabric.sends()) n += s.passive ? 0 : 1;
        return n;
    };
    const std::size_t before = 2;  // Auth and OpenRegion (whose slot frees when its op retires)
    ASSERT_TRUE(eventually([&] { return client_sends() == before + kSendSlots; }));
    std::this_thread::sleep_for(20ms);
    EXPECT_EQ(client_sends(), before + kSendSlots);
    h.targets["adr"]->hold_persists(false);
    ASSERT_TRUE(eventually([&] { return order.size() == kSendSlots + 3; }));
    EXPECT_EQ(client_sends(), before + kSendSlots + 3);
    for (const auto& [id, res] : order.seen) EXPECT_TRUE(ok(res)) << id;
}

TEST(RdmaClient, OperationsQueueWhenTheSendQueueIsFull) {
    Harness h({{"raw", PersistenceDomain::cpu_cache}});
    h.listen();
    ClientLimits lim;
    lim.sq_depth = 2;
    auto t = h.connect_ok(lim);
    auto g = open(*t, "raw");
    h.fabric.hold_client_completions(true);
    Order order;
    for (int i = 0; i < 5; ++i) t->atomic_write(g, static_cast<std::uint64_t>(8 * i), 1, order.cb(i));
    EXPECT_EQ(h.fabric.atomics().size(), 2u);
    ASSERT_TRUE(eventually([&] {
        h.fabric.release_held();
        return order.size() == 5;
    }));
    EXPECT_EQ(h.fabric.atomics().size(), 5u);
    for (int i = 0; i < 5; ++i) EXPECT_EQ(order.seen[static_cast<std::size_t>(i)].first, i);
}

TEST(RdmaClient, EmptyWritesAndUnknownGrants) {
    Harness h({{"raw", PersistenceDomain::cpu_cache}});
    h.listen();
    auto t = h.connect_ok();
    auto g = open(*t, "raw");
    Waiter empty;
    t->write(g, 0, {}, empty.done());
    EXPECT_FALSE(empty.get());
    EXPECT_TRUE(h.fabric.writes().empty());
    proto::RegionGrant unknown = g;
    unknown.id = 99;
    Waiter bad;
    t->write(unknown, 0, bytes_of("x"), bad.done());
    EXPECT_EQ(bad.get(), errc::invalid_argument);
}

TEST(RdmaClient, CallbacksRunOnTheIoThreadEvenForImmediateErrors) {
    Harness h({{"raw", PersistenceDomain::cpu_cache}});
    h.listen();
    auto t = h.connect_ok();
    auto g = open(*t, "raw");
    std::promise<std::thread::id> a, b;
    t->atomic_write(g, 3, 1, [&](Result<void>) { a.set_value(std::this_thread::get_id()); });
    t->write(g, 0, bytes_of("y"), [&](Result<void>) { b.set_value(std::this_thread::get_id()); });
    const auto ta = a.get_future().get();
    const auto tb = b.get_future().get();
    EXPECT_NE(ta, std::this_thread::get_id());
    EXPECT_EQ(ta, tb);
}

} // namespace
} // namespace rpm::rdma::test
