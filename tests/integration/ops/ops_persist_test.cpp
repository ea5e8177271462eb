// Vectored persist, and synchronous calls mixed with callbacks on one
// connection (tcp:// drives the socket from the caller's thread when
// nothing else is in flight, and hands over to the I/O thread when
// something is). Over tcp:// here and rdma:// in the lab.
#include "common/backing.hpp"
#include "common/server_fixture.hpp"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace {
using namespace rpm;
using rpm::test::bytes_of;
using rpm::test::code_of;
using rpm::test::ok;
using rpm::test::text_at;
using OpsPersist = rpm::test::ServerTest;

TEST_F(OpsPersist, ARecordAndItsCommitWordInOnePersist) {
    auto c = connect();
    ASSERT_TRUE(c) << c.error().message();
    auto r = c->open_region("kv");
    ASSERT_TRUE(r) << r.error().message();
    const std::string record = "record #" + std::to_string(::getpid()) + " of the log";
    const std::uint64_t commit = 0xC0FFEE0000000000ull + static_cast<std::uint64_t>(record.size());
    const WriteSlice slices[] = {{8192, bytes_of(record)}, {128, std::as_bytes(std::span(&commit, 1))}};
    ASSERT_TRUE(ok(r->persist(slices)));
    EXPECT_EQ(text_at(*r, 8192, record.size()), record);
    std::uint64_t back = 0;
    ASSERT_TRUE(ok(r->read(128, std::as_writable_bytes(std::span(&back, 1)))));
    EXPECT_EQ(back, commit);
    EXPECT_EQ(rpm::test::read_backing(kv_path, 8192, record.size()), record);  // in the server's memory

    // The callback and future forms.
    const std::string a = "callback slice", b = "future slice";
    const WriteSlice one[] = {{16384, bytes_of(a)}};
    std::promise<Result<void>> p;
    r->persist(one, [&p](Result<void> done) { p.set_value(std::move(done)); });
    EXPECT_TRUE(ok(p.get_future().get()));
    const WriteSlice two[] = {{20000, bytes_of(b)}};
    EXPECT_TRUE(ok(r->persist_async(two).get()));
    EXPECT_EQ(text_at(*r, 16384, a.size()), a);
    EXPECT_EQ(text_at(*r, 20000, b.size()), b);
}

TEST_F(OpsPersist, ABadSliceIsRefusedBeforeAnythingIsSent) {
    auto c = connect();
    auto r = c->open_region("kv");
    ASSERT_TRUE(r);
    const std::string in = "in range", out = "out of range";
    // A PM device in the lab keeps what earlier tests wrote: compare with
    // what was there before, not with zeroes.
    const std::string before = text_at(*r, 256, in.size());
    ASSERT_NE(before, in);
    const WriteSlice slices[] = {{256, bytes_of(in)}, {r->size() - 4, bytes_of(out)}};
    const Result<void> refused = r->persist(slices);
    EXPECT_EQ(code_of(refused), errc::out_of_range);
    if (!refused) {
        // It names the slice's range and the region.
        const std::string& d = refused.error().detail();
        EXPECT_NE(d.find("persist [" + std::to_string(r->size() - 4) + ", +12)"), std::string::npos) << d;
        EXPECT_NE(d.find("region 'kv'"), std::string::npos) << d;
    }
    EXPECT_EQ(text_at(*r, 256, in.size()), before);
    EXPECT_EQ(code_of(r->persist(std::span<const WriteSlice>{})), errc::invalid_argument) << "no slices";
    std::vector<WriteSlice> many(kMaxPersistSlices + 1, WriteSlice{0, bytes_of(in)});
    EXPECT_EQ(code_of(r->persist(many)), errc::invalid_argument) << "too many slices";
    std::vector<WriteSlice> max(kMaxPersistSlices);
    std::vector<std::uint64_t> values(kMaxPersistSlices);
    for (std::size_t i = 0; i < max.size(); ++i) {
        values[i] = 0x5100000000000000ull + i;
        max[i] = {32768 + 64 * i, std::as_bytes(std::span(&values[i], 1))};
    }
    ASSERT_TRUE(ok(r->persist(max))) << "the most slices one persist takes";
    for (std::size_t i = 0; i < max.size(); i += 51) {
        std::uint64_t v = 0;
        ASSERT_TRUE(ok(r->read(32768 + 64 * i, std::as_writable_bytes(std::span(&v, 1)))));
        EXPECT_EQ(v, values[i]);
    }
}

// Callbacks keep a stream of persists in flight from one thread while
// another thread makes blocking calls on the same connection: every call
// completes, in order on the connection, with the right bytes.
TEST_F(OpsPersist, BlockingCallsAndCallbacksShareAConnection) {
    auto c = connect();
    auto r = c->open_region("kv");
    ASSERT_TRUE(r);
    constexpr int kAsync = 1000, kSync = 100;  // small enough for rdma:// under TCG in the lab
    std::vector<std::uint64_t> async_values(kAsync);
    std::atomic<int> async_done{0}, async_failed{0};
    std::thread async_thread([&] {
        for (int i = 0; i < kAsync; ++i) {
            async_values[i] = 0xA000000000000000ull + static_cast<std::uint64_t>(i);
            r->persist(static_cast<std::uint64_t>(i) * 8, std::as_bytes(std::span(&async_values[i], 1)),
                       [&](Result<void> done) { async_failed += done ? 0 : 1; ++async_done; });
            if (i % 64 == 0) std::this_thread::yield();
        }
    });
    int sync_failed = 0;
    for (int i = 0; i < kSync; ++i) {
        const std::uint64_t v = 0xB000000000000000ull + static_cast<std::uint64_t>(i);
        const std::uint64_t off = 65536 + static_cast<std::uint64_t>(i) * 8;
        if (!r->persist(off, std::as_bytes(std::span(&v, 1))).has_value()) ++sync_failed;
        std::uint64_t back = 0;
        if (!r->read(off, std::as_writable_bytes(std::span(&back, 1))).has_value() || back != v) ++sync_failed;
    }
    async_thread.join();
    ASSERT_TRUE(ok(r->flush(0, 8)));  // after every callback persist: waits for them
    for (int spin = 0; spin < 4000 && async_done.load() < kAsync; ++spin)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_EQ(sync_failed, 0);
    EXPECT_EQ(async_done.load(), kAsync);
    EXPECT_EQ(async_failed.load(), 0);
    std::vector<std::uint64_t> back(kAsync);
    ASSERT_TRUE(ok(r->read(0, std::as_writable_bytes(std::span(back)))));
    EXPECT_EQ(back, async_values);
}

// Blocking calls from several threads on one connection: at most one of
// them drives the socket; the others wait for the I/O thread.
TEST_F(OpsPersist, BlockingCallsFromSeveralThreadsOnOneConnection) {
    auto c = connect();
    auto r = c->open_region("kv");
    ASSERT_TRUE(r);
    constexpr int kThreads = 4, kEach = 100;
    std::atomic<int> failed{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
            for (int i = 0; i < kEach; ++i) {
                const std::uint64_t v = (static_cast<std::uint64_t>(t) << 32) | static_cast<std::uint64_t>(i);
                const std::uint64_t off = 131072 + (static_cast<std::uint64_t>(t) * kEach + i) * 8;
                std::uint64_t back = 0;
                if (!r->persist(off, std::as_bytes(std::span(&v, 1))).has_value() ||
                    !r->read(off, std::as_writable_bytes(std::span(&back, 1))).has_value() || back != v)
                    ++failed;
            }
        });
    for (auto& t : threads) t.join();
    EXPECT_EQ(failed.load(), 0);
}

// A blocking call on a connection whose server went away: io_error at
// once, not after the timeout; later calls fail at once too.
TEST_F(OpsPersist, ABlockingCallFailsAtOnceWhenTheServerIsGone) {
    auto c = connect();
    ASSERT_TRUE(c) << c.error().message();
    auto r = c->open_region("kv");
    ASSERT_TRUE(r);
    const std::uint64_t v = 42;
    ASSERT_TRUE(ok(r->persist(0, std::as_bytes(std::span(&v, 1)))));
    server->stop();
    const auto t0 = std::chrono::steady_clock::now();
    const Result<void> gone = r->persist(0, std::as_bytes(std::span(&v, 1)));
    EXPECT_EQ(code_of(gone), errc::io_error);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10))
        << "a closed connection must fail at once, not wait for the 20 s timeout";
    const Result<void> later = r->write(0, std::as_bytes(std::span(&v, 1)));
    EXPECT_EQ(code_of(later), errc::io_error);
    // Both say that the connection failed, and why.
    for (const Result<void>* f : {&gone, &later}) {
        if (f->has_value()) continue;
        const std::string& d = f->error().detail();
        const auto at = d.find("connection failed: ");
        ASSERT_NE(at, std::string::npos) << f->error().message();
        EXPECT_GT(d.size(), at + std::string_view("connection failed: ").size()) << "no reason: " << d;
    }
    // A later operation's detail names it (tcp://; rdma:// names the work request's kind).
    if (!later.has_value() && scheme() == "tcp") {
        EXPECT_EQ(later.error().detail().rfind("write over ", 0), 0u) << later.error().message();
    }
}

} // namespace

// Zero-copy from registered memory (Connection::register_memory): rdma://
// posts on the registration (in the lab); tcp:// has nothing to register.
TEST_F(OpsPersist, RegisteredMemoryPersistsAndReadsBack) {
    auto c = connect();
    ASSERT_TRUE(c) << c.error().message();
    auto r = c->open_region("kv");
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(c->register_memory({}).error().code(), errc::invalid_argument);
    std::vector<std::byte> app(3 << 20);
    auto mem = c->register_memory(app);
    ASSERT_TRUE(mem) << mem.error().message();
    EXPECT_EQ(mem->registered(), c->transport() == Scheme::rdma);
    EXPECT_EQ(mem->bytes().data(), app.data());
    // 512 KiB and a small record from the registration, durable; read back
    // into it; and memory outside it, which takes the copying path.
    auto big = std::span(app).subspan(4096, 512 << 10);
    for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<std::byte>((i * 13 + ::getpid()) & 0xff);
    ASSERT_TRUE(ok(r->persist(0, big)));
    const std::string rec = "registered record " + std::to_string(::getpid());
    std::memcpy(app.data() + 100, rec.data(), rec.size());
    ASSERT_TRUE(ok(r->persist(600000, std::span(app).subspan(100, rec.size()))));
    auto back = std::span(app).subspan(2 << 20, 512 << 10);
    ASSERT_TRUE(ok(r->read(0, back)));
    EXPECT_TRUE(std::equal(back.begin(), back.end(), big.begin())) << "512 KiB read back differs";
    EXPECT_EQ(rpm::test::read_backing(kv_path, 600000, rec.size()), rec);
    std::vector<std::byte> outside(64, std::byte{0x42});
    ASSERT_TRUE(ok(r->persist(700000, outside)));
    mem->reset();
    EXPECT_FALSE(mem->registered());
    // The same memory, no longer registered, still works through the copies.
    ASSERT_TRUE(ok(r->persist(600000, std::span(app).subspan(100, rec.size()))));
    EXPECT_EQ(rpm::test::read_backing(kv_path, 600000, rec.size()), rec);
}
