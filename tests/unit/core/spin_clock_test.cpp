// core/spin_clock.hpp: the pacer reads the clock about once per wait once
// it knows the pace, and never lets a spin run past its end by more than
// the pace it learned; the coarse deadline is never reached early.
#include "core/spin_clock.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>

namespace rpm {
namespace {

using namespace std::chrono_literals;
using Clock = SpinPacer::Clock;

// Spin `pacer` from `t0` with rounds of `per_round` each, until it says the
// end has come; returns how many clock reads that took, and when it stopped.
struct Spin {
    int reads = 0;
    std::uint64_t rounds = 0;
    Clock::time_point stopped{};
};
// Run an already started spin: round n happens at t0 + n * per_round.
Spin run(SpinPacer& pacer, Clock::time_point t0, Clock::duration per_round, std::uint64_t stop_after) {
    Spin s;
    for (s.rounds = 1; s.rounds <= stop_after; ++s.rounds) {
        const auto now = t0 + per_round * static_cast<long>(s.rounds);
        if (!pacer.tick()) continue;
        ++s.reads;
        if (pacer.passed(now)) {
            s.stopped = now;
            return s;
        }
    }
    --s.rounds;
    return s;
}

Spin spin(SpinPacer& pacer, Clock::time_point t0, Clock::duration length, Clock::duration per_round,
          std::uint64_t stop_after = UINT64_MAX) {
    pacer.start(t0, t0 + length);
    return run(pacer, t0, per_round, stop_after);
}

// The same from start_unread(): the true start is t0; the coarse clock read
// then said `coarse` (no later).
Spin spin_unread(SpinPacer& pacer, Clock::time_point t0, Clock::time_point coarse, Clock::duration length,
                 Clock::duration per_round, std::uint64_t stop_after = UINT64_MAX) {
    pacer.start_unread(coarse, length);
    return run(pacer, t0, per_round, stop_after);
}

TEST(SpinPacer, ChecksEveryMinStepUntilItKnowsThePace) {
    SpinPacer p;
    EXPECT_EQ(p.ns_per_round(), 0u);
    // 1 µs a round, 50 µs: the first check at kMinStep rounds learns the pace.
    const Spin s = spin(p, Clock::time_point(1s), 50us, 1us);
    EXPECT_EQ(p.ns_per_round(), 1000u);
    EXPECT_GE(s.stopped - Clock::time_point(1s), 50us);
    // It stops within a minimum step of the end, not later.
    EXPECT_LE(s.stopped - Clock::time_point(1s), 50us + 1us * static_cast<long>(SpinPacer::kMinStep));
}

TEST(SpinPacer, OnceThePaceIsKnownAWaitThatEndsEarlyReadsTheClockNever) {
    SpinPacer p;
    (void)spin(p, Clock::time_point(1s), 50us, 1us);  // learn 1 µs a round
    // A 1 ms spin whose work arrives after 40 rounds (a round trip): the
    // first check would be at 500 rounds, so none happens.
    const Spin s = spin(p, Clock::time_point(2s), 1ms, 1us, 40);
    EXPECT_EQ(s.reads, 0);
    EXPECT_EQ(s.rounds, 40u);
}

TEST(SpinPacer, ASpinToItsEndReadsTheClockLogarithmicallyOften) {
    SpinPacer p;
    (void)spin(p, Clock::time_point(1s), 50us, 1us);
    // Halving what is left: 1000 rounds to the end, checks at 500, 750,
    // 875, ... until the minimum step; about log2(1000 / 16) + 2 reads.
    const Spin s = spin(p, Clock::time_point(2s), 1ms, 1us);
    EXPECT_GE(s.stopped - Clock::time_point(2s), 1ms);
    EXPECT_LE(s.stopped - Clock::time_point(2s), 1ms + 16us);
    EXPECT_LE(s.reads, 9);
    EXPECT_GE(s.reads, 5);
}

TEST(SpinPacer, RoundsSlowerThanLearnedOverrunByNoMoreThanTheirRatioOnHalfTheTimeLeft) {
    SpinPacer p;
    (void)spin(p, Clock::time_point(1s), 50us, 1us);  // learned: 1 µs
    // Rounds now take 3 µs: the first check (planned for 500 µs) comes at
    // 1.5 ms, past the 1 ms end; it stops there and learns the new pace.
    const Spin s = spin(p, Clock::time_point(2s), 1ms, 3us);
    EXPECT_EQ(s.reads, 1);
    EXPECT_LE(s.stopped - Clock::time_point(2s), 1500us);
    EXPECT_EQ(p.ns_per_round(), 3000u);
}

TEST(SpinPacer, AStepIsCappedSoAnEndlessSpinStillReadsTheClock) {
    SpinPacer p;
    (void)spin(p, Clock::time_point(1s), 50us, 1us);
    // No end (a busy wait without a deadline): a read every kMaxStep rounds.
    p.start(Clock::time_point(2s), Clock::time_point::max());
    std::uint64_t rounds = 0;
    while (!p.tick()) ++rounds;
    EXPECT_EQ(rounds + 1, SpinPacer::kMaxStep);
    EXPECT_FALSE(p.passed(Clock::time_point(2s) + 1us * static_cast<long>(SpinPacer::kMaxStep)));
}

TEST(SpinPacer, AnUnreadStartReadsNoClockWhenTheWorkComesFirst) {
    SpinPacer p;
    EXPECT_FALSE(p.knows_pace());
    (void)spin(p, Clock::time_point(1s), 50us, 1us);
    ASSERT_TRUE(p.knows_pace());
    const auto t0 = Clock::time_point(2s);
    const Spin s = spin_unread(p, t0, t0 - 1ms, 1ms, 1us, 40);
    EXPECT_EQ(s.reads, 0);
    EXPECT_EQ(s.rounds, 40u);
}

TEST(SpinPacer, AnUnreadStartAtTheLearnedPaceStopsOnTime) {
    SpinPacer p;
    (void)spin(p, Clock::time_point(1s), 50us, 1us);
    const auto t0 = Clock::time_point(2s);
    // The coarse clock lagged 3 ms: the start is estimated from the rounds.
    const Spin s = spin_unread(p, t0, t0 - 3ms, 1ms, 1us);
    EXPECT_GE(s.stopped - t0, 1ms);
    EXPECT_LE(s.stopped - t0, 1ms + 16us);
    EXPECT_LE(p.began(), t0);
    EXPECT_GE(p.began(), t0 - 1us);
}

TEST(SpinPacer, AnUnreadStartNeverStopsBeforeItsLengthAfterTheCoarseStart) {
    SpinPacer p;
    (void)spin(p, Clock::time_point(1s), 50us, 1us);  // learned: 1 µs
    // Rounds now take 0.5 µs: the rounds alone put the start 250 µs before
    // it was; the coarse clock (read just at the tick: t0) says it was not.
    const auto t0 = Clock::time_point(2s);
    const Spin s = spin_unread(p, t0, t0, 1ms, 500ns);
    EXPECT_GE(s.stopped - t0, 1ms);
    EXPECT_EQ(p.began(), t0);
}

TEST(SpinPacer, AnUnreadStartWithSlowerRoundsOverrunsByTheirRatio) {
    SpinPacer p;
    (void)spin(p, Clock::time_point(1s), 50us, 1us);  // learned: 1 µs
    // Rounds now take 10 µs: the first read (planned for 500 µs) comes at
    // 5 ms and puts the start half the length back, 4.5 ms, so the end at
    // 5.5 ms; the second read, planned at the old pace for half of what is
    // left (250 rounds), comes at 7.5 ms, learns the pace, and stops.
    const auto t0 = Clock::time_point(2s);
    const Spin s = spin_unread(p, t0, t0, 1ms, 10us);
    EXPECT_EQ(s.reads, 2);
    EXPECT_EQ(p.began(), t0 + 4500us);
    EXPECT_EQ(s.stopped - t0, 7500us);
    EXPECT_EQ(p.ns_per_round(), 10000u);
}

TEST(SpinPacer, APaceLearnedFromSlowRoundsDoesNotEndAnUnreadSpinAtItsFirstRead) {
    SpinPacer p;
    // A spin that was preempted: 100 µs a round learned.
    (void)spin(p, Clock::time_point(1s), 50us, 100us);
    ASSERT_EQ(p.ns_per_round(), 100000u);
    // Rounds of 1 µs again: the first read comes after kMinStep rounds
    // (16 µs), where 16 rounds at the learned pace would say 1.6 ms had
    // passed. The spin goes on to its length.
    const auto t0 = Clock::time_point(2s);
    const Spin s = spin_unread(p, t0, t0 - 3ms, 1ms, 1us);
    EXPECT_GE(s.stopped - t0, 500us);
    EXPECT_LE(s.stopped - t0, 1ms + 16us);
    EXPECT_GE(s.reads, 2);
}

TEST(SpinPacer, AnUnreadStartWithoutAnEndNeverStops) {
    SpinPacer p;
    (void)spin(p, Clock::time_point(1s), 50us, 1us);
    const auto t0 = Clock::time_point(2s);
    const Spin s = spin_unread(p, t0, t0, Clock::duration::max(), 1us, 100000);
    EXPECT_EQ(s.rounds, 100000u);
    EXPECT_GE(s.reads, 1);
}

TEST(SpinPacer, AfterAnUnreadStartThePaceIsLearnedFromItsFirstRead) {
    SpinPacer p;
    (void)spin(p, Clock::time_point(1s), 50us, 1us);  // learned: 1 µs
    const auto t0 = Clock::time_point(2s);
    // Rounds of 2 µs: the first read cannot teach (its start is an
    // estimate), the second learns 2 µs from the first.
    (void)spin_unread(p, t0, t0 - 1ms, 10ms, 2us);
    EXPECT_EQ(p.ns_per_round(), 2000u);
}

TEST(CoarseClock, ADeadlineIsNeverReachedEarly) {
    // Whatever the phase of the tick at the start, coarse_now() reaches the
    // deadline only once the precise clock has passed the timeout.
    for (int i = 0; i < 5; ++i) {
        const auto t0 = Clock::now();
        const auto d = coarse_deadline(3ms);
        while (coarse_now() < d) {
        }
        EXPECT_GE(Clock::now() - t0, 3ms);
    }
}

TEST(CoarseClock, TimeAfterSaturates) {
    const auto t = Clock::time_point(5s);
    EXPECT_EQ(time_after(t, 3ms), t + 3ms);
    EXPECT_EQ(time_after(t, Clock::duration::max()), Clock::time_point::max());
}

TEST(CoarseClock, NeverLeadsThePreciseClock) {
    for (int i = 0; i < 1000; ++i) {
        const auto c = coarse_now();
        EXPECT_LE(c, Clock::now());
    }
}

} // namespace
} // namespace rpm
