// rpm-bench --mr-pool's model: connections driving a bursty load against
// a device with a budget of MRs, run in virtual time over discrete ticks by
// one thread. Every I/O holds one MR from issue to completion (a fixed
// service latency later); an I/O that finds no MR waits (a registration
// stall) and is retried every tick. Two schemes hand out the MRs: static
// (a private share per connection, iSER's 113) and the real rpm::MrPool;
// a third, one free list shared by all, bounds what any sharing can reach.
// Deterministic: the same seed gives connection i the same load whatever
// the number of connections (docs/benchmarks-history.md, "MR pool").
#pragma once

#include <rpm/mr_pool.hpp>
#include <rpm/result.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

namespace rpmbench {

struct Options;

/// The workload and the device, in ticks.
struct MrpModel {
    std::uint64_t ticks = 0;          ///< length of one run
    std::uint32_t tick_us = 10;
    std::uint32_t latency_ticks = 100;  ///< an I/O holds its MR this long
    std::uint64_t burst_iops = 0;     ///< a connection's rate in a burst
    std::uint64_t quiet_iops = 0;     ///< ... between bursts, so the mean is --mrp-iops
    double burst_ticks = 0;           ///< mean burst length (0: never in a burst)
    double quiet_ticks = 0;           ///< mean gap between bursts (0: always in a burst)
    std::uint64_t seed = 1;
    std::uint32_t budget = 2048, per_connection = 113, l1 = 16;
};
MrpModel make_model(const Options& o);

/// I/Os in flight a rate sustains: iops x latency.
double in_flight_at(const MrpModel& m, std::uint64_t iops);

/// SplitMix64: small, fast and the same on every platform (the standard
/// library's distributions are not), so a seed means the same load anywhere.
struct SplitMix {
    std::uint64_t s;
    std::uint64_t next() noexcept {
        std::uint64_t z = (s += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    /// Uniform in [0, 1).
    double uniform() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
};

/// One connection's load: an on/off process with exponentially distributed
/// phase lengths; within a phase I/Os are paced evenly at the phase's rate.
class MrpLoad {
public:
    MrpLoad(const MrpModel& m, std::uint32_t connection) noexcept;
    /// I/Os arriving in the next tick.
    std::uint32_t next() noexcept;
    [[nodiscard]] bool in_burst() const noexcept { return burst_; }

private:
    void start_phase(bool burst) noexcept;

    const MrpModel* m_;
    SplitMix rng_;
    bool burst_ = false;
    std::uint64_t left_ = 0;    ///< ticks to the end of the phase
    std::uint64_t credit_ = 0;  ///< in millionths of an I/O
    std::uint64_t per_tick_ = 0;
};

/// How MRs are handed out. get returns 0 when none is free now.
class MrScheme {
public:
    virtual ~MrScheme() = default;
    [[nodiscard]] virtual std::string_view name() const noexcept = 0;
    /// Admit one more connection. RETURN VALUE: false when the scheme refuses.
    virtual bool admit() = 0;
    virtual std::uintptr_t get(std::uint32_t connection) noexcept = 0;
    virtual void put(std::uint32_t connection, std::uintptr_t mr) noexcept = 0;
    [[nodiscard]] virtual std::uint32_t registered() const noexcept = 0;
    /// The pool's counters; nullopt for the static scheme.
    [[nodiscard]] virtual std::optional<rpm::MrPoolStats> stats() const { return std::nullopt; }
};

std::unique_ptr<MrScheme> make_static_scheme(const MrpModel& m);
/// The bound: one free list of the whole budget shared by every connection.
std::unique_ptr<MrScheme> make_shared_scheme(const MrpModel& m);
/// The options the pool scheme creates its MrPool with.
rpm::MrPoolOptions pool_options(const MrpModel& m);
/// ERRORS: MrPool::create's.
rpm::Result<std::unique_ptr<MrScheme>> make_pool_scheme(const MrpModel& m);

/// One run of `connections` connections for m.ticks ticks.
struct MrpRun {
    std::uint32_t connections = 0;
    bool admitted = true;   ///< false: the scheme refused a connection; nothing ran
    bool complete = true;   ///< false: stopped at the first stall, or interrupted
    std::uint64_t ticks = 0;
    std::uint64_t arrivals = 0, ios = 0;  ///< I/Os that arrived; that got an MR
    std::uint64_t stalled_ios = 0;        ///< I/Os that found no MR on arrival
    std::uint64_t stall_ticks = 0, max_wait_ticks = 0;  ///< waits of the stalled I/Os that got one
    std::uint64_t waiting_at_end = 0;
    double mean_in_flight = 0;            ///< over all connections, per tick
    std::uint64_t peak_in_flight = 0, peak_connection_in_flight = 0;
    std::uint32_t registered = 0;
    double real_seconds = 0;
    std::optional<rpm::MrPoolStats> stats;  ///< after the run, every MR put back
    /// Where the MRs were when the first I/O stalled (pool: its counters then).
    std::optional<std::uint64_t> first_stall_tick;
    std::uint64_t first_stall_in_flight = 0;
    std::optional<rpm::MrPoolStats> first_stall_stats;
};

/// Admit `connections` into `scheme` (fresh) and run the model.
/// stop_at_stall ends the run at the first stall (a search probe).
MrpRun simulate(MrScheme& scheme, const MrpModel& m, std::uint32_t connections, bool stop_at_stall);

} // namespace rpmbench
