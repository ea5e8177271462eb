// Completion modes (ClientOptions / ServerOptions::completion) against the
// fake fabric: every operation works in each mode, on both ends; closing a
// connection whose I/O thread spins ends it; an idle connection costs CPU
// only in busy mode (adaptive spins only after work, event never), and a
// closed one in none.
#include "support.hpp"

#include <sys/resource.h>

#include <thread>

namespace rpm::rdma::test {
namespace {

std::unique_ptr<client::Transport> connect_in(Harness& h, CompletionMode mode) {
    ClientOptions o;
    o.completion = mode;
    auto t = h.connect(o);
    EXPECT_TRUE(t) << t.error().message();
    return t ? std::move(*t) : nullptr;
}

class CompletionModes : public ::testing::TestWithParam<CompletionMode> {};

TEST_P(CompletionModes, EveryOperationWorksOnBothEnds) {
    const auto mode = GetParam();
    Harness h({{"pm", PersistenceDomain::cpu_cache}, {"adr", PersistenceDomain::memory_controller}}, "/", {},
              [&](ServerOptions& o) { o.completion = mode; });
    h.listen();
    auto t = connect_in(h, mode);
    ASSERT_TRUE(t);
    for (const char* region : {"pm", "adr"}) {
        const auto g = open(*t, region);
        for (int i = 0; i < 50; ++i) {
            const auto rec = bytes_of("record " + std::to_string(i) + " in " + region);
            const auto at = static_cast<std::uint64_t>(i) * 64;
            Waiter w;
            const proto::Slice slice{at, rec};
            t->persist(g, std::span(&slice, 1), w.done());
            ASSERT_FALSE(w.get()) << to_string(mode) << " " << region << " " << i;
            std::vector<std::byte> back(rec.size());
            Waiter r;
            t->read(g, at, back, r.done());
            ASSERT_FALSE(r.get());
            EXPECT_EQ(back, rec);
        }
        Waiter a;
        t->atomic_write(g, 4096, 0x1122334455667788ull, a.done());
        ASSERT_FALSE(a.get());
    }
    Waiter m;
    t->send(bytes_of("hello"), m.done());
    ASSERT_FALSE(m.get());
    ASSERT_TRUE(eventually([&] {
        std::lock_guard lock(h.mu);
        return !h.messages.empty();
    }));
    // Closing wakes the I/O thread whatever it is doing (spinning included).
    const auto t0 = std::chrono::steady_clock::now();
    t->close();
    t.reset();
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
}

INSTANTIATE_TEST_SUITE_P(Modes, CompletionModes,
                         ::testing::Values(CompletionMode::adaptive, CompletionMode::busy, CompletionMode::event),
                         [](const ::testing::TestParamInfo<CompletionMode>& p) { return std::string(to_string(p.param)); });

double process_cpu_seconds() {
    rusage u{};
    ::getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// CPU the process spends while one connection of `mode` (client and
// server) sits idle for `wall` after one operation.
double idle_cpu(CompletionMode mode, std::chrono::milliseconds wall) {
    Harness h({{"pm", PersistenceDomain::cpu_cache}}, "/", {}, [&](ServerOptions& o) { o.completion = mode; });
    h.listen();
    auto t = connect_in(h, mode);
    if (!t) return -1;
    const auto g = open(*t, "pm");
    Waiter w;
    t->write(g, 0, bytes_of("once"), w.done());
    EXPECT_FALSE(w.get());
    std::this_thread::sleep_for(20ms);  // past adaptive's spin
    const double before = process_cpu_seconds();
    std::this_thread::sleep_for(wall);
    return process_cpu_seconds() - before;
}

TEST(CompletionModeCost, AnIdleConnectionSpinsOnlyInBusyMode) {
    const auto wall = 400ms;
    const double busy = idle_cpu(CompletionMode::busy, wall);
    const double adaptive = idle_cpu(CompletionMode::adaptive, wall);
    const double event = idle_cpu(CompletionMode::event, wall);
    // Two spinning threads (client and server session) on a 2-CPU machine
    // that others share: well over a tenth of the wall time; the sleeping
    // modes, next to nothing.
    EXPECT_GT(busy, 0.1) << "busy mode did not spin";
    EXPECT_LT(adaptive, 0.05) << "adaptive mode kept spinning while idle";
    EXPECT_LT(event, 0.05) << "event mode spun";
}

// A closed connection whose object lives on (a RemoteRegion keeps its
// transport) has nothing to spin for, in busy mode too: its I/O thread
// sleeps until something comes (ClientConn::sleep_failed), and wakes for
// the callback of an operation issued after the close, which fails.
TEST(CompletionModeCost, AClosedConnectionSleepsEvenInBusyMode) {
    // The server sleeps between requests: only the client could spin.
    Harness h({{"pm", PersistenceDomain::cpu_cache}}, "/", {},
              [](ServerOptions& o) { o.completion = CompletionMode::event; });
    h.listen();
    auto t = connect_in(h, CompletionMode::busy);
    ASSERT_TRUE(t);
    const auto g = open(*t, "pm");
    Waiter w;
    t->write(g, 0, bytes_of("once"), w.done());
    ASSERT_FALSE(w.get());
    t->close();
    const auto& conn = dynamic_cast<const RdmaClient&>(*t).conn();
    EXPECT_TRUE(eventually([&] { return conn.io_thread_asleep_failed(); }))
        << "the closed connection's I/O thread never went to sleep";
    const double before = process_cpu_seconds();
    std::this_thread::sleep_for(400ms);
    EXPECT_LT(process_cpu_seconds() - before, 0.05) << "the closed connection's I/O thread kept spinning";
    Waiter late;
    t->write(g, 0, bytes_of("late"), late.done());
    const auto ec = late.get();
    EXPECT_NE(ec, std::make_error_code(std::errc::timed_out)) << "no callback for an operation after the close";
    EXPECT_TRUE(ec) << "an operation after the close succeeded";
}

// What one adaptive wait does: drain() reports a completion once `at` has
// passed since the wait began; the wait ends by timeout after 50 ms.
struct OneWait {
    Ready ready;
    std::uint64_t sleeps = 0;
};
OneWait adaptive_wait(bool in_flight, std::chrono::microseconds at) {
    Wakeup wake;
    rdma::Waiter w(CompletionMode::adaptive);
    const auto t0 = std::chrono::steady_clock::now();
    const auto drain = [&]() -> std::size_t { return std::chrono::steady_clock::now() - t0 >= at ? 1 : 0; };
    const Ready r = w.wait(-1, -1, wake, 50, drain, in_flight);
    return {r, w.sleeps()};
}

TEST(AdaptiveWaiter, SpinsThroughTheRoundTripOfItsOwnOperation) {
    // A completion 200 µs after the post (a round trip in the lab VM is 35
    // to 60 µs; kAdaptiveSpin is 50): caught spinning, without a sleep.
    const OneWait w = adaptive_wait(true, 200us);
    EXPECT_TRUE(w.ready.progress);
    EXPECT_FALSE(w.ready.timeout);
    EXPECT_EQ(w.sleeps, 0u);
}

TEST(AdaptiveWaiter, SleepsWhenNothingIsInFlightOrTheBoundPasses) {
    // Idle (a server between requests): the short spin, then a sleep.
    const OneWait idle = adaptive_wait(false, 10s);
    EXPECT_TRUE(idle.ready.timeout);
    EXPECT_EQ(idle.sleeps, 1u);
    // In flight, but nothing within kAdaptiveSpinInFlight: it sleeps too,
    // so a long server-side persist costs at most that much spinning.
    const OneWait slow = adaptive_wait(true, 10s);
    EXPECT_TRUE(slow.ready.timeout);
    EXPECT_EQ(slow.sleeps, 1u);
}

TEST(CompletionModeNames, ParseWhatToStringGives) {
    for (auto m : {CompletionMode::adaptive, CompletionMode::busy, CompletionMode::event})
        EXPECT_EQ(parse_completion_mode(to_string(m)), m);
    EXPECT_FALSE(parse_completion_mode("poll"));
    EXPECT_FALSE(parse_completion_mode(""));
}

} // namespace
} // namespace rpm::rdma::test
