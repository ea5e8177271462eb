// rpm-floor: the fabric's cost of rpm's operations, without rpm (floor.hpp).
//   rpm-floor --listen ADDR[:PORT] [--region PATH] [--wait busy|event] [--timeout S]
//   rpm-floor --connect ADDR[:PORT][,ADDR[:PORT]...] [--quorum K] [--patterns LIST]
//             [--size N] [--ops N] [--warmup N] [--rounds N] [--calls N] [--json FILE]
// Exit status: 0 done, 1 a failure (printed), 2 bad usage.
#include "floor.hpp"
#include "../lib/parse_args.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace {

using rpm::floor::Pattern;

/// "10.0.0.1:7790" or "10.0.0.1" (the default port).
bool split_address(const std::string& s, std::string& host, std::uint16_t& port) {
    const auto colon = s.rfind(':');
    host = s.substr(0, colon);
    if (colon == std::string::npos) return !host.empty();
    try {
        const unsigned long v = std::stoul(s.substr(colon + 1));
        if (v == 0 || v > 65535) return false;
        port = static_cast<std::uint16_t>(v);
    } catch (const std::exception&) {
        return false;
    }
    return !host.empty();
}

void print(const std::vector<rpm::floor::Figures>& fs) {
    std::printf("%-17s %7s %6s %5s %6s %9s %9s %9s %9s %10s\n", "pattern", "size", "quorum", "round", "ops", "p50_us",
                "p90_us", "p99_us", "mean_us", "cpu_us/op");
    for (const auto& f : fs)
        std::printf("%-17s %7zu %3u/%-2u %5u %6u %9.2f %9.2f %9.2f %9.2f %10.2f\n", rpm::floor::name(f.pattern), f.size,
                    f.quorum, f.servers, f.round, f.ops, f.p50_us, f.p90_us, f.p99_us, f.mean_us, f.cpu_us_per_op);
    if (!fs.empty() && fs.front().calls > 0)
        std::printf("with %u calls per operation (--calls), which take %.2f us alone\n", fs.front().calls,
                    fs.front().calls_alone_us);
}

bool write_json(const std::string& path, const std::vector<rpm::floor::Figures>& fs) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& f : fs)
        rows.push_back({{"pattern", rpm::floor::name(f.pattern)}, {"size", f.size}, {"round", f.round},
                        {"servers", f.servers}, {"quorum", f.quorum},
                        {"ops", f.ops}, {"p50_us", f.p50_us}, {"p90_us", f.p90_us}, {"p99_us", f.p99_us},
                        {"mean_us", f.mean_us}, {"cpu_us_per_op", f.cpu_us_per_op},
                        {"calls", f.calls}, {"calls_alone_us", f.calls_alone_us}});
    std::ofstream out(path);
    out << nlohmann::json{{"tool", "rpm-floor"}, {"clock", "steady_clock per operation"}, {"results", rows}}.dump(2)
        << "\n";
    return static_cast<bool>(out);
}

} // namespace

int main(int argc, char** argv) {
    CLI::App app{"rpm-floor: the fabric's cost of rpm's operations with nothing of rpm above the verbs layer"};
    std::string listen, connect, patterns = "write,read,read_after_write,send_flush", json;
    rpm::floor::ServerOptions so;
    rpm::floor::ClientOptions co;
    unsigned timeout_s = 300;
    auto* l = app.add_option("--listen", listen, "serve one client on ADDR[:PORT] (default port 7790)");
    auto* c = app.add_option("--connect", connect,
                             "measure against the server at ADDR[:PORT], or post each operation to several "
                             "(comma-separated) and count it done at --quorum completions");
    l->excludes(c);
    auto* q = app.add_option("--quorum", co.quorum,
                             "client: completions that finish an operation, 1 to the servers named (default: all)");
    app.add_option("--region", so.region, "server: the PM path to serve (devdax, file); default anonymous memory");
    app.add_option("--patterns", patterns, "client: comma-separated write,read,read_after_write,send_flush,native_flush");
    app.add_option("--size", co.size, "client: bytes per write or read")->capture_default_str();
    app.add_option("--ops", co.ops, "client: measured operations per pattern and round")->capture_default_str();
    app.add_option("--warmup", co.warmup, "client: unmeasured operations first")->capture_default_str();
    app.add_option("--rounds", co.rounds, "client: rounds over the patterns")->capture_default_str();
    app.add_option("--json", json, "client: also write the figures to FILE");
    app.add_option("--calls", co.calls,
                   "client: calls of distinct small functions per operation, before its post (0 to 512): "
                   "a library's own code, to scale what it costs")
        ->capture_default_str();
    app.add_option("--timeout", timeout_s, "seconds until either side gives up")->capture_default_str();
    std::string wait = "busy";
    app.add_option("--wait", wait, "server: busy (spin on the completion queue) or event (sleep on its channel)")
        ->check(CLI::IsMember({"busy", "event"}))
        ->capture_default_str();
    if (auto done = rpm_tools::parse_args(app, argc, argv)) return *done;
    if (listen.empty() == connect.empty()) {
        std::fprintf(stderr, "rpm-floor: give --listen ADDR[:PORT] or --connect ADDR[:PORT]\n");
        return 2;
    }
    if (q->count() > 0 && co.quorum == 0) {
        std::fprintf(stderr, "rpm-floor: --quorum must be 1 or more\n");
        return 2;
    }
    std::vector<rpm::floor::Endpoint> ends;
    std::stringstream addrs(listen.empty() ? connect : listen);
    for (std::string where; std::getline(addrs, where, ',');) {
        rpm::floor::Endpoint e;
        if (!split_address(where, e.addr, e.port)) {
            std::fprintf(stderr, "rpm-floor: '%s' is not ADDR[:PORT] with a port of 1 to 65535\n", where.c_str());
            return 2;
        }
        ends.push_back(e);
    }
    if (!listen.empty() && ends.size() != 1) {
        std::fprintf(stderr, "rpm-floor: --listen takes one ADDR[:PORT]\n");
        return 2;
    }
    if (!listen.empty()) {
        so.addr = ends[0].addr, so.port = ends[0].port, so.timeout = std::chrono::seconds(timeout_s);
        so.sleep = wait == "event";
        auto r = rpm::floor::serve(so);
        if (!r) std::fprintf(stderr, "rpm-floor: %s\n", r.error().message().c_str());
        return r ? 0 : 1;
    }
    co.servers = ends, co.timeout = std::chrono::seconds(timeout_s);
    std::stringstream list(patterns);
    for (std::string item; std::getline(list, item, ',');) {
        auto p = rpm::floor::pattern_from(item);
        if (!p) {
            std::fprintf(stderr, "rpm-floor: %s\n", p.error().message().c_str());
            return 2;
        }
        co.patterns.push_back(*p);
    }
    auto fs = rpm::floor::measure(co);
    if (!fs) {
        std::fprintf(stderr, "rpm-floor: %s\n", fs.error().message().c_str());
        return fs.error().code() == rpm::errc::invalid_argument ? 2 : 1;
    }
    print(*fs);
    if (!json.empty() && !write_json(json, *fs)) {
        std::fprintf(stderr, "rpm-floor: cannot write %s\n", json.c_str());
        return 1;
    }
    return 0;
}
