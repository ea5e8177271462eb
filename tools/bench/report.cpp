// Ratios and the JSON rendering. Units are in the field names: *_ns are
// nanoseconds, bandwidth_mb_s is 10^6 payload bytes per second.
#include "report.hpp"

namespace rpmbench {
namespace {

using nlohmann::json;

std::optional<double> ratio(double num, double den) {
    if (den <= 0) return std::nullopt;
    return num / den;
}

json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json latency_json(const Summary& s) {
    return {{"mean_ns", s.mean_ns}, {"p50_ns", s.p50_ns}, {"p99_ns", s.p99_ns}, {"p999_ns", s.p999_ns},
            {"min_ns", s.min_ns},   {"max_ns", s.max_ns}};
}

} // namespace

// A stream has no per-operation latency: only its bandwidth is reported.
json measurement_json(const Measurement& m, bool with_latency) {
    json j = with_latency ? latency_json(m.latency.summary()) : json::object();
    j["ops"] = m.ops;
    j["errors"] = m.errors;
    if (!m.first_error.empty()) j["first_error"] = m.first_error;
    j["seconds"] = m.seconds;
    j["bytes"] = m.bytes;
    j["bandwidth_mb_s"] = m.mb_per_s();
    j["ops_per_s"] = m.ops_per_s();
    if (m.cpu_seconds > 0 && m.ops > 0) j["process_cpu_us_per_op"] = m.cpu_seconds * 1e6 / static_cast<double>(m.ops);
    return j;
}

json baseline_json(const Baseline& b) {
    json j = {{"id", b.id}, {"kind", b.kind}, {"request_bytes", b.request_bytes}, {"reply_bytes", b.reply_bytes},
              {"qd", b.qd}, {"threads", b.threads}, {"path", b.path}, {"available", b.m.has_value()}};
    if (b.fanout > 1) j.update({{"fanout", b.fanout}, {"quorum", b.quorum}});
    if (b.m) j.update(measurement_json(*b.m, b.kind.find("stream") == std::string::npos));
    else j["unavailable"] = b.unavailable;
    return j;
}

namespace {

json result_json(const Report& r, const TestResult& res) {
    json j = {{"op", std::string(to_string(res.spec.op))},
              {"size", res.spec.size},
              {"qd", res.spec.qd},
              {"threads", res.threads},
              {"api", res.spec.api == Api::sync ? "sync" : "callback"},
              {"registered", res.spec.registered},
              {"method", res.method},
              {"method_choice", res.method_choice},
              {"unsafe", res.method_choice == "forced_unsafe"},
              {"server_persist", res.server_persist}};
    j.update(measurement_json(res.m));
    const auto q = ratios(r, res);
    json rj = {{"latency_baseline", res.latency_baseline}, {"mean", opt(q.mean)}, {"p50", opt(q.p50)},
               {"p99", opt(q.p99)}, {"p999", opt(q.p999)}, {"bandwidth_baseline", res.bandwidth_baseline},
               {"bandwidth", opt(q.bandwidth)}};
    if (const auto* b = r.baseline(res.latency_baseline); b && !b->m) rj["unavailable"] = b->unavailable;
    j["ratio_to_baseline"] = rj;
    return j;
}

} // namespace

const Baseline* Report::baseline(const std::string& id) const {
    for (const auto& b : baselines)
        if (b.id == id) return &b;
    return nullptr;
}

Ratios ratios(const Report& r, const TestResult& res) {
    Ratios q;
    const auto s = res.m.latency.summary();
    if (const auto* b = r.baseline(res.latency_baseline); b && b->m && s.count > 0) {
        const auto bs = b->m->latency.summary();
        q.mean = ratio(s.mean_ns, bs.mean_ns);
        q.p50 = ratio(static_cast<double>(s.p50_ns), static_cast<double>(bs.p50_ns));
        q.p99 = ratio(static_cast<double>(s.p99_ns), static_cast<double>(bs.p99_ns));
        q.p999 = ratio(static_cast<double>(s.p999_ns), static_cast<double>(bs.p999_ns));
    }
    if (const auto* b = r.baseline(res.bandwidth_baseline); b && b->m)
        q.bandwidth = ratio(res.m.mb_per_s(), b->m->mb_per_s());
    return q;
}

json to_json(const Report& r) {
    json j;
    j["tool"] = "rpm-bench";
    j["command_line"] = r.command_line;
    j["units"] = {{"latency", "ns (per operation, issue to completion, steady_clock)"},
                  {"bandwidth", "MB/s (10^6 payload bytes per second)"},
                  {"ratio_to_baseline", "latency: rpm / baseline (1.0 = as fast as plain transport); "
                                        "bandwidth: rpm / baseline stream (1.0 = line rate of the baseline)"}};
    j["machine"] = {{"nproc", r.nproc}, {"cpu_model", r.cpu_model}, {"kernel", r.kernel}, {"pinned_to_cpus", r.cpus}};
    j["mode"] = r.mode;
    j["uri"] = r.uri;
    j["transport"] = r.transport;
    j["region"] = {{"name", r.region.name},     {"size", r.region.size},
                   {"method", r.region.method}, {"server_persist", r.region.server_persist},
                   {"domain", r.region.domain}, {"reason", r.region.reason}};
    j["settings"] = {{"duration_s", r.duration}, {"warmup_s", r.warmup}, {"ops", r.ops_limit}, {"rounds", r.rounds},
                     {"completion", r.completion}};
    j["baselines"] = json::array();
    for (const auto& b : r.baselines) j["baselines"].push_back(baseline_json(b));
    j["results"] = json::array();
    for (const auto& res : r.results) j["results"].push_back(result_json(r, res));
    j["skipped"] = json::array();
    for (const auto& s : r.skipped) j["skipped"].push_back({{"what", s.what}, {"reason", s.reason}});
    j["notes"] = r.notes;
    j["interrupted"] = r.interrupted;
    return j;
}

} // namespace rpmbench
