// The asynchronous calls of the C API: each one's success checked by
// content, refusals (NULL callback or buffer: nothing started, the callback
// never runs; a refused range: the callback runs before the call returns),
// and operations in flight when the connection closes or is deleted: every
// callback runs exactly once, before rpm_conn_close returns. tools/test
// runs these (CapiAsync*) under TSan too.
#include "capi_helpers.hpp"

#include <array>
#include <cstring>
#include <memory>
#include <string>

namespace capi {
namespace {

using CapiAsync = CapiFixture;
using CapiAsyncClose = CapiFixture;

TEST_F(CapiAsync, WriteFlushReadByContent) {
    const auto bytes = pattern(10000, 11);
    Completion w, f, r;
    CAPI_ASSERT_OK(rpm_region_write_async(region, 777, bytes.data(), bytes.size(), Completion::fn, &w));
    CAPI_ASSERT_OK(rpm_region_flush_async(region, 777, bytes.size(), Completion::fn, &f));
    EXPECT_EQ(w.wait(), 0) << w.message;
    EXPECT_EQ(f.wait(), 0) << f.message;
    std::vector<unsigned char> back(bytes.size());
    CAPI_ASSERT_OK(rpm_region_read_async(region, 777, back.data(), back.size(), Completion::fn, &r));
    ASSERT_EQ(r.wait(), 0) << r.message;
    EXPECT_EQ(back, bytes);
    EXPECT_EQ(w.calls.load() + f.calls.load() + r.calls.load(), 3);
}

TEST_F(CapiAsync, PersistPersistvAtomicByContent) {
    const auto a = pattern(4096, 12), b = pattern(16, 13);
    Completion p, pv, at;
    CAPI_ASSERT_OK(rpm_region_persist_async(region, 0, a.data(), a.size(), Completion::fn, &p));
    const rpm_slice slices[] = {{8192, b.data(), b.size()}, {9000, a.data(), 100}};
    CAPI_ASSERT_OK(rpm_region_persistv_async(region, slices, 2, Completion::fn, &pv));
    CAPI_ASSERT_OK(rpm_region_atomic_write_async(region, 16384, 0xfeedfacecafebeefull, Completion::fn, &at));
    EXPECT_EQ(p.wait(), 0) << p.message;
    EXPECT_EQ(pv.wait(), 0) << pv.message;
    EXPECT_EQ(at.wait(), 0) << at.message;
    std::vector<unsigned char> back(a.size());
    CAPI_ASSERT_OK(rpm_region_read(region, 0, back.data(), back.size()));
    EXPECT_EQ(back, a);
    back.assign(b.size(), 0);
    CAPI_ASSERT_OK(rpm_region_read(region, 8192, back.data(), back.size()));
    EXPECT_EQ(back, b);
    back.assign(100, 0);
    CAPI_ASSERT_OK(rpm_region_read(region, 9000, back.data(), back.size()));
    EXPECT_EQ(0, std::memcmp(back.data(), a.data(), 100));
    std::uint64_t word = 0;
    CAPI_ASSERT_OK(rpm_region_read(region, 16384, &word, 8));
    EXPECT_EQ(word, 0xfeedfacecafebeefull);
}

TEST_F(CapiAsync, RefusedRangeCallsBackBeforeReturning) {
    const auto junk = pattern(64, 14);
    const std::uint64_t off = kRegionSize - 8;
    Completion p, m, rd;
    CAPI_ASSERT_OK(rpm_region_persist_async(region, off, junk.data(), junk.size(), Completion::fn, &p));
    EXPECT_EQ(p.calls.load(), 1);
    EXPECT_EQ(p.status.load(), RPM_E_OUT_OF_RANGE);
    // rpm_errormsg() inside the callback gave the status's detail.
    EXPECT_NE(p.message.find(std::to_string(off)), std::string::npos) << p.message;
    CAPI_ASSERT_OK(rpm_region_atomic_write_async(region, 12, 1, Completion::fn, &m));
    EXPECT_EQ(m.calls.load(), 1);
    EXPECT_EQ(m.status.load(), RPM_E_MISALIGNED);
    std::vector<unsigned char> back(64);
    CAPI_ASSERT_OK(rpm_region_read_async(region, off, back.data(), back.size(), Completion::fn, &rd));
    EXPECT_EQ(rd.calls.load(), 1);
    EXPECT_EQ(rd.status.load(), RPM_E_OUT_OF_RANGE);
    std::uint64_t tail = 1;
    CAPI_ASSERT_OK(rpm_region_read(region, off, &tail, 8));
    EXPECT_EQ(tail, 0u);  // unchanged
}

TEST_F(CapiAsync, NullCallbackOrBufferStartsNothing) {
    unsigned char buf[8] = {};
    const rpm_slice one[] = {{0, buf, 8}};
    Completion c;
    EXPECT_EQ(rpm_region_write_async(region, 0, buf, 8, nullptr, &c), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_region_write_async(region, 0, nullptr, 8, Completion::fn, &c), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_region_write_async(nullptr, 0, buf, 8, Completion::fn, &c), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_region_read_async(region, 0, buf, 8, nullptr, &c), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_region_read_async(region, 0, nullptr, 8, Completion::fn, &c), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_region_atomic_write_async(region, 0, 1, nullptr, &c), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_region_atomic_write_async(nullptr, 0, 1, Completion::fn, &c), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_region_flush_async(region, 0, 8, nullptr, &c), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_region_flush_async(nullptr, 0, 8, Completion::fn, &c), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_region_persist_async(region, 0, buf, 8, nullptr, &c), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_region_persist_async(region, 0, nullptr, 8, Completion::fn, &c), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_region_persistv_async(region, one, 1, nullptr, &c), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_region_persistv_async(region, nullptr, 1, Completion::fn, &c), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_conn_send_async(conn, buf, 8, nullptr, &c), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_conn_send_async(conn, nullptr, 8, Completion::fn, &c), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_conn_send_async(nullptr, buf, 8, Completion::fn, &c), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_conn_recv_async(conn, buf, 8, nullptr, &c), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_conn_recv_async(conn, nullptr, 8, [](void*, std::int64_t) {}, &c), RPM_E_INVALID_ARGUMENT);
    // A round trip after them, so a wrongly started one would have called back.
    CAPI_ASSERT_OK(rpm_region_persist(region, 0, buf, 8));
    EXPECT_EQ(c.calls.load(), 0);
}

TEST_F(CapiAsync, BadSlicesStartNothing) {
    unsigned char buf[8] = {};
    const rpm_slice null_data[] = {{0, nullptr, 8}};
    std::vector<rpm_slice> many(RPM_MAX_SLICES + 1, rpm_slice{0, buf, 1});
    Completion c;
    EXPECT_EQ(rpm_region_persistv_async(region, null_data, 1, Completion::fn, &c), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_region_persistv_async(region, null_data, 0, Completion::fn, &c), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_region_persistv_async(region, many.data(), many.size(), Completion::fn, &c),
              RPM_E_INVALID_ARGUMENT);
    CAPI_ASSERT_OK(rpm_region_persist(region, 0, buf, 8));
    EXPECT_EQ(c.calls.load(), 0);
}

/// A callback that makes a synchronous call on its own connection.
struct Reentrant {
    rpm_region* region = nullptr;
    std::atomic<int> inner{1};
    std::string inner_message;
    Completion outer;
    static void fn(void* ctx, int st) {
        auto* r = static_cast<Reentrant*>(ctx);
        std::uint64_t word = 0;
        const int rc = rpm_region_read(r->region, 0, &word, sizeof word);
        r->inner_message = rpm_errormsg();
        r->inner.store(rc);
        Completion::fn(&r->outer, st);
    }
};

TEST_F(CapiAsync, SyncCallInsideItsCallbackWouldDeadlock) {
    Reentrant r;
    r.region = region;
    const std::uint64_t value = 99;
    CAPI_ASSERT_OK(rpm_region_persist_async(region, 0, &value, sizeof value, Reentrant::fn, &r));
    ASSERT_EQ(r.outer.wait(), 0) << r.outer.message;
    EXPECT_EQ(r.inner.load(), RPM_E_WOULD_DEADLOCK);
    EXPECT_NE(r.inner_message, "");
    std::uint64_t back = 0;  // the connection goes on
    CAPI_ASSERT_OK(rpm_region_read(region, 0, &back, sizeof back));
    EXPECT_EQ(back, value);
}

/// Counts the calls of each of many callbacks; records statuses.
struct Tally {
    static constexpr int kOps = 48;
    std::array<std::atomic<int>, kOps> calls{};
    std::array<std::atomic<int>, kOps> status{};
    struct Slot {
        Tally* t;
        int i;
    };
    std::array<Slot, kOps> slots{};
    Tally() {
        for (int i = 0; i < kOps; ++i) slots[i] = {this, i};
    }
    static void fn(void* ctx, int st) {
        auto* s = static_cast<Slot*>(ctx);
        s->t->status[s->i].store(st);
        s->t->calls[s->i].fetch_add(1);
    }
    void expect_each_once(const char* when) const {
        for (int i = 0; i < kOps; ++i) {
            EXPECT_EQ(calls[i].load(), 1) << when << ", op " << i;
            const int st = status[i].load();
            EXPECT_TRUE(st == 0 || st == RPM_E_IO_ERROR) << when << ", op " << i << ": " << st;
        }
    }
};

/// Starts Tally::kOps operations of 64 KiB each (persists, reads, writes,
/// flushes in turn) on `r`.
void start_many(rpm_region* r, Tally& t, std::vector<std::vector<unsigned char>>& bufs) {
    bufs.assign(Tally::kOps, pattern(64 * 1024, 15));
    for (int i = 0; i < Tally::kOps; ++i) {
        const std::uint64_t off = static_cast<std::uint64_t>(i % 16) * 64 * 1024;
        auto* ctx = &t.slots[i];
        auto& b = bufs[i];
        int rc = 0;
        switch (i % 4) {
        case 0: rc = rpm_region_persist_async(r, off, b.data(), b.size(), Tally::fn, ctx); break;
        case 1: rc = rpm_region_read_async(r, off, b.data(), b.size(), Tally::fn, ctx); break;
        case 2: rc = rpm_region_write_async(r, off, b.data(), b.size(), Tally::fn, ctx); break;
        default: rc = rpm_region_flush_async(r, off, b.size(), Tally::fn, ctx); break;
        }
        ASSERT_EQ(rc, 0) << "op " << i << ": " << rpm_errormsg();
    }
}

TEST_F(CapiAsyncClose, InFlightCallbacksRunOnceBeforeCloseReturns) {
    Tally t;
    std::vector<std::vector<unsigned char>> bufs;
    start_many(region, t, bufs);
    CAPI_ASSERT_OK(rpm_conn_close(conn));
    t.expect_each_once("after rpm_conn_close");
}

TEST_F(CapiAsyncClose, InFlightCallbacksRunOnceBeforeDeleteReturns) {
    Tally t;
    std::vector<std::vector<unsigned char>> bufs;
    start_many(region, t, bufs);
    rpm_region* r = region.p;
    region.p = nullptr;
    CAPI_ASSERT_OK(rpm_region_delete(&r));  // its operations go on
    CAPI_ASSERT_OK(conn.reset());
    EXPECT_EQ(conn.get(), nullptr);
    t.expect_each_once("after rpm_conn_delete");
}

TEST_F(CapiAsyncClose, PendingRecvAndSendEndWithTheConnection) {
    std::atomic<int> recv_calls{0};
    std::atomic<std::int64_t> recv_status{1};
    struct Ctx {
        std::atomic<int>* calls;
        std::atomic<std::int64_t>* status;
    } ctx{&recv_calls, &recv_status};
    char buf[64];
    auto fn = [](void* c, std::int64_t st) {
        auto* x = static_cast<Ctx*>(c);
        x->status->store(st);
        x->calls->fetch_add(1);
    };
    CAPI_ASSERT_OK(rpm_conn_recv_async(conn, buf, sizeof buf, fn, &ctx));  // no message is coming
    Completion s;
    const char msg[] = "in flight";
    CAPI_ASSERT_OK(rpm_conn_send_async(conn, msg, sizeof msg, Completion::fn, &s));
    CAPI_ASSERT_OK(rpm_conn_close(conn));
    EXPECT_EQ(recv_calls.load(), 1);
    EXPECT_EQ(recv_status.load(), RPM_E_IO_ERROR);
    EXPECT_EQ(s.calls.load(), 1);
    EXPECT_TRUE(s.status.load() == 0 || s.status.load() == RPM_E_IO_ERROR) << s.status.load();
}

TEST_F(CapiAsyncClose, AsyncCallsAfterCloseFailWithIoError) {
    CAPI_ASSERT_OK(rpm_conn_close(conn));
    unsigned char buf[16] = {};
    const rpm_slice one[] = {{0, buf, 8}};
    std::array<Completion, 8> c;
    CAPI_ASSERT_OK(rpm_region_write_async(region, 0, buf, 8, Completion::fn, &c[0]));
    CAPI_ASSERT_OK(rpm_region_read_async(region, 0, buf, 8, Completion::fn, &c[1]));
    CAPI_ASSERT_OK(rpm_region_atomic_write_async(region, 0, 1, Completion::fn, &c[2]));
    CAPI_ASSERT_OK(rpm_region_flush_async(region, 0, 8, Completion::fn, &c[3]));
    CAPI_ASSERT_OK(rpm_region_persist_async(region, 0, buf, 8, Completion::fn, &c[4]));
    CAPI_ASSERT_OK(rpm_region_persistv_async(region, one, 1, Completion::fn, &c[5]));
    CAPI_ASSERT_OK(rpm_conn_send_async(conn, buf, 8, Completion::fn, &c[6]));
    for (std::size_t i = 0; i < 7; ++i) {
        EXPECT_EQ(c[i].wait(), RPM_E_IO_ERROR) << i;
        EXPECT_NE(c[i].message, "") << i;
    }
    std::atomic<std::int64_t> st{1};
    std::atomic<int> calls{0};
    struct Ctx {
        std::atomic<std::int64_t>* st;
        std::atomic<int>* calls;
    } ctx{&st, &calls};
    CAPI_ASSERT_OK(rpm_conn_recv_async(
        conn, buf, sizeof buf,
        [](void* p, std::int64_t s) {
            auto* x = static_cast<Ctx*>(p);
            x->st->store(s);
            x->calls->fetch_add(1);
        },
        &ctx));
    ASSERT_TRUE(eventually([&] { return calls.load() > 0; }));
    EXPECT_EQ(st.load(), RPM_E_IO_ERROR);
    for (std::size_t i = 0; i < 7; ++i) EXPECT_EQ(c[i].calls.load(), 1) << i;
    EXPECT_EQ(calls.load(), 1);
}

TEST_F(CapiAsync, ManyThreadsPersistConcurrently) {
    constexpr int kThreads = 4, kEach = 25;
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
            for (int i = 0; i < kEach; ++i) {
                const auto bytes = pattern(512, static_cast<unsigned>(t * 1000 + i));
                const std::uint64_t off = static_cast<std::uint64_t>(t) * 65536 + static_cast<std::uint64_t>(i) * 512;
                Completion c;
                if (rpm_region_persist_async(region, off, bytes.data(), bytes.size(), Completion::fn, &c) != 0 ||
                    c.wait() != 0)
                    failures.fetch_add(1);
            }
        });
    for (auto& th : threads) th.join();
    EXPECT_EQ(failures.load(), 0);
    for (int t = 0; t < kThreads; ++t) {
        const auto want = pattern(512, static_cast<unsigned>(t * 1000 + kEach - 1));
        std::vector<unsigned char> back(512);
        CAPI_ASSERT_OK(rpm_region_read(region, static_cast<std::uint64_t>(t) * 65536 + (kEach - 1) * 512,
                                       back.data(), back.size()));
        EXPECT_EQ(back, want) << t;
    }
}

}  // namespace
}  // namespace capi
