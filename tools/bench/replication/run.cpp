// rpm-bench --replication: set up the replicas (in-process servers, or
// --replica URIs), then for every round and every configuration (replica
// count x durability): open a Replicator, and for every size measure one
// slice of the single-replica baseline, the replicated persist, the
// single batch, the replicated batch and the TCP round trip, then close.
// Baseline slices are shorter (one share per configuration), so over the
// run each baseline is measured as long as each test, spread over all of it.
#include "../baselines.hpp"
#include "../options.hpp"
#include "../plot/plot.hpp"
#include "replication.hpp"
#include "setup.hpp"

#include <fstream>
#include <iostream>
#include <map>
#include <tuple>

namespace rpmbench {
namespace {

std::string round_tag(unsigned round, unsigned rounds) {
    return rounds > 1 ? " [round " + std::to_string(round + 1) + "/" + std::to_string(rounds) + "]" : "";
}

class RepRunner {
public:
    RepRunner(const Options& o, RepSetup& setup, ReplicationReport& report, Baselines& baselines, Progress& progress)
        : o_(o), setup_(setup), report_(report), baselines_(baselines), progress_(progress) {}

    void add_tests(const std::vector<RepConfig>& configs);
    void warm_up_baselines();
    void run_rounds();

private:
    void run_config(std::size_t c, unsigned round);
    void run_size(rpm::Replicator& rep, std::size_t c, std::size_t s, unsigned round);
    void run_pair(rpm::Replicator& rep, std::size_t c, std::size_t s, unsigned round, RepTest t);
    /// A baseline slice's share of a test slice: one per configuration.
    double share() const { return 1.0 / static_cast<double>(configs_.size()); }
    StopRule slice(unsigned round, double share) const;
    std::size_t result_index(std::size_t c, std::size_t s, RepTest t) const {
        return (c * o_.sizes.size() + s) * tests_ + (t == RepTest::batch ? 1 : 0);
    }
    SliceSpec replicated_spec(std::size_t size, unsigned writes) const;
    /// The first test of each configuration and size: persist, or log (--log).
    RepTest first_test() const noexcept { return o_.replication.log ? RepTest::log : RepTest::persist; }
    SliceSpec single_spec(std::size_t size, unsigned writes) const;

    const Options& o_;
    RepSetup& setup_;
    ReplicationReport& report_;
    Baselines& baselines_;
    Progress& progress_;
    std::vector<RepConfig> configs_;
    std::vector<bool> dead_;  ///< configurations that could not be opened
    unsigned tests_ = 1;      ///< per configuration and size: persist (and batch)
    // Per size: the indexes of its baselines in report_.base.baselines.
    std::vector<std::size_t> single_persist_, single_batch_;
    std::vector<std::optional<std::size_t>> round_trip_;
    /// Per configuration and size: its fan-out baseline's index, if any.
    std::map<std::pair<std::size_t, std::size_t>, std::size_t> fanout_;
};

// The answers a configuration needs from its replicas (the local copy,
// when it counts, is one of the needed members).
unsigned remote_quorum(const RepConfig& c) {
    const unsigned local = c.durability.include_local ? 1 : 0;
    return c.needed > local ? c.needed - local : 0;
}

SliceSpec RepRunner::replicated_spec(std::size_t size, unsigned writes) const {
    return {size, writes, 0, stride_of(size), slots_of(o_)};
}

SliceSpec RepRunner::single_spec(std::size_t size, unsigned writes) const {
    return {size, writes, report_.single_offset, stride_of(size), slots_of(o_)};
}

StopRule RepRunner::slice(unsigned round, double share) const {
    StopRule r{o_.duration / o_.rounds * share, 0};
    if (o_.op_count) {
        const double ops = static_cast<double>(o_.op_count / o_.rounds + (round < o_.op_count % o_.rounds ? 1 : 0));
        r.ops = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(ops * share));
    }
    return r;
}

Baseline rpm_baseline(const std::string& kind, std::size_t size, unsigned writes, const std::string& uri) {
    Baseline b;
    b.kind = kind;
    b.request_bytes = size * writes;
    b.path = (writes == 1 ? "RemoteRegion::persist (synchronous)"
                          : std::to_string(writes) + " RemoteRegion::write (callback) + one synchronous flush") +
             " on " + uri + ", a connection of its own";
    b.id = kind + "/size=" + std::to_string(size) + (writes > 1 ? "/writes=" + std::to_string(writes) : "") +
           "/replica0";
    b.m.emplace();
    return b;
}

void RepRunner::add_tests(const std::vector<RepConfig>& configs) {
    configs_ = configs;
    dead_.assign(configs.size(), false);
    tests_ = o_.replication.batch > 0 ? 2 : 1;
    auto& bl = report_.base.baselines;
    for (std::size_t s = 0; s < o_.sizes.size(); ++s) {
        const auto size = o_.sizes[s];
        bl.push_back(rpm_baseline("single_persist", size, 1, setup_.uris[0]));
        single_persist_.push_back(bl.size() - 1);
        if (tests_ > 1) {
            bl.push_back(rpm_baseline("single_batch", size, o_.replication.batch, setup_.uris[0]));
            single_batch_.push_back(bl.size() - 1);
        }
        if (report_.base.transport == "tcp") {
            const auto i = baselines_.latency(s, Op::persist, size, 1, 1);
            bl[i].id = "tcp_round_trip/req=" + std::to_string(size) + "/rep=" + std::to_string(bl[i].reply_bytes) +
                       "/qd=1/t=1/replication";
            round_trip_.emplace_back(i);
        } else {
            round_trip_.emplace_back(std::nullopt);
        }
    }
    // One fan-out baseline per (size, replicas, answers needed), shared by
    // the configurations that have the same.
    std::map<std::tuple<std::size_t, unsigned, unsigned>, std::size_t> made;
    for (std::size_t c = 0; c < configs.size(); ++c) {
        const unsigned q = remote_quorum(configs[c]);
        if (configs[c].replicas < 2 || q == 0) continue;
        for (std::size_t s = 0; s < o_.sizes.size(); ++s) {
            const auto key = std::tuple{s, configs[c].replicas, q};
            if (!made.count(key))
                if (auto i = baselines_.fanout(o_.sizes[s], configs[c].replicas, q)) made[key] = *i;
            if (made.count(key)) fanout_[{c, s}] = made[key];
        }
    }
    for (std::size_t ci = 0; ci < configs.size(); ++ci)
        for (std::size_t s = 0; s < o_.sizes.size(); ++s)
            for (unsigned t = 0; t < tests_; ++t) {
                const auto& c = configs[ci];
                RepResult r;
                r.test = t == 0 ? first_test() : RepTest::batch;
                r.config = c;
                r.size = o_.sizes[s];
                r.writes_per_commit = t == 0 ? 1 : o_.replication.batch;
                r.single_baseline = bl[t == 0 ? single_persist_[s] : single_batch_[s]].id;
                if (t == 0 && round_trip_[s]) r.round_trip_baseline = bl[*round_trip_[s]].id;
                if (auto f = fanout_.find({ci, s}); t == 0 && f != fanout_.end()) r.fanout_baseline = bl[f->second].id;
                report_.results.push_back(std::move(r));
            }
}

void RepRunner::warm_up_baselines() {
    if (o_.warmup <= 0) return;
    for (std::size_t s = 0; s < o_.sizes.size(); ++s) {
        const auto label = "single_persist " + std::to_string(o_.sizes[s]) + " B (warm-up)";
        (void)single_slice(setup_.single(), single_spec(o_.sizes[s], 1), {o_.warmup, 0}, progress_, label);
    }
}

void RepRunner::run_rounds() {
    for (unsigned round = 0; round < o_.rounds && !interrupted(); ++round)
        for (std::size_t c = 0; c < configs_.size() && !interrupted(); ++c)
            if (!dead_[c]) run_config(c, round);
    report_.base.interrupted = interrupted();
    // A configuration that never opened is under skipped, not a row of zeros.
    std::erase_if(report_.results,
                  [](const RepResult& r) { return r.m.ops == 0 && r.m.errors == 0 && r.methods.empty(); });
}

void RepRunner::run_config(std::size_t c, unsigned round) {
    const auto& cfg = configs_[c];
    auto rep = setup_.open(cfg);
    if (!rep) {
        report_.base.skipped.push_back({describe(cfg), "Replicator::open: " + rep.error().message()});
        dead_[c] = true;
        return;
    }
    if (const auto why = not_live(*rep); !why.empty())
        report_.base.notes.push_back(describe(cfg) + round_tag(round, o_.rounds) + ": after open " + why);
    std::string methods;
    for (const auto& st : rep->replicas())  // a replica without a grant adds an empty name, as it always did
        methods += (methods.empty() ? "" : ",") + (st.method ? std::string(rpm::flush::to_string(*st.method)) : "");
    for (std::size_t s = 0; s < o_.sizes.size() && !interrupted(); ++s) {
        for (unsigned t = 0; t < tests_; ++t)
            report_.results[result_index(c, s, t ? RepTest::batch : first_test())].methods = methods;
        run_size(*rep, c, s, round);
    }
    // How the commit words travelled: the wire's evidence for native atomic
    // writes (rdma:// on a device with IBTA atomic write).
    for (const auto& st : rep->replicas())
        if (st.atomic_write)
            report_.base.notes.push_back(describe(cfg) + round_tag(round, o_.rounds) + ": replica " + st.uri +
                                         ": atomic writes " + std::string(rpm::to_string(*st.atomic_write)) + ", " +
                                         std::to_string(st.native_atomic_writes) + " completed as native");
}

void RepRunner::run_size(rpm::Replicator& rep, std::size_t c, std::size_t s, unsigned round) {
    if (o_.warmup > 0)
        (void)replicated_slice(rep, replicated_spec(o_.sizes[s], 1), {o_.warmup / o_.rounds, 0}, progress_,
                               "persist " + describe(configs_[c]) + " " + std::to_string(o_.sizes[s]) + " B (warm-up)");
    run_pair(rep, c, s, round, first_test());
    if (tests_ > 1) run_pair(rep, c, s, round, RepTest::batch);
    if (round_trip_[s]) baselines_.measure(*round_trip_[s], slice(round, share()), round_tag(round, o_.rounds));
    if (auto f = fanout_.find({c, s}); f != fanout_.end())
        baselines_.measure(f->second, slice(round, 1), round_tag(round, o_.rounds));
}

// One slice of the test's single-replica baseline, then one of the test.
void RepRunner::run_pair(rpm::Replicator& rep, std::size_t c, std::size_t s, unsigned round, RepTest t) {
    const auto size = o_.sizes[s];
    const unsigned writes = t != RepTest::batch ? 1 : o_.replication.batch;
    const auto of = round_tag(round, o_.rounds);
    auto& single = report_.base.baselines[t != RepTest::batch ? single_persist_[s] : single_batch_[s]];
    accumulate(*single.m, single_slice(setup_.single(), single_spec(size, writes), slice(round, share()), progress_,
                                       "baseline " + single.id + of));
    auto& res = report_.results[result_index(c, s, t)];
    const auto left = setup_.events->left();
    const auto label = std::string(to_string(t)) + " " + describe(configs_[c]) + " " + std::to_string(size) + " B" + of;
    auto spec = replicated_spec(size, writes);
    spec.log = t == RepTest::log;
    accumulate(res.m, replicated_slice(rep, spec, slice(round, 1), progress_, label));
    res.replica_failures += setup_.events->left() - left;
}

int emit(const Options& o, ReplicationReport& report, RepSetup& setup) {
    for (const auto& e : setup.events->errors()) report.base.notes.push_back("replica event: " + e);
    bool errors = false;
    for (const auto& r : report.results) errors = errors || r.m.errors != 0;
    const int status = emit_report(o, to_json(report).dump(2), [&](std::ostream& out) { print_text(report, out); },
                                   errors, report.base.interrupted);
    return plot::write_plot(o.plot, plot::figure_of(report), status);
}

} // namespace

int run_replication(const Options& o) {
    ReplicationReport report;
    std::string error;
    auto setup = RepSetup::create(o, report, error);
    if (!setup) return std::cerr << "rpm-bench: " << error << "\n", 1;
    const auto configs = make_configs(o, setup->uris.size(), report.base.skipped);
    if (configs.empty()) return std::cerr << "rpm-bench: no replicated configuration to measure\n", 2;
    Progress progress(!o.quiet);
    Baselines baselines(report.base, report.base.transport, setup->uris[0], o.baseline_server, o.warmup, progress);
    if (!baselines.error().empty()) return std::cerr << "rpm-bench: baselines: " << baselines.error() << "\n", 1;
    RepRunner runner(o, *setup, report, baselines, progress);
    runner.add_tests(configs);
    runner.warm_up_baselines();
    runner.run_rounds();
    const int status = emit(o, report, *setup);
    setup->close();
    return status;
}

} // namespace rpmbench
