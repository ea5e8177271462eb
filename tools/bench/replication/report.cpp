// The --replication report: ratios to the same run's single-replica
// baselines, the headline figure, JSON and the table.
#include "replication.hpp"

namespace rpmbench {
namespace {

using nlohmann::json;

std::optional<double> ratio(double num, double den) {
    if (den <= 0 || num <= 0) return std::nullopt;
    return num / den;
}

json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

const Measurement* baseline_m(const ReplicationReport& r, const std::string& id) {
    const auto* b = r.base.baseline(id);
    return b && b->m && b->m->ops > 0 ? &*b->m : nullptr;
}

// Durability names the headline accepts, best first: a majority of the
// replicas alone ("majority-of-3"), then with the local copy counted.
bool headline_config(const RepConfig& c, bool include_local) {
    return c.replicas == 3 && c.durability.kind == rpm::Durability::Kind::majority &&
           c.durability.include_local == include_local;
}

} // namespace

RepRatios rep_ratios(const ReplicationReport& r, const RepResult& res) {
    RepRatios q;
    const auto s = res.m.latency.summary();
    if (const auto* b = baseline_m(r, res.single_baseline); b && s.count > 0) {
        const auto bs = b->latency.summary();
        q.mean = ratio(s.mean_ns, bs.mean_ns);
        q.p50 = ratio(static_cast<double>(s.p50_ns), static_cast<double>(bs.p50_ns));
        q.p99 = ratio(static_cast<double>(s.p99_ns), static_cast<double>(bs.p99_ns));
        q.p999 = ratio(static_cast<double>(s.p999_ns), static_cast<double>(bs.p999_ns));
        q.throughput = ratio(res.m.ops_per_s(), b->ops_per_s());
    }
    if (const auto* b = baseline_m(r, res.round_trip_baseline); b && s.count > 0)
        q.rt_p50 = ratio(static_cast<double>(s.p50_ns), static_cast<double>(b->latency.summary().p50_ns));
    if (const auto* b = baseline_m(r, res.fanout_baseline); b && s.count > 0)
        q.fanout_p50 = ratio(static_cast<double>(s.p50_ns), static_cast<double>(b->latency.summary().p50_ns));
    return q;
}

std::vector<Headline> headlines(const ReplicationReport& r) {
    std::vector<Headline> out;
    for (bool include_local : {false, true}) {
        for (const auto& res : r.results) {
            if (res.test == RepTest::batch || !headline_config(res.config, include_local)) continue;
            Headline h;
            h.size = res.size;
            h.durability = res.config.name;
            h.commit_p50_ns = res.m.latency.summary().p50_ns;
            if (const auto* b = baseline_m(r, res.single_baseline)) h.single_p50_ns = b->latency.summary().p50_ns;
            if (res.m.ops > 0) h.ratio = ratio(static_cast<double>(h.commit_p50_ns), static_cast<double>(h.single_p50_ns));
            const auto* fan = baseline_m(r, res.fanout_baseline);
            const auto* rt = baseline_m(r, res.round_trip_baseline);
            if (fan && rt)
                h.plain_ratio = ratio(static_cast<double>(fan->latency.summary().p50_ns),
                                      static_cast<double>(rt->latency.summary().p50_ns));
            out.push_back(h);
        }
        if (!out.empty()) break;
    }
    return out;
}

namespace {

json result_json(const ReplicationReport& r, const RepResult& res) {
    json j = {{"test", std::string(to_string(res.test))},
              {"replicas", res.config.replicas},
              {"durability", res.config.name},
              {"policy", rpm::to_string(res.config.durability)},
              {"members", res.config.members},
              {"needed", res.config.needed},
              {"size", res.size},
              {"writes_per_commit", res.writes_per_commit},
              {"qd", 1},
              {"threads", 1},
              {"api", "sync"},
              {"methods", res.methods},
              {"replica_failures", res.replica_failures}};
    j.update(measurement_json(res.m));
    j["commits_per_s"] = res.m.ops_per_s();
    const auto q = rep_ratios(r, res);
    j["ratio_to_single"] = {{"baseline", res.single_baseline}, {"mean", opt(q.mean)}, {"p50", opt(q.p50)},
                            {"p99", opt(q.p99)},          {"p999", opt(q.p999)}, {"throughput", opt(q.throughput)}};
    if (!res.round_trip_baseline.empty())
        j["ratio_to_round_trip"] = {{"baseline", res.round_trip_baseline}, {"p50", opt(q.rt_p50)}};
    if (!res.fanout_baseline.empty())
        j["ratio_to_fanout"] = {{"baseline", res.fanout_baseline}, {"p50", opt(q.fanout_p50)}};
    return j;
}

json headline_json(const ReplicationReport& r) {
    json h = {{"figure", "majority-of-3 commit p50 / single-replica persist p50 (same size, same run)"},
              {"target", kHeadlineTarget},
              {"per_size", json::array()}};
    for (const auto& x : headlines(r))
        h["per_size"].push_back({{"size", x.size},
                                 {"durability", x.durability},
                                 {"commit_p50_ns", x.commit_p50_ns},
                                 {"single_persist_p50_ns", x.single_p50_ns},
                                 {"ratio", opt(x.ratio)},
                                 {"plain_fanout_to_round_trip", opt(x.plain_ratio)},
                                 {"within_target", x.ratio ? json(*x.ratio <= kHeadlineTarget) : json(nullptr)}});
    return h;
}

json server_json(const RepServer& s) {
    const auto& g = s.region;
    return {{"uri", s.uri},       {"region", g.name},  {"size", g.size},     {"method", g.method},
            {"server_persist", g.server_persist}, {"domain", g.domain}, {"reason", g.reason}};
}

} // namespace

json to_json(const ReplicationReport& r) {
    const auto& b = r.base;
    json j;
    j["tool"] = "rpm-bench";
    j["benchmark"] = "replication";
    j["command_line"] = b.command_line;
    j["units"] = {{"latency", "ns (per commit: first write to commit's return, steady_clock)"},
                  {"bandwidth", "MB/s (10^6 payload bytes committed per second)"},
                  {"ratio_to_single", "replicated / single-replica RemoteRegion::persist (or batch) of the same "
                                      "size on replica 0, same run (latency: lower is better; throughput: "
                                      "commits/s ratio, higher is better)"}};
    j["machine"] = {{"nproc", b.nproc}, {"cpu_model", b.cpu_model}, {"kernel", b.kernel}, {"pinned_to_cpus", b.cpus}};
    j["mode"] = b.mode;
    j["transport"] = b.transport;
    j["servers"] = json::array();
    for (const auto& s : r.servers) j["servers"].push_back(server_json(s));
    j["local"] = {{"path", r.local_path}, {"size", r.local_size}, {"data_offset", rpm::kReplicaHeaderSize}};
    j["settings"] = {{"duration_s", b.duration}, {"warmup_s", b.warmup}, {"ops", b.ops_limit},
                     {"rounds", b.rounds},       {"writes_per_commit", r.batch}, {"completion", b.completion},
                     {"single_offset", r.single_offset}};
    j["baselines"] = json::array();
    for (const auto& x : b.baselines) j["baselines"].push_back(baseline_json(x));
    j["results"] = json::array();
    for (const auto& res : r.results) j["results"].push_back(result_json(r, res));
    j["headline"] = headline_json(r);
    j["skipped"] = json::array();
    for (const auto& s : b.skipped) j["skipped"].push_back({{"what", s.what}, {"reason", s.reason}});
    j["notes"] = b.notes;
    j["interrupted"] = b.interrupted;
    return j;
}

} // namespace rpmbench
