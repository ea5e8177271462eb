// The model's numbers from the command line, and one connection's load.
#include "sim.hpp"
#include "../options.hpp"

#include <algorithm>
#include <cmath>

namespace rpmbench {
namespace {

constexpr std::uint64_t kMicro = 1'000'000;

} // namespace

// The quiet rate is what keeps the mean at --mrp-iops: f * b * R in bursts
// plus (1 - f) * quiet = R.
MrpModel make_model(const Options& o) {
    const auto& p = o.mr_pool;
    MrpModel m;
    m.tick_us = p.tick_us;
    m.ticks = std::max<std::uint64_t>(1, std::llround(p.duration * 1e6 / p.tick_us));
    m.latency_ticks = static_cast<std::uint32_t>(std::max<long long>(1, std::llround(p.latency_us / p.tick_us)));
    m.burst_iops = static_cast<std::uint64_t>(std::llround(p.iops * p.burst_factor));
    const double f = p.burst_fraction;
    m.quiet_iops = f < 1 ? static_cast<std::uint64_t>(std::llround(p.iops * (1 - f * p.burst_factor) / (1 - f))) : 0;
    const double burst_ticks = p.burst_ms * 1000.0 / p.tick_us;
    m.burst_ticks = f > 0 ? burst_ticks : 0;
    m.quiet_ticks = f < 1 ? burst_ticks * (1 - f) / std::max(f, 1e-12) : 0;
    m.seed = p.seed;
    m.budget = p.budget;
    m.per_connection = p.per_connection;
    m.l1 = p.l1;
    return m;
}

double in_flight_at(const MrpModel& m, std::uint64_t iops) {
    return static_cast<double>(iops) * m.latency_ticks * m.tick_us / 1e6;
}

// Connection i's stream depends only on the seed and i, so adding a
// connection never changes the others' loads. The first phase is drawn from
// the stationary split (a burst with probability f), and the pacing credit
// starts at a random point so connections do not issue in lockstep.
MrpLoad::MrpLoad(const MrpModel& m, std::uint32_t connection) noexcept
    : m_(&m), rng_{m.seed * 0x2545f4914f6cdd1dull + connection} {
    (void)rng_.next();
    const double f = m.burst_ticks / std::max(1e-12, m.burst_ticks + m.quiet_ticks);
    start_phase(rng_.uniform() < f);
    credit_ = rng_.next() % kMicro;
}

void MrpLoad::start_phase(bool burst) noexcept {
    if (burst ? m_->burst_ticks <= 0 : m_->quiet_ticks <= 0) burst = !burst;  // a phase that never happens
    burst_ = burst;
    const double mean = burst ? m_->burst_ticks : m_->quiet_ticks;
    // Exponential lengths: the process is memoryless, so the first phase
    // (which starts at time 0, mid-phase) has the same law as the others.
    left_ = std::max<std::uint64_t>(1, std::llround(-mean * std::log1p(-rng_.uniform())));
    per_tick_ = (burst ? m_->burst_iops : m_->quiet_iops) * m_->tick_us;
}

std::uint32_t MrpLoad::next() noexcept {
    if (left_ == 0) start_phase(!burst_);
    --left_;
    credit_ += per_tick_;
    const auto n = credit_ / kMicro;
    credit_ %= kMicro;
    return static_cast<std::uint32_t>(n);
}

} // namespace rpmbench
