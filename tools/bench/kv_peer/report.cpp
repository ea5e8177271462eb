// Reports (report.hpp). Latencies are in microseconds, throughput in
// completed puts per measured second.
#include "report.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>

namespace kvbench {
namespace {

using nlohmann::json;

double us(std::uint64_t ns) { return static_cast<double>(ns) / 1000.0; }

std::string fixed(double v, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const auto m = v.size() / 2;
    return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// The medians over rounds of one system at one value size.
struct Cell {
    std::vector<double> p50, p99, ops;
};
using Key = std::pair<std::size_t, std::string>;  // value size, system

// A run's row name: its target, or "<target>-ping" for --op ping (lines
// written before --op existed are puts).
std::string system_of(const json& run) {
    const auto t = run["target"].get<std::string>();
    return run.value("op", std::string("put")) == "ping" ? t + "-ping" : t;
}

json summary_row(const Key& k, const Cell& c) {
    return {{"value_size", k.first}, {"target", k.second}, {"rounds", c.p50.size()},
            {"p50_us", median(c.p50)}, {"p99_us", median(c.p99)}, {"ops_per_s", median(c.ops)}};
}

void print_table(std::ostream& out, const json& rows) {
    char line[160];
    std::snprintf(line, sizeof line, "%-16s %6s %6s %10s %10s %10s\n", "system", "size", "rounds", "p50 us", "p99 us", "ops/s");
    out << line;
    for (const auto& r : rows) {
        std::snprintf(line, sizeof line, "%-16s %6zu %6zu %10.1f %10.1f %10.0f\n", r["target"].get<std::string>().c_str(),
                      r["value_size"].get<std::size_t>(), r["rounds"].get<std::size_t>(), r["p50_us"].get<double>(),
                      r["p99_us"].get<double>(), r["ops_per_s"].get<double>());
        out << line;
    }
}

// The summary rows by (value size, system), for the ratio and floor lines.
std::map<Key, json> by_key(const json& rows) {
    std::map<Key, json> by;
    for (const auto& r : rows) by[{r["value_size"].get<std::size_t>(), r["target"].get<std::string>()}] = r;
    return by;
}

// rpm-kvstore against each peer at each size: p50 ratio (goal <= 0.25 of
// Redis, <= 0.03 of etcd) and throughput ratio (goal > 1 against both).
json ratios(const json& rows) {
    const auto by = by_key(rows);
    json out = json::array();
    for (const auto& [k, rpm] : by) {
        if (k.second != "rpm-kvstore") continue;
        for (const char* peer : {"redis", "etcd"}) {
            const auto it = by.find({k.first, peer});
            if (it == by.end()) continue;
            const auto& p = it->second;
            out.push_back({{"value_size", k.first}, {"peer", peer},
                           {"p50_ratio", rpm["p50_us"].get<double>() / p["p50_us"].get<double>()},
                           {"ops_ratio", rpm["ops_per_s"].get<double>() / p["ops_per_s"].get<double>()}});
        }
    }
    return out;
}

// The floor under rpm-kvstore's put: a bare PING to the same node through
// the same client code, measured in the same run. Its p50 as a fraction of
// Redis' put is the least any put through the node could reach against
// that goal; the put's own p50 in round trips shows what the commit adds.
json floors(const json& rows) {
    const auto by = by_key(rows);
    json out = json::array();
    for (const auto& [k, ping] : by) {
        if (k.second != "rpm-kvstore-ping") continue;
        json f = {{"value_size", k.first}, {"ping_p50_us", ping["p50_us"]}};
        const double p = ping["p50_us"].get<double>();
        if (auto put = by.find({k.first, "rpm-kvstore"}); put != by.end() && p > 0)
            f["put_in_round_trips"] = put->second["p50_us"].get<double>() / p;
        if (auto redis = by.find({k.first, "redis"}); redis != by.end())
            f["ping_vs_redis"] = p / redis->second["p50_us"].get<double>();
        out.push_back(std::move(f));
    }
    return out;
}

void print_floors(std::ostream& out, const json& fs) {
    if (fs.empty()) return;
    out << "\nfloor: one round trip to the rpm-kvstore leader (PING, same client code), medians\n";
    for (const auto& f : fs) {
        out << "  " << f["value_size"] << " B runs: PING p50 " << fixed(f["ping_p50_us"].get<double>(), 1) << " us";
        if (f.contains("ping_vs_redis")) out << " = " << fixed(f["ping_vs_redis"].get<double>(), 3) << "x redis' put p50";
        if (f.contains("put_in_round_trips"))
            out << "; rpm-kvstore's put p50 = " << fixed(f["put_in_round_trips"].get<double>(), 2) << " round trips";
        out << "\n";
    }
}

void print_ratios(std::ostream& out, const json& rs) {
    if (rs.empty()) return void(out << "\n(no rpm-kvstore rows: no ratios)\n");
    out << "\nrpm-kvstore / peer, medians (goals: p50 <= 0.25x redis, <= 0.03x etcd; ops/s > 1x both)\n";
    for (const auto& r : rs)
        out << "  " << r["value_size"] << " B vs " << r["peer"].get<std::string>() << ": p50 "
            << fixed(r["p50_ratio"].get<double>(), 3) << "x, ops/s " << fixed(r["ops_ratio"].get<double>(), 2) << "x\n";
}

} // namespace

json result_json(const Options& o, const LoadResult& r) {
    const auto s = r.latency.summary();
    return {{"target", o.target},
            {"op", o.op},
            {"addr", o.addrs.front()},
            {"clients", o.clients},
            {"value_size", o.value_size},
            {"warmup_s", o.warmup},
            {"duration_s", o.duration},
            {"measured_s", r.measured_s},
            {"puts", s.count},
            {"errors", r.errors},
            {"ops_per_s", r.measured_s > 0 ? static_cast<double>(s.count) / r.measured_s : 0.0},
            {"p50_us", us(s.p50_ns)},
            {"p99_us", us(s.p99_ns)},
            {"p999_us", us(s.p999_ns)},
            {"mean_us", s.mean_ns / 1000.0},
            {"ok", r.error.empty()},
            {"error", r.error}};
}

void print_text(std::ostream& out, const json& j) {
    out << "rpm-kvbench: " << j["target"].get<std::string>() << " at " << j["addr"].get<std::string>() << ", "
        << j["clients"] << " clients, " << j["value_size"] << " B values, " << fixed(j["measured_s"].get<double>(), 2)
        << " s measured after " << fixed(j["warmup_s"].get<double>(), 2) << " s of warm-up\n"
        << "  puts " << j["puts"] << " (" << fixed(j["ops_per_s"].get<double>(), 0) << " ops/s), errors " << j["errors"]
        << "\n  latency us: p50 " << fixed(j["p50_us"].get<double>(), 1) << ", p99 " << fixed(j["p99_us"].get<double>(), 1)
        << ", p99.9 " << fixed(j["p999_us"].get<double>(), 1) << ", mean " << fixed(j["mean_us"].get<double>(), 1) << "\n";
}

int summarize(const std::string& file, bool as_json, std::ostream& out, std::ostream& err) {
    std::ifstream in(file);
    if (!in) return err << "rpm-kvbench: cannot read " << file << "\n", 1;
    json runs = json::array();
    std::map<Key, Cell> cells;
    std::vector<Key> order;  // first appearance: the script's interleaving
    for (std::string line; std::getline(in, line);) {
        if (line.empty()) continue;
        auto j = json::parse(line, nullptr, false);
        if (j.is_discarded() || !j.is_object() || !j.contains("p50_us"))
            return err << "rpm-kvbench: " << file << ": not a run: " << line.substr(0, 200) << "\n", 1;
        const Key k{j["value_size"].get<std::size_t>(), system_of(j)};
        if (!cells.count(k)) order.push_back(k);
        auto& c = cells[k];
        c.p50.push_back(j["p50_us"].get<double>());
        c.p99.push_back(j["p99_us"].get<double>());
        c.ops.push_back(j["ops_per_s"].get<double>());
        runs.push_back(std::move(j));
    }
    if (runs.empty()) return err << "rpm-kvbench: " << file << ": no runs\n", 1;
    json rows = json::array();
    for (const auto& k : order) rows.push_back(summary_row(k, cells[k]));
    const auto rs = ratios(rows);
    const auto fs = floors(rows);
    if (as_json) return out << json{{"runs", runs}, {"summary", rows}, {"ratios", rs}, {"floors", fs}}.dump(2) << "\n", 0;
    print_table(out, rows);
    print_ratios(out, rs);
    print_floors(out, fs);
    return 0;
}

} // namespace kvbench
