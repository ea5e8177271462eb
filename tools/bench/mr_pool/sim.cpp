// One run of the model: every tick, each connection first completes the
// I/Os whose latency is over (putting their MRs back), then issues what has
// arrived, oldest first, while the scheme hands out MRs.
#include "../measure.hpp"
#include "sim.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <utility>
#include <vector>

namespace rpmbench {
namespace {

struct Connection {
    MrpLoad load;
    std::deque<std::pair<std::uint64_t, std::uintptr_t>> out;  ///< (due tick, MR): the latency is fixed, so FIFO
    std::deque<std::uint64_t> waiting;                         ///< arrival ticks of I/Os without an MR
};

class Simulation {
public:
    Simulation(MrScheme& scheme, const MrpModel& m) : scheme_(scheme), m_(m) {}
    MrpRun run(std::uint32_t n, bool stop_at_stall);

private:
    bool admit(std::uint32_t n);
    void tick(std::uint64_t t);
    void complete(Connection& c, std::uint32_t i, std::uint64_t t);
    void issue(Connection& c, std::uint32_t i, std::uint64_t t);
    void drain();
    void note_first_stall(std::uint64_t t);

    MrScheme& scheme_;
    const MrpModel& m_;
    std::vector<Connection> conns_;
    MrpRun r_;
    std::uint64_t in_flight_ = 0;
    double in_flight_sum_ = 0;
};

bool Simulation::admit(std::uint32_t n) {
    conns_.reserve(n);
    for (std::uint32_t i = 0; i < n; ++i) {
        if (!scheme_.admit()) return false;
        conns_.push_back(Connection{MrpLoad(m_, i), {}, {}});
    }
    return true;
}

void Simulation::complete(Connection& c, std::uint32_t i, std::uint64_t t) {
    while (!c.out.empty() && c.out.front().first <= t) {
        scheme_.put(i, c.out.front().second);
        c.out.pop_front();
        --in_flight_;
    }
}

// New arrivals queue behind any I/O already waiting: a connection issues in order.
void Simulation::issue(Connection& c, std::uint32_t i, std::uint64_t t) {
    const auto arrived = c.load.next();
    r_.arrivals += arrived;
    c.waiting.insert(c.waiting.end(), arrived, t);
    while (!c.waiting.empty()) {
        const auto mr = scheme_.get(i);
        if (mr == 0) break;
        const auto wait = t - c.waiting.front();
        r_.stall_ticks += wait;
        r_.max_wait_ticks = std::max(r_.max_wait_ticks, wait);
        c.waiting.pop_front();
        c.out.emplace_back(t + m_.latency_ticks, mr);
        ++r_.ios;
        ++in_flight_;
    }
    const auto stalled = std::min<std::uint64_t>(arrived, c.waiting.size());
    if (stalled > 0 && !r_.first_stall_tick) note_first_stall(t);
    r_.stalled_ios += stalled;
    r_.peak_connection_in_flight = std::max<std::uint64_t>(r_.peak_connection_in_flight, c.out.size());
}

void Simulation::note_first_stall(std::uint64_t t) {
    r_.first_stall_tick = t;
    r_.first_stall_in_flight = in_flight_;
    r_.first_stall_stats = scheme_.stats();
}

void Simulation::tick(std::uint64_t t) {
    for (std::uint32_t i = 0; i < conns_.size(); ++i) complete(conns_[i], i, t);
    for (std::uint32_t i = 0; i < conns_.size(); ++i) issue(conns_[i], i, t);
    in_flight_sum_ += static_cast<double>(in_flight_);
    r_.peak_in_flight = std::max(r_.peak_in_flight, in_flight_);
}

// Every MR goes back before the users are destroyed (MrPoolUser's contract).
void Simulation::drain() {
    for (std::uint32_t i = 0; i < conns_.size(); ++i) {
        r_.waiting_at_end += conns_[i].waiting.size();
        complete(conns_[i], i, UINT64_MAX);
    }
}

MrpRun Simulation::run(std::uint32_t n, bool stop_at_stall) {
    const auto start = Clock::now();
    r_.connections = n;
    r_.admitted = admit(n);
    r_.registered = scheme_.registered();
    if (!r_.admitted) return r_;
    std::uint64_t t = 0;
    for (; t < m_.ticks; ++t) {
        tick(t);
        if (stop_at_stall && r_.stalled_ios > 0) break;
        if ((t & 0xfff) == 0 && interrupted().load(std::memory_order_relaxed)) break;
    }
    r_.ticks = std::min(t + 1, m_.ticks);
    r_.complete = t == m_.ticks;
    r_.mean_in_flight = in_flight_sum_ / static_cast<double>(r_.ticks);
    drain();
    r_.stats = scheme_.stats();
    r_.real_seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return r_;
}

} // namespace

MrpRun simulate(MrScheme& scheme, const MrpModel& m, std::uint32_t connections, bool stop_at_stall) {
    return Simulation(scheme, m).run(connections, stop_at_stall);
}

} // namespace rpmbench
