// --self-check: rpm-bench reads back the JSON it wrote and checks its shape
// and internal consistency (never a performance figure), so CI catches a
// broken report without a JSON tool in the image.
#include "mr_pool/bench.hpp"
#include "replication/replication.hpp"
#include "report.hpp"

#include <set>

namespace rpmbench {
namespace {

using nlohmann::json;
using Problems = std::vector<std::string>;

bool has(const json& j, const char* key, json::value_t type) {
    if (!j.contains(key)) return false;
    const auto t = j.at(key).type();
    if (type == json::value_t::number_float) return j.at(key).is_number();
    if (type == json::value_t::number_unsigned) return t == json::value_t::number_unsigned;
    return t == type;
}

void need(Problems& p, const json& j, const std::string& where, const char* key, json::value_t type) {
    if (!has(j, key, type)) p.push_back(where + ": '" + key + "' missing or of the wrong type");
}

void check_counts(Problems& p, const json& j, const std::string& where) {
    for (const char* k : {"ops", "errors", "bytes"}) need(p, j, where, k, json::value_t::number_unsigned);
    for (const char* k : {"seconds", "bandwidth_mb_s", "ops_per_s"}) need(p, j, where, k, json::value_t::number_float);
    if (p.empty() && j.at("bandwidth_mb_s").get<double>() < 0) p.push_back(where + ": negative bandwidth");
}

// Latency fields are ordered: min <= p50 <= p99 <= p99.9 <= max.
void check_latency(Problems& p, const json& j, const std::string& where) {
    check_counts(p, j, where);
    for (const char* k : {"p50_ns", "p99_ns", "p999_ns", "min_ns", "max_ns"})
        need(p, j, where, k, json::value_t::number_unsigned);
    need(p, j, where, "mean_ns", json::value_t::number_float);
    if (!p.empty()) return;
    const auto v = [&](const char* k) { return j.at(k).get<std::uint64_t>(); };
    if (v("ops") > 0 && !(v("min_ns") <= v("p50_ns") && v("p50_ns") <= v("p99_ns") && v("p99_ns") <= v("p999_ns") &&
                          v("p999_ns") <= v("max_ns")))
        p.push_back(where + ": latency percentiles are not ordered");
}

void check_baselines(Problems& p, const json& j, std::set<std::string>& ids) {
    for (std::size_t i = 0; i < j.size(); ++i) {
        const auto& b = j[i];
        const std::string where = "baselines[" + std::to_string(i) + "]";
        need(p, b, where, "id", json::value_t::string);
        need(p, b, where, "kind", json::value_t::string);
        need(p, b, where, "available", json::value_t::boolean);
        if (!p.empty()) return;
        ids.insert(b.at("id").get<std::string>());
        if (!b.at("available").get<bool>()) {
            need(p, b, where, "unavailable", json::value_t::string);
            continue;
        }
        if (b.at("kind").get<std::string>().find("stream") != std::string::npos) check_counts(p, b, where);
        else check_latency(p, b, where);
        if (p.empty() && b.at("ops").get<std::uint64_t>() == 0) p.push_back(where + ": no operations measured");
    }
}

void check_ratio(Problems& p, const json& r, const std::string& where, const std::set<std::string>& ids) {
    need(p, r, where, "latency_baseline", json::value_t::string);
    need(p, r, where, "bandwidth_baseline", json::value_t::string);
    if (!p.empty()) return;
    if (!ids.count(r.at("latency_baseline").get<std::string>()) || !ids.count(r.at("bandwidth_baseline").get<std::string>()))
        p.push_back(where + ": names a baseline that is not in the report");
    for (const char* k : {"mean", "p50", "p99", "p999", "bandwidth"}) {
        if (!r.contains(k) || !(r.at(k).is_null() || (r.at(k).is_number() && r.at(k).get<double>() > 0)))
            p.push_back(where + ": '" + k + "' must be a positive number or null");
    }
}

void check_results(Problems& p, const json& j, const std::set<std::string>& ids) {
    static const std::set<std::string> ops{"write", "read", "persist", "atomic_write"};
    for (std::size_t i = 0; i < j.size(); ++i) {
        const auto& r = j[i];
        const std::string where = "results[" + std::to_string(i) + "]";
        need(p, r, where, "op", json::value_t::string);
        for (const char* k : {"size", "qd", "threads"}) need(p, r, where, k, json::value_t::number_unsigned);
        for (const char* k : {"method", "method_choice", "server_persist", "api"}) need(p, r, where, k, json::value_t::string);
        need(p, r, where, "unsafe", json::value_t::boolean);
        need(p, r, where, "ratio_to_baseline", json::value_t::object);
        if (!p.empty()) return;
        if (!ops.count(r.at("op").get<std::string>())) p.push_back(where + ": unknown op");
        check_latency(p, r, where);
        if (!p.empty()) return;
        if (r.at("ops").get<std::uint64_t>() == 0) p.push_back(where + ": no operations completed");
        if (r.at("errors").get<std::uint64_t>() != 0) p.push_back(where + ": operations failed");
        // Every completed operation costs some CPU: a missing or zero figure
        // means the accounting broke.
        if (!r.contains("process_cpu_us_per_op") || !r.at("process_cpu_us_per_op").is_number() ||
            r.at("process_cpu_us_per_op").get<double>() <= 0)
            p.push_back(where + ": 'process_cpu_us_per_op' missing or not positive");
        check_ratio(p, r.at("ratio_to_baseline"), where + ".ratio_to_baseline", ids);
    }
}

// The histogram's contract: exact below 256 ns, within 1/256 above.
void check_histogram(Problems& p) {
    Histogram h;
    for (std::uint64_t v = 1; v <= 100000; ++v) h.record(v * 100);
    const auto near = [](std::uint64_t got, double want) {
        return static_cast<double>(got) >= want * (1 - 1.0 / 256) && static_cast<double>(got) <= want * (1 + 1.0 / 256);
    };
    if (!near(h.quantile(0.5), 5e6) || !near(h.quantile(0.99), 9.9e6) || !near(h.quantile(0.999), 9.99e6))
        p.push_back("histogram: quantiles off by more than 1/256");
    for (std::uint64_t v : {0ull, 1ull, 255ull, 256ull, 1000ull, 123456789ull, ~0ull}) {
        const auto i = Histogram::bucket_of(v);
        if (v < Histogram::bucket_low(i) || v - Histogram::bucket_low(i) >= Histogram::bucket_width(i))
            p.push_back("histogram: value " + std::to_string(v) + " outside its bucket");
    }
}

bool positive_or_null(const json& j, const char* key) {
    return j.contains(key) && (j.at(key).is_null() || (j.at(key).is_number() && j.at(key).get<double>() > 0));
}

void check_rep_ratios(Problems& p, const json& r, const std::string& where, const std::set<std::string>& ids) {
    need(p, r, where, "ratio_to_single", json::value_t::object);
    if (!p.empty()) return;
    const auto& s = r.at("ratio_to_single");
    need(p, s, where + ".ratio_to_single", "baseline", json::value_t::string);
    if (!p.empty()) return;
    if (!ids.count(s.at("baseline").get<std::string>())) p.push_back(where + ": names a baseline not in the report");
    for (const char* k : {"mean", "p50", "p99", "p999", "throughput"})
        if (!positive_or_null(s, k)) p.push_back(where + ".ratio_to_single: '" + k + "' must be a positive number or null");
    for (const char* k : {"ratio_to_round_trip", "ratio_to_fanout"}) {
        if (!r.contains(k)) continue;
        const auto& t = r.at(k);
        if (!t.is_object() || !t.contains("baseline") || !t.at("baseline").is_string() ||
            !ids.count(t.at("baseline").get<std::string>()) || !positive_or_null(t, "p50"))
            p.push_back(where + "." + k + ": malformed or names a baseline not in the report");
    }
    // Over tcp:// a replicated persist to 2+ replicas is quoted against the
    // same fan-out over plain sockets.
    const bool wants_fanout = r.at("test") == "persist" && r.at("replicas").get<unsigned>() > 1 &&
                              r.contains("ratio_to_round_trip");
    if (wants_fanout && !r.contains("ratio_to_fanout")) p.push_back(where + ": no ratio_to_fanout");
}

// One --replication result: its configuration adds up, its figures are sane.
void check_rep_result(Problems& p, const json& r, const std::string& where, const std::set<std::string>& ids) {
    for (const char* k : {"test", "durability", "policy", "methods", "api"}) need(p, r, where, k, json::value_t::string);
    for (const char* k : {"replicas", "members", "needed", "size", "writes_per_commit", "qd", "threads", "replica_failures"})
        need(p, r, where, k, json::value_t::number_unsigned);
    need(p, r, where, "commits_per_s", json::value_t::number_float);
    if (!p.empty()) return;
    const auto u = [&](const char* k) { return r.at(k).get<std::uint64_t>(); };
    const auto test = r.at("test").get<std::string>();
    if (test != "persist" && test != "log" && test != "batch") p.push_back(where + ": unknown test");
    if (u("needed") < 1 || u("needed") > u("members") || u("members") < u("replicas") || u("members") > u("replicas") + 1)
        p.push_back(where + ": replicas, members and needed do not add up");
    check_latency(p, r, where);
    if (!p.empty()) return;
    if (u("ops") == 0) p.push_back(where + ": no commits completed");
    if (u("errors") != 0) p.push_back(where + ": commits failed");
    if (u("bytes") != u("ops") * u("size") * u("writes_per_commit")) p.push_back(where + ": bytes != commits x size x writes");
    check_rep_ratios(p, r, where, ids);
}

void check_headline(Problems& p, const json& h) {
    need(p, h, "headline", "target", json::value_t::number_float);
    need(p, h, "headline", "per_size", json::value_t::array);
    if (!p.empty()) return;
    const double target = h.at("target").get<double>();
    for (const auto& x : h.at("per_size")) {
        if (!x.is_object() || !positive_or_null(x, "ratio") || !x.contains("within_target") ||
            !x.contains("size") || !x.at("size").is_number_unsigned()) {
            p.push_back("headline.per_size: malformed entry");
            continue;
        }
        const auto& ratio = x.at("ratio");
        const auto& within = x.at("within_target");
        const bool consistent = ratio.is_null() ? within.is_null()
                                                : within.is_boolean() && within.get<bool>() == (ratio.get<double>() <= target);
        if (!consistent)
            p.push_back("headline.per_size: within_target does not match ratio and target");
    }
}

} // namespace

void check_replication_report(const nlohmann::json& j, std::vector<std::string>& p) {
    need(p, j, "report", "command_line", json::value_t::string);
    need(p, j, "report", "transport", json::value_t::string);
    for (const char* k : {"units", "machine", "local", "settings", "headline"}) need(p, j, "report", k, json::value_t::object);
    for (const char* k : {"servers", "baselines", "results", "skipped"}) need(p, j, "report", k, json::value_t::array);
    if (!p.empty()) return;
    if (j.at("servers").empty()) p.push_back("report: no servers");
    std::set<std::string> ids;
    check_baselines(p, j.at("baselines"), ids);
    if (j.at("results").empty()) p.push_back("report: no results");
    for (std::size_t i = 0; i < j.at("results").size() && p.empty(); ++i)
        check_rep_result(p, j.at("results")[i], "results[" + std::to_string(i) + "]", ids);
    check_headline(p, j.at("headline"));
}

std::vector<std::string> self_check(const std::string& text) {
    Problems p;
    check_histogram(p);
    json j;
    try {
        j = json::parse(text);
    } catch (const json::exception& e) {
        p.push_back(std::string("the JSON does not parse: ") + e.what());
        return p;
    }
    if (!j.is_object() || j.value("tool", "") != "rpm-bench") return p.push_back("not an rpm-bench report"), p;
    if (j.value("benchmark", "") == "replication") return check_replication_report(j, p), p;
    if (j.value("benchmark", "") == "mr_pool") return check_mr_pool_report(j, p), p;
    need(p, j, "report", "command_line", json::value_t::string);
    for (const char* k : {"units", "machine", "region", "settings"}) need(p, j, "report", k, json::value_t::object);
    for (const char* k : {"baselines", "results", "skipped"}) need(p, j, "report", k, json::value_t::array);
    if (!p.empty()) return p;
    std::set<std::string> ids;
    check_baselines(p, j.at("baselines"), ids);
    if (j.at("results").empty()) p.push_back("report: no results");
    check_results(p, j.at("results"), ids);
    return p;
}

} // namespace rpmbench
