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

// The command line: the options structs take what they hold; the rest is
// here until main checks it.
struct Args {
    std::string listen, connect, patterns = "write,read,read_after_write,send_flush", json;
    rpm::floor::ServerOptions so;
    rpm::floor::ClientOptions co;
    unsigned timeout_s = 300;
    std::string wait = "busy";
};

// RETURN VALUE: --quorum, whose count() tells whether it was given.
CLI::Option* add_options(CLI::App& app, Args& a) {
    auto* l = app.add_option("--listen", a.listen, "serve one client on ADDR[:PORT] (default port 7790)");
    auto* c = app.add_option("--connect", a.connect,
                             "measure against the server at ADDR[:PORT], or post each operation to several "
                             "(comma-separated) and count it done at --quorum completions");
    l->excludes(c);
    auto* q = app.add_option("--quorum", a.co.quorum,
                             "client: completions that finish an operation, 1 to the servers named (default: all)");
    app.add_option("--region", a.so.region, "server: the PM path to serve (devdax, file); default anonymous memory");
    app.add_option("--patterns", a.patterns, "client: comma-separated write,read,read_after_write,send_flush,native_flush");
    app.add_option("--size", a.co.size, "client: bytes per write or read")->capture_default_str();
    app.add_option("--ops", a.co.ops, "client: measured operations per pattern and round")->capture_default_str();
    app.add_option("--warmup", a.co.warmup, "client: unmeasured operations first")->capture_default_str();
    app.add_option("--rounds", a.co.rounds, "client: rounds over the patterns")->capture_default_str();
    app.add_option("--json", a.json, "client: also write the figures to FILE");
    app.add_option("--calls", a.co.calls,
                   "client: calls of distinct small functions per operation, before its post (0 to 512): "
                   "a library's own code, to scale what it costs")
        ->capture_default_str();
    app.add_option("--timeout", a.timeout_s, "seconds until either side gives up")->capture_default_str();
    app.add_option("--wait", a.wait, "server: busy (spin on the completion queue) or event (sleep on its channel)")
        ->check(CLI::IsMember({"busy", "event"}))
        ->capture_default_str();
    return q;
}

/// The comma-separated ADDR[:PORT] list into `ends`; false after saying which one is not.
bool parse_endpoints(const std::string& list, std::vector<rpm::floor::Endpoint>& ends) {
    std::stringstream addrs(list);
    for (std::string where; std::getline(addrs, where, ',');) {
        rpm::floor::Endpoint e;
        if (!split_address(where, e.addr, e.port)) {
            std::fprintf(stderr, "rpm-floor: '%s' is not ADDR[:PORT] with a port of 1 to 65535\n", where.c_str());
            return false;
        }
        ends.push_back(e);
    }
    return true;
}

/// --patterns into `out`; false after saying which one is unknown.
bool parse_patterns(const std::string& list, std::vector<Pattern>& out) {
    std::stringstream items(list);
    for (std::string item; std::getline(items, item, ',');) {
        auto p = rpm::floor::pattern_from(item);
        if (!p) {
            std::fprintf(stderr, "rpm-floor: %s\n", p.error().message().c_str());
            return false;
        }
        out.push_back(*p);
    }
    return true;
}

int run_server(Args& a, const rpm::floor::Endpoint& at) {
    a.so.addr = at.addr, a.so.port = at.port, a.so.timeout = std::chrono::seconds(a.timeout_s);
    a.so.sleep = a.wait == "event";
    auto r = rpm::floor::serve(a.so);
    if (!r) std::fprintf(stderr, "rpm-floor: %s\n", r.error().message().c_str());
    return r ? 0 : 1;
}

int run_client(Args& a, const std::vector<rpm::floor::Endpoint>& ends) {
    a.co.servers = ends, a.co.timeout = std::chrono::seconds(a.timeout_s);
    if (!parse_patterns(a.patterns, a.co.patterns)) return 2;
    auto fs = rpm::floor::measure(a.co);
    if (!fs) {
        std::fprintf(stderr, "rpm-floor: %s\n", fs.error().message().c_str());
        return fs.error().code() == rpm::errc::invalid_argument ? 2 : 1;
    }
    print(*fs);
    if (!a.json.empty() && !write_json(a.json, *fs)) {
        std::fprintf(stderr, "rpm-floor: cannot write %s\n", a.json.c_str());
        return 1;
    }
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    CLI::App app{"rpm-floor: the fabric's cost of rpm's operations with nothing of rpm above the verbs layer"};
    Args a;
    const auto* quorum = add_options(app, a);
    if (auto done = rpm_tools::parse_args(app, argc, argv)) return *done;
    if (a.listen.empty() == a.connect.empty()) {
        std::fprintf(stderr, "rpm-floor: give --listen ADDR[:PORT] or --connect ADDR[:PORT]\n");
        return 2;
    }
    if (quorum->count() > 0 && a.co.quorum == 0) {
        std::fprintf(stderr, "rpm-floor: --quorum must be 1 or more\n");
        return 2;
    }
    std::vector<rpm::floor::Endpoint> ends;
    if (!parse_endpoints(a.listen.empty() ? a.connect : a.listen, ends)) return 2;
    if (!a.listen.empty() && ends.size() != 1) {
        std::fprintf(stderr, "rpm-floor: --listen takes one ADDR[:PORT]\n");
        return 2;
    }
    if (!a.listen.empty()) return run_server(a, ends[0]);
    return run_client(a, ends);
}
