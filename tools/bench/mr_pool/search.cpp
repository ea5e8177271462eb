// The search for the largest number of connections that runs a whole
// duration without a registration stall: doubling probes, then bisection.
// A probe that stalls stops at its first stall (that is all the search
// needs); the run just past the answer is then repeated in full, to count
// its stalls.
#include "../measure.hpp"
#include "bench.hpp"

#include <algorithm>
#include <cstdio>

namespace rpmbench {
namespace {

class Searcher {
public:
    Searcher(std::string scheme, const MrpModel& m, bool quiet) : m_(m), quiet_(quiet) { s_.scheme = std::move(scheme); }
    MrpSearch find();

private:
    /// A run of n connections. RETURN VALUE: true when it ran in full without a stall.
    bool probe(std::uint32_t n);
    std::optional<MrpRun> run(std::uint32_t n, bool stop_at_stall);
    void say(const MrpRun& r, bool full) const;

    const MrpModel& m_;
    bool quiet_;
    MrpSearch s_;
};

std::optional<MrpRun> Searcher::run(std::uint32_t n, bool stop_at_stall) {
    std::unique_ptr<MrScheme> scheme;
    if (s_.scheme == "static") {
        scheme = make_static_scheme(m_);
    } else if (s_.scheme == "shared") {
        scheme = make_shared_scheme(m_);
    } else {
        auto p = make_pool_scheme(m_);
        if (!p) return s_.error = "MrPool::create: " + p.error().message(), std::nullopt;
        scheme = std::move(*p);
    }
    auto r = simulate(*scheme, m_, n, stop_at_stall);
    say(r, !stop_at_stall);
    return r;
}

void Searcher::say(const MrpRun& r, bool full) const {
    if (quiet_) return;
    if (!r.admitted) {
        std::fprintf(stderr, "rpm-bench: mr-pool %s N=%u: admission refused\n", s_.scheme.c_str(), r.connections);
        return;
    }
    std::fprintf(stderr, "rpm-bench: mr-pool %s N=%u%s: %llu stalled I/Os, peak %llu in flight (%.2f s)\n",
                 s_.scheme.c_str(), r.connections, full ? " (full)" : "",
                 static_cast<unsigned long long>(r.stalled_ios), static_cast<unsigned long long>(r.peak_in_flight),
                 r.real_seconds);
}

bool passed(const MrpRun& r) { return r.admitted && r.complete && r.stalled_ios == 0; }

bool Searcher::probe(std::uint32_t n) {
    auto r = run(n, true);
    if (!r) return false;
    s_.probes.push_back(std::move(*r));
    return passed(s_.probes.back());
}

MrpSearch Searcher::find() {
    // No scheme can give every connection an MR once there are more
    // connections than MRs: that bounds the doubling.
    const std::uint32_t cap = m_.budget;
    std::uint32_t good = 0, bad = cap + 1;
    for (std::uint32_t n = 1; n <= cap && !interrupted(); n = n < cap ? std::min(2 * n, cap) : cap + 1) {
        if (!probe(n)) {
            bad = n;
            break;
        }
        good = n;
    }
    while (bad - good > 1 && s_.error.empty() && !interrupted()) {
        const auto mid = good + (bad - good) / 2;
        (probe(mid) ? good : bad) = mid;
    }
    s_.max_connections = good;
    for (const auto& p : s_.probes)
        if (p.connections == good && passed(p)) s_.at_max = p;  // passing probes ran in full
    if (s_.error.empty() && !interrupted() && good < cap) s_.beyond = run(good + 1, false);
    return std::move(s_);
}

} // namespace

MrpSearch search_connections(const std::string& scheme_name, const MrpModel& m, bool quiet) {
    return Searcher(scheme_name, m, quiet).find();
}

} // namespace rpmbench
