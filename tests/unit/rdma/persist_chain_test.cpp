// A persist's writes and flush are queued together (ClientConn::persist) and
// posted as one chain, one doorbell (kDeferDoorbell, then ring); the write
// right in front of the flush is posted without a completion of its own
// (kCompletionOnError): the flush's completion retires it
// (OpQueue::retire_unsignaled_before). Every work request's flags, the
// doorbell, the credits coming back, and the failures.
#include "support.hpp"

#include <algorithm>

namespace rpm::rdma::test {
namespace {

std::error_code persist(client::Transport& t, const proto::RegionGrant& g, std::vector<proto::Slice> slices) {
    Waiter w;
    t.persist(g, slices, w.done());
    return w.get();
}

// The queue's chain (a one-slice persist on an idle connection goes
// direct: direct_test.cpp).
ClientLimits queue_only(bool direct = false) {
    ClientLimits lim;
    lim.direct = direct;
    return lim;
}

constexpr int kQueuedUnsignaled = kCompletionOnError | kDeferDoorbell;
constexpr int kQueuedSignaled = kCompletionAlways | kDeferDoorbell;

// The calls from the first write on up to the first doorbell after it.
std::vector<std::string> first_chain(const std::vector<std::string>& calls) {
    auto it = std::find(calls.begin(), calls.end(), "rpma_write");
    std::vector<std::string> chain;
    for (; it != calls.end() && *it != "ring"; ++it) chain.push_back(*it);
    return chain;
}

std::size_t count(const std::vector<std::string>& v, const std::string& s) {
    return static_cast<std::size_t>(std::count(v.begin(), v.end(), s));
}

TEST(PersistChain, ReadAfterWriteTheWriteBeforeTheFlushIsUnsignaled) {
    OneRegion one({"raw", PersistenceDomain::cpu_cache}, queue_only());
    auto& [h, t, g] = one;
    ASSERT_EQ(g.method, flush::Method::read_after_write);
    const auto rec = bytes_of("a record");
    ASSERT_FALSE(persist(*t, g, {{512, rec}}));
    const auto writes = h.fabric.writes();
    ASSERT_EQ(writes.size(), 1u);
    EXPECT_EQ(writes[0].flags, kQueuedUnsignaled);
    EXPECT_EQ(writes[0].dst_offset, 512u);
    EXPECT_EQ(writes[0].data, rec);
    const auto flushes = h.fabric.flushes();
    ASSERT_EQ(flushes.size(), 1u);
    EXPECT_EQ(flushes[0].flags, kQueuedSignaled);
    // One doorbell for the write and the flush.
    EXPECT_EQ(first_chain(h.fabric.calls()), (std::vector<std::string>{"rpma_write", "rpma_flush"}));
    EXPECT_EQ(flushes[0].dst_offset, 512u);
    EXPECT_EQ(flushes[0].len, rec.size());
    EXPECT_TRUE(std::equal(rec.begin(), rec.end(), h.targets["raw"]->bytes().begin() + 512));
}

TEST(PersistChain, SendFlushTheWriteBeforeTheFlushFrameIsUnsignaled) {
    OneRegion one({"adr", PersistenceDomain::memory_controller}, queue_only());
    auto& [h, t, g] = one;
    ASSERT_EQ(g.method, flush::Method::send_flush);
    const auto sends_before = h.fabric.sends().size();
    ASSERT_FALSE(persist(*t, g, {{64, bytes_of("record")}}));
    ASSERT_EQ(h.fabric.writes().size(), 1u);
    EXPECT_EQ(h.fabric.writes()[0].flags, kQueuedUnsignaled);
    const auto sends = h.fabric.sends();
    ASSERT_EQ(sends.size(), sends_before + 2);  // the Flush frame, and the server's Response
    // The request finishes with its reply: its send needs no completion
    // either (RequestSendsAreSignaledOneInSignalEvery).
    EXPECT_EQ(sends[sends_before].flags, kQueuedUnsignaled);
    // The Flush frame rides the write's doorbell (the fake delivers it at
    // once, so the server's answer may be in the chain's span too).
    const auto chain = first_chain(h.fabric.calls());
    ASSERT_FALSE(chain.empty());
    EXPECT_EQ(count(chain, "rpma_write"), 1u);
    EXPECT_GE(count(chain, "rpma_send"), 1u);
    EXPECT_FALSE(sends[sends_before].passive);
    ASSERT_EQ(h.targets["adr"]->persists().size(), 1u);
}

TEST(PersistChain, OnlyTheLastOfSeveralWritesIsUnsignaled) {
    OneRegion one({"raw", PersistenceDomain::cpu_cache});
    auto& [h, t, g] = one;
    const auto a = bytes_of("first"), b = bytes_of("second"), c = bytes_of("commit!!");
    ASSERT_FALSE(persist(*t, g, {{0, a}, {4096, b}, {128, c}}));
    const auto writes = h.fabric.writes();
    ASSERT_EQ(writes.size(), 3u);
    EXPECT_EQ(writes[0].flags, kQueuedSignaled);
    EXPECT_EQ(writes[1].flags, kQueuedSignaled);
    EXPECT_EQ(writes[2].flags, kQueuedUnsignaled);
    EXPECT_EQ(writes[2].dst_offset, 128u);
    EXPECT_EQ(first_chain(h.fabric.calls()),
              (std::vector<std::string>{"rpma_write", "rpma_write", "rpma_write", "rpma_flush"}));
}

TEST(PersistChain, CreditsComeBackThroughTheFlushesCompletions) {
    ClientLimits lim;
    lim.sq_depth = 4;  // an unsignaled write never retired would use them up at once
    OneRegion one({"raw", PersistenceDomain::cpu_cache}, lim);
    auto& [h, t, g] = one;
    ASSERT_TRUE(t);
    const auto rec = bytes_of("again and again");
    for (int i = 0; i < 50; ++i) ASSERT_FALSE(persist(*t, g, {{static_cast<std::uint64_t>(i) * 64, rec}})) << i;
    EXPECT_EQ(h.fabric.writes().size(), 50u);
    // Several persists in flight at once, each retired by its own flush.
    std::vector<Waiter> ws(20);
    std::vector<proto::Slice> slices(ws.size());
    for (std::size_t i = 0; i < ws.size(); ++i) {
        slices[i] = {8192 + i * 64, rec};
        t->persist(g, std::span(&slices[i], 1), ws[i].done());
    }
    for (auto& w : ws) EXPECT_FALSE(w.get());
}

// The Flush frame of a send_flush persist finishes with the server's reply,
// so its send goes unsignaled too, but for one work request in
// min(kSignalEvery, sq_depth / 2) of those that go unsignaled: that
// completion gives back their send-queue credits. With 8 credits and two
// work requests a persist, 40 persists stall unless it does. Through the
// queue and direct alike (client_direct.cpp): a direct persist's send goes
// unsignaled by the same count (OpQueue::may_go_unsignaled), its two
// credits waiting with the queue's (OpQueue::defer_direct).
TEST(PersistChain, RequestSendsAreSignaledOneInSignalEvery) {
    for (const bool direct : {false, true}) {
        for (const std::uint32_t depth : {8u, kSqDepth}) {
            ClientLimits lim = queue_only(direct);
            lim.sq_depth = depth;
            OneRegion one({"adr", PersistenceDomain::memory_controller}, lim);
            auto& [h, t, g] = one;
            ASSERT_TRUE(t);
            ASSERT_EQ(g.method, flush::Method::send_flush);
            const auto rec = bytes_of("again and again");
            for (int i = 0; i < 40; ++i)
                ASSERT_FALSE(persist(*t, g, {{static_cast<std::uint64_t>(i) * 64, rec}})) << depth << " " << i;
            const auto every = std::min<std::uint32_t>(depth / 2, kSignalEvery);
            const std::string what = (direct ? "direct, depth " : "queued, depth ") + std::to_string(depth);
            // Every request of the connection (Auth, OpenRegion, then the
            // Flush frames, each behind its persist's unsignaled write) goes
            // signaled once the unsignaled entries waiting for a completion
            // would reach `every`; that completion gives all of them back.
            std::size_t waiting = 0, signaled = 0, flushes = 0;
            for (const auto& s : h.fabric.sends()) {
                if (s.passive) continue;
                auto f = parse_frame(s.bytes, kSlotSize);
                ASSERT_TRUE(f);
                if (f->first.type == proto::Type::flush) {
                    ++flushes;
                    waiting += 1;  // the persist's write
                }
                if (waiting + 1 < every) {
                    EXPECT_EQ(s.flags, kQueuedUnsignaled) << what << ", flush " << flushes;
                    waiting += 1;
                } else {
                    EXPECT_EQ(s.flags, kQueuedSignaled) << what << ", flush " << flushes;
                    ++signaled;
                    waiting = 0;
                }
            }
            EXPECT_EQ(flushes, 40u);
            EXPECT_GE(signaled, 40u / every);
            EXPECT_LT(signaled, 40u);
            for (const auto& w : h.fabric.writes()) {
                EXPECT_EQ(w.flags, kQueuedUnsignaled) << what;
                EXPECT_EQ(w.ctx == reinterpret_cast<const void*>(kDirectWriteTag), direct) << what;
            }
        }
    }
}

// Through the queue and direct alike.
TEST(PersistChain, AFailedUnsignaledWriteFailsThePersist) {
    for (const bool direct : {false, true}) {
        OneRegion one({"raw", PersistenceDomain::cpu_cache}, queue_only(direct));
        auto& [h, t, g] = one;
        h.fabric.fail_wc_next("write", IBV_WC_REM_ACCESS_ERR);
        EXPECT_EQ(persist(*t, g, {{0, bytes_of("lost")}}), errc::io_error) << direct;
        EXPECT_EQ(persist(*t, g, {{0, bytes_of("after")}}), errc::io_error) << direct;  // the queue pair is in error
    }
}

// A persist's writes have no callback of their own (Op::joins_next): the
// persist's one callback hears the first error among them, even when the
// flush behind them succeeds.
TEST(PersistChain, AWriteThatCannotBePostedFailsThePersistItsFlushStillRuns) {
    OneRegion one({"raw", PersistenceDomain::cpu_cache});
    auto& [h, t, g] = one;
    h.fabric.fail_next("rpma_write", kErrInval);
    EXPECT_EQ(persist(*t, g, {{0, bytes_of("first")}, {64, bytes_of("second")}}), errc::invalid_argument);
    EXPECT_EQ(h.fabric.flushes().size(), 1u);
    // The connection lives on: the next persist succeeds, with its callback only once.
    int calls = 0;
    std::promise<Result<void>> p;
    const auto rec = bytes_of("after");
    const std::vector<proto::Slice> slices{{0, rec}, {128, rec}};
    t->persist(g, slices, [&](Result<void> r) {
        if (++calls == 1) p.set_value(std::move(r));
    });
    EXPECT_TRUE(ok(p.get_future().get()));
    EXPECT_EQ(calls, 1);
}

TEST(PersistChain, AFlushThatCannotBePostedBehindAnUnsignaledWriteFailsTheConnection) {
    for (const bool direct : {false, true}) {
        OneRegion one({"raw", PersistenceDomain::cpu_cache}, queue_only(direct));
        auto& [h, t, g] = one;
        h.fabric.fail_next("rpma_flush", kErrProvider);
        // No completion will ever retire the write: the durability is unknown.
        EXPECT_EQ(persist(*t, g, {{0, bytes_of("orphan")}}), errc::io_error) << direct;
        Waiter later;
        t->write(g, 0, bytes_of("x"), later.done());
        EXPECT_EQ(later.get(), errc::io_error) << direct;
        // The connection's failure says why it went.
        EXPECT_TRUE(detail_has(later.result(), "the connection failed")) << direct;
        EXPECT_TRUE(detail_has(later.result(), "a persist's flush could not be posted behind its write")) << direct;
    }
}

// A log record's commit word (an aligned 8-byte slice) goes as a native
// atomic write where the device has one, behind the record's body; a
// plain write otherwise. Either way one flush covers both.
TEST(PersistChain, ACommitWordIsANativeAtomicWriteWhereTheDeviceHasOne) {
    for (const bool native : {false, true}) {
        Harness h({{"raw", PersistenceDomain::cpu_cache}});
        h.fabric.native_atomic_write = native;
        h.listen();
        auto t = h.connect_ok();
        auto g = open(*t, "raw");
        const auto body = bytes_of("a record's body");
        const auto word = bytes_of("commit!!");
        ASSERT_EQ(word.size(), 8u);
        ASSERT_FALSE(persist(*t, g, {{64, body}, {56, word}}));
        const auto atomics = h.fabric.atomics();
        ASSERT_EQ(atomics.size(), native ? 1u : 0u);
        ASSERT_EQ(h.fabric.writes().size(), native ? 1u : 2u);
        if (native) {
            EXPECT_EQ(atomics[0].dst_offset, 56u);
            std::uint64_t v = 0;
            std::memcpy(&v, word.data(), 8);
            EXPECT_EQ(atomics[0].value, v);
            EXPECT_EQ(t->atomic_write_stats().native_completed, 1u);
        }
        ASSERT_EQ(h.fabric.flushes().size(), 1u);
        EXPECT_TRUE(std::equal(word.begin(), word.end(), h.targets["raw"]->bytes().begin() + 56));
        EXPECT_TRUE(std::equal(body.begin(), body.end(), h.targets["raw"]->bytes().begin() + 64));
    }
}

} // namespace
} // namespace rpm::rdma::test
