// rpm-bench: latency and bandwidth of rpm's write, read, persist and
// atomic_write, each quoted as a ratio to a plain-transport baseline
// measured in the same run (docs/benchmarks.md).
//
//   rpm-bench                                   # in-process server on /dev/shm, loopback TCP
//   rpm-bench --sizes 64,1M --qd 1,8 --threads 1,2 --duration 2 --json
//   rpm-bench --connect tcp://host:7000 --id app --secret-file s --region kv --baseline-server host:7100
//   rpm-bench --serve-baseline 0.0.0.0:7100      # the plain-TCP echo/sink server, on the server host
//   rpm-bench --replication                     # rpm::Replicator over 1..3 in-process replicas (replication.hpp)
//   rpm-bench --replication --replica tcp://a:7000,tcp://b:7000,tcp://c:7000 --id app --secret-file s --region r
//   rpm-bench --mr-pool                         # rpm::MrPool against static MRs per connection (tools/bench/mr_pool/bench.hpp)
//   rpm-bench --sizes 64 --tests persist --plot cdf.svg   # also the latency CDFs as SVG (plot.hpp)
//
// Each test runs --warmup seconds unmeasured, then --duration seconds (or
// --ops operations); a progress line goes to stderr once a second.
#include "baseline_tcp.hpp"
#include "options.hpp"
#include "../lib/parse_args.hpp"

#include <CLI/CLI.hpp>
#include <rpm/replication.hpp>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <iostream>

namespace {

using rpmbench::Options;

// "64", "4K", "1M" -> bytes; 0 on junk.
std::size_t parse_size(const std::string& s) {
    std::size_t pos = 0;
    unsigned long long v = 0;
    try { v = std::stoull(s, &pos); } catch (...) { return 0; }
    const std::string unit = s.substr(pos);
    if (unit == "K" || unit == "k") v <<= 10;
    else if (unit == "M" || unit == "m") v <<= 20;
    else if (!unit.empty()) return 0;
    return static_cast<std::size_t>(v);
}

std::string join_args(int argc, char** argv) {
    std::string s;
    for (int i = 0; i < argc; ++i) {
        const std::string a = argv[i];
        const bool quote = a.empty() || a.find_first_of(" \t'\"$") != std::string::npos;
        s += (i ? " " : "") + (quote ? "'" + a + "'" : a);
    }
    return s;
}

// --serve-baseline: the echo/sink server alone, until SIGINT or SIGTERM.
int serve_baseline(const std::string& at) {
    rpmbench::Endpoint ep;
    if (!rpmbench::parse_endpoint(at, ep)) return std::cerr << "rpm-bench: --serve-baseline " << at << ": expected HOST:PORT\n", 2;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);  // before the server's threads start
    std::string error;
    auto server = rpmbench::TcpBaselineServer::start(ep, error);
    if (!server) return std::cerr << "rpm-bench: " << error << "\n", 1;
    std::cout << "rpm-bench: baseline server on " << ep.host << ":" << server->port() << std::endl;
    int sig = 0;
    sigwait(&set, &sig);
    server->stop();
    return 0;
}

void add_options(CLI::App& app, Options& o, std::vector<std::string>& ops, std::vector<std::string>& sizes,
                 std::string& api) {
    app.add_option("--connect", o.connect, "tcp://HOST:PORT or rdma://HOST:PORT of an external rpm-server "
                                           "(default: start one in-process)");
    app.add_option("--id", o.id, "client id (external server)");
    app.add_option("--secret", o.secret, "shared secret (visible in ps; prefer --secret-file)");
    app.add_option("--secret-file", o.secret_file, "file holding the shared secret")->check(CLI::ExistingFile);
    app.add_option("--region", o.region, "region name (external server; its contents are overwritten)");
    app.add_option("--listen", o.listen, "in-process server: listen URI")->capture_default_str();
    app.add_option("--completion", o.completion_name,
                   "rdma://: how the client's and the in-process server's I/O threads wait for completions: "
                   "busy, adaptive or event")
        ->check(CLI::IsMember({"adaptive", "busy", "event"}))->capture_default_str();
    app.add_option("--server-io-threads", o.server_io_threads,
                   "in-process server: I/O threads of its tcp:// listener (default 0: one per CPU it may use)")
        ->check(CLI::Range(0u, 256u));
    app.add_option("--pool-dir", o.pool_dir, "in-process server: directory of the pool file")
        ->check(CLI::ExistingDirectory)->capture_default_str();
    app.add_option("--pool-size", o.pool_size, "in-process server: pool bytes (default: enough for all slots, >= 64 MiB)");
    app.add_option("--tests", ops, "operations: write,read,persist,atomic_write")->delimiter(',');
    app.add_option("--sizes", sizes, "payload sizes, e.g. 8,64,4K,64K,1M (at most 1M)")->delimiter(',');
    app.add_option("--qd", o.qds, "operations in flight per thread (list)")->delimiter(',')->check(CLI::Range(1, 1024));
    app.add_option("--threads", o.threads, "threads, each with its own Connection (list)")->delimiter(',')
        ->check(CLI::Range(1, 256));
    app.add_option("--duration", o.duration, "seconds per test")->check(CLI::Range(0.001, 3600.0))->capture_default_str();
    app.add_option("--warmup", o.warmup, "unmeasured seconds before each test")->check(CLI::Range(0.0, 60.0))
        ->capture_default_str();
    app.add_option("--rounds", o.rounds, "slices per test, alternating with its baseline's (noise pairing)")
        ->check(CLI::Range(1, 100))->capture_default_str();
    app.add_option("--ops", o.op_count, "operations per test over all threads (stops at --duration too)");
    app.add_option("--api", api, "callback (qd ops in flight) or sync (one blocking call at a time; qd 1)")
        ->check(CLI::IsMember({"callback", "sync"}))->capture_default_str();
    app.add_flag("--registered", o.registered,
                 "register each thread's buffers with its connection (Connection::register_memory): "
                 "zero-copy over rdma://; tcp:// has nothing to register");
    app.add_flag("!--no-forced", o.forced, "persist only with the decided method, no forced variants");
    app.add_option("--cpus", o.cpus, "pin the whole run (every thread) to these CPUs, e.g. 0 or 0,1")->delimiter(',');
    app.add_option("--baseline-server", o.baseline_server, "HOST:PORT of rpm-bench --serve-baseline (external servers)");
    app.add_flag("--json", o.json, "print JSON instead of the table");
    app.add_option("--output", o.output, "also write the JSON to FILE");
    app.add_option("--plot", o.plot, "also write each test's latency CDF and its baseline's to FILE as SVG "
                                     "(not with --mr-pool, which measures no latency)");
    app.add_flag("--self-check", o.self_check, "validate the JSON report; exit 1 if malformed (asserts no figure)");
    app.add_flag("--quiet", o.quiet, "no progress lines on stderr");
}

void add_replication_options(CLI::App& app, Options& o) {
    auto& r = o.replication;
    app.add_flag("--replication", r.enabled,
                 "benchmark rpm::Replicator (write + commit, qd 1, synchronous) against a single-replica persist");
    app.add_option("--replicas", r.replicas, "--replication: replica counts to measure (list)")->delimiter(',')
        ->check(CLI::Range(1, 8));
    app.add_option("--durability", r.durability,
                   "--replication: policies (list): all, majority or K, each optionally +local or -local "
                   "(default +local)")->delimiter(',')->capture_default_str();
    app.add_option("--replica", r.uris, "--replication: external replica servers tcp://... or rdma://... (list; "
                                        "with --id, --secret(-file), --region; their contents are overwritten)")
        ->delimiter(',');
    app.add_option("--batch", r.batch, "--replication: writes per commit of the throughput test (0 = none)")
        ->check(CLI::Range(0, 1024))->capture_default_str();
    app.add_flag("--log", r.log, "--replication: instead of the persist test, the log test: "
                                 "ReplicatedLog::append_durable of records of each size");
}

void add_mr_pool_options(CLI::App& app, Options& o) {
    auto& m = o.mr_pool;
    app.add_flag("--mr-pool", m.enabled, "rpm::MrPool against static per-connection MRs: connections without a "
                                         "registration stall, in virtual time");
    app.add_option("--mrp-iops", m.iops, "--mr-pool: mean I/Os per second per connection")
        ->check(CLI::Range(1.0, 1e8))->capture_default_str();
    app.add_option("--mrp-latency-us", m.latency_us, "--mr-pool: microseconds an I/O holds its MR")
        ->check(CLI::Range(1.0, 1e7))->capture_default_str();
    app.add_option("--mrp-burst-factor", m.burst_factor, "--mr-pool: rate in a burst / mean rate")
        ->check(CLI::Range(1.0, 1000.0))->capture_default_str();
    app.add_option("--mrp-burst-fraction", m.burst_fraction, "--mr-pool: share of the time in bursts (0..1)")
        ->check(CLI::Range(0.0, 1.0))->capture_default_str();
    app.add_option("--mrp-burst-ms", m.burst_ms, "--mr-pool: mean burst length, ms")
        ->check(CLI::Range(0.001, 1e6))->capture_default_str();
    app.add_option("--mrp-duration", m.duration, "--mr-pool: virtual seconds per run")
        ->check(CLI::Range(0.001, 3600.0))->capture_default_str();
    app.add_option("--mrp-seed", m.seed, "--mr-pool: workload seed (the same for every N)")->capture_default_str();
    app.add_option("--mrp-budget", m.budget, "--mr-pool: the device's MR budget")
        ->check(CLI::Range(1, 1 << 20))->capture_default_str();
    app.add_option("--mrp-static", m.per_connection, "--mr-pool: MRs per connection of the static scheme")
        ->check(CLI::Range(1, 1 << 20))->capture_default_str();
    app.add_option("--mrp-l1", m.l1, "--mr-pool: the pool's L1 entries per connection")
        ->check(CLI::Range(1, 1 << 20))->capture_default_str();
}

// --mr-pool's own checks: the off-burst rate must not be negative.
bool finish_mr_pool(const Options& o) {
    const auto& m = o.mr_pool;
    if (o.replication.enabled) return std::cerr << "rpm-bench: --mr-pool and --replication exclude each other\n", false;
    if (m.burst_fraction * m.burst_factor > 1.0)
        return std::cerr << "rpm-bench: --mrp-burst-fraction x --mrp-burst-factor must be at most 1\n", false;
    if (m.latency_us < m.tick_us) return std::cerr << "rpm-bench: --mrp-latency-us below one tick\n", false;
    if (m.per_connection > m.budget || m.l1 > m.budget)
        return std::cerr << "rpm-bench: --mrp-static and --mrp-l1 must not exceed --mrp-budget (" << m.budget
                         << ")\n", false;
    return true;
}

// --replication's own checks (after the common ones).
bool finish_replication(Options& o, bool sizes_given) {
    auto& r = o.replication;
    if (!sizes_given) o.sizes = {64, 4096, 65536};
    for (const auto& d : r.durability)
        if (auto p = rpm::parse_durability(d); !p)
            return std::cerr << "rpm-bench: --durability " << d << ": " << p.error().message() << "\n", false;
    if (!o.connect.empty()) return std::cerr << "rpm-bench: --replication takes --replica URI[,URI...], not --connect\n", false;
    if (!r.uris.empty() && o.region.empty()) return std::cerr << "rpm-bench: --replica needs --region\n", false;
    const unsigned most = *std::max_element(r.replicas.begin(), r.replicas.end());
    if (!r.uris.empty() && most > r.uris.size())
        return std::cerr << "rpm-bench: --replicas " << most << " but only " << r.uris.size() << " --replica URIs\n", false;
    return true;
}

// --plot's checks, before a run that may take minutes: the mode must
// measure latencies, and the file's folder must exist.
bool check_plot(const Options& o) {
    if (o.plot.empty()) return true;
    if (o.mr_pool.enabled)
        return std::cerr << "rpm-bench: --plot: --mr-pool measures no latency distribution (it counts stalls in "
                            "virtual time), so there is nothing to plot\n", false;
    const auto dir = std::filesystem::path(o.plot).parent_path();
    if (!dir.empty() && !std::filesystem::is_directory(dir))
        return std::cerr << "rpm-bench: --plot " << o.plot << ": no directory " << dir.string() << "\n", false;
    return true;
}

// Fills o.ops / o.sizes / o.api; false (with a message) on bad values.
bool finish(Options& o, const std::vector<std::string>& ops, const std::vector<std::string>& sizes,
            const std::string& api) {
    o.completion = rpm::parse_completion_mode(o.completion_name).value_or(rpm::CompletionMode::adaptive);
    if (!ops.empty()) o.ops.clear();
    for (const auto& s : ops) {
        auto op = rpmbench::parse_op(s);
        if (!op) return std::cerr << "rpm-bench: --tests " << s << ": not write, read, persist or atomic_write\n", false;
        o.ops.push_back(*op);
    }
    if (!sizes.empty()) o.sizes.clear();
    for (const auto& s : sizes) {
        const auto n = parse_size(s);
        if (n == 0 || n > (1u << 20)) return std::cerr << "rpm-bench: --sizes " << s << ": 1 byte to 1M\n", false;
        o.sizes.push_back(n);
    }
    o.api = api == "sync" ? rpmbench::Api::sync : rpmbench::Api::callback;
    if (!check_plot(o)) return false;
    if (o.mr_pool.enabled) return finish_mr_pool(o);
    if (o.replication.enabled) return finish_replication(o, !sizes.empty());
    if (o.api == rpmbench::Api::sync && (o.qds.size() != 1 || o.qds[0] != 1))
        return std::cerr << "rpm-bench: --api sync runs one operation at a time: use --qd 1\n", false;
    if (!o.connect.empty() && o.region.empty())
        return std::cerr << "rpm-bench: --connect needs --region\n", false;
    return true;
}

extern "C" void on_sigint(int) { rpmbench::interrupted().store(true); }

} // namespace

namespace rpmbench {
std::atomic<bool>& interrupted() noexcept {
    static std::atomic<bool> flag{false};
    return flag;
}
} // namespace rpmbench

int main(int argc, char** argv) {
    CLI::App app{"rpm-bench: rpm latency and bandwidth as ratios to plain-transport baselines"};
    Options o;
    std::vector<std::string> ops, sizes;
    std::string api = "callback", serve;
    add_options(app, o, ops, sizes, api);
    add_replication_options(app, o);
    add_mr_pool_options(app, o);
    app.add_option("--serve-baseline", serve, "only run the baseline echo/sink server on HOST:PORT");
    if (auto done = rpm_tools::parse_args(app, argc, argv)) return *done;
    if (!serve.empty()) return serve_baseline(serve);
    if (!finish(o, ops, sizes, api)) return 2;
    o.command_line = join_args(argc, argv);
    (void)rpmbench::interrupted();  // construct the flag before the handler can run
    std::signal(SIGINT, on_sigint);
    if (o.mr_pool.enabled) return rpmbench::run_mr_pool(o);
    return o.replication.enabled ? rpmbench::run_replication(o) : rpmbench::run(o);
}
