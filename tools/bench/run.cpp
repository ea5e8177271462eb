// One run: set up the server (ours or theirs), work out which persist
// variants the transport accepts, then for every threads x qd x op x size
// x method: warm-ups, then --rounds slices of the test's own baselines
// alternating with slices of the test.
#include "baselines.hpp"
#include "local_server.hpp"
#include "options.hpp"
#include "plot/plot.hpp"
#include "setup.hpp"

#include <sched.h>
#include <sys/utsname.h>

#include <fstream>
#include <iostream>
#include <thread>

namespace rpmbench {
namespace {

struct Target {
    std::unique_ptr<LocalServer> local;
    std::string uri, region, mode;
    rpm::ClientOptions client;
};

// A persist variant: the region opened with these options.
struct Variant {
    std::string method, choice;
    rpm::RegionOptions opts;
};

std::uint64_t pool_size(const Options& o) {
    if (o.pool_size) return o.pool_size;
    std::size_t biggest = 8;
    for (auto s : o.sizes) biggest = std::max(biggest, s);
    const auto slots = std::uint64_t{*std::max_element(o.qds.begin(), o.qds.end())} *
                       *std::max_element(o.threads.begin(), o.threads.end());
    const std::uint64_t need = slots * ((biggest + 63) / 64 * 64) + biggest;
    return std::max<std::uint64_t>(64 << 20, (need + (1 << 20) - 1) >> 20 << 20);
}

std::optional<Target> make_target(const Options& o, std::string& error) {
    Target t;
    t.client.completion = o.completion;
    if (o.connect.empty()) {
        auto ls = LocalServer::start(o.listen, o.pool_dir, pool_size(o), {}, o.server_io_threads, o.completion);
        if (!ls) return error = "cannot start the in-process server: " + ls.error().message(), std::nullopt;
        t.local = std::move(*ls);
        t.uri = t.local->uri();
        t.region = t.local->region();
        t.client.client_id = t.local->client_id();
        t.client.secret = t.local->secret();
        t.mode = "in-process (region file " + t.local->pool().string() + ")";
        return t;
    }
    t.uri = o.connect;
    t.region = o.region;
    t.client.client_id = o.id;
    t.client.secret = o.secret;
    if (!o.secret_file.empty()) std::getline(std::ifstream(o.secret_file), t.client.secret);
    t.mode = "external";
    return t;
}

std::string cpu_model() {
    std::ifstream in("/proc/cpuinfo");
    for (std::string line; std::getline(in, line);)
        if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
    return "unknown";
}

} // namespace

void describe_machine(Report& r) {
    r.nproc = std::thread::hardware_concurrency();
    r.cpu_model = cpu_model();
    utsname u{};
    if (::uname(&u) == 0) r.kernel = u.release;
}

RegionInfo region_info(const rpm::RemoteRegion& g) {
    return {g.name(), std::string(rpm::flush::to_string(g.method())),
            std::string(rpm::flush::to_string(g.server_persist())), std::string(rpm::to_string(g.domain())),
            g.reason(), g.size()};
}

namespace {

// The decided method, then every other method the server grants when forced:
// first without `unsafe` (labelled forced), else with it (forced_unsafe).
std::vector<Variant> persist_variants(rpm::Connection& probe, const Target& t, const RegionInfo& decided,
                                      bool forced, std::vector<Skipped>& skipped) {
    std::vector<Variant> v{{decided.method, "decided", {}}};
    if (!forced) return v;
    using M = rpm::flush::Method;
    for (M m : {M::read_after_write, M::send_flush, M::native_flush}) {
        const std::string name(rpm::flush::to_string(m));
        if (name == decided.method) continue;
        rpm::RegionOptions ro{m, false};
        auto r = probe.open_region(t.region, ro);
        if (!r && r.error().detail().find("unsafe") != std::string::npos) {
            ro.unsafe = true;
            r = probe.open_region(t.region, ro);
            if (r) {
                v.push_back({name, "forced_unsafe", ro});
                continue;
            }
        }
        if (r) v.push_back({name, "forced", ro});
        else skipped.push_back({"persist with " + name + " forced", r.error().message()});
    }
    return v;
}

// Sizes from which a test's bandwidth is worth a paired stream baseline.
constexpr std::size_t kPairedStreamMin = 64 * 1024;

class Runner {
public:
    Runner(const Options& o, Target& t, Report& report, Baselines& baselines, Progress& progress,
           std::size_t opening_stream)
        : o_(o), t_(t), report_(report), baselines_(baselines), progress_(progress),
          opening_stream_(opening_stream) {}

    // False when a connection could not be made.
    bool run_threads(unsigned threads, const std::vector<Variant>& variants);

private:
    void run_one(const std::vector<rpm::RemoteRegion>& regions, const OpSpec& spec, unsigned threads,
                 const Variant& v, std::span<rpm::Connection> conns);

    const Options& o_;
    Target& t_;
    Report& report_;
    Baselines& baselines_;
    Progress& progress_;
    std::size_t opening_stream_;  ///< the stream baseline of tests under kPairedStreamMin
};

bool Runner::run_threads(unsigned threads, const std::vector<Variant>& variants) {
    std::vector<rpm::Connection> conns;
    for (unsigned i = 0; i < threads; ++i) {
        auto c = rpm::Client(t_.client).connect(t_.uri);
        if (!c) return report_.skipped.push_back({"threads=" + std::to_string(threads), c.error().message()}), false;
        conns.push_back(std::move(*c));
    }
    // regions[v][thread]: the region opened with variant v on each connection.
    std::vector<std::vector<rpm::RemoteRegion>> regions(variants.size());
    for (std::size_t v = 0; v < variants.size(); ++v)
        for (auto& c : conns) {
            auto r = c.open_region(t_.region, variants[v].opts);
            if (!r) return report_.skipped.push_back({"open_region " + t_.region, r.error().message()}), false;
            regions[v].push_back(*r);
        }
    for (unsigned qd : o_.qds)
        for (Op op : o_.ops) {
            const auto sizes = op == Op::atomic_write ? std::vector<std::size_t>{8} : o_.sizes;
            for (std::size_t size : sizes)
                for (std::size_t v = 0; v < (op == Op::persist ? variants.size() : 1); ++v) {
                    if (interrupted()) return report_.interrupted = true, true;
                    run_one(regions[v], {op, size, qd, o_.api, o_.registered}, threads, variants[v], conns);
                }
        }
    return true;
}

void Runner::run_one(const std::vector<rpm::RemoteRegion>& regions, const OpSpec& spec, unsigned threads,
                     const Variant& v, std::span<rpm::Connection> conns) {
    const std::size_t test = report_.results.size();
    TestResult res;
    res.spec = spec;
    res.threads = threads;
    res.method = v.method;
    res.method_choice = v.choice;
    res.server_persist = rpm::flush::to_string(regions.front().server_persist());
    const std::string label = std::string(to_string(spec.op)) + (spec.registered ? " (registered)" : "") + " " +
                              std::to_string(spec.size) + " B qd=" +
                              std::to_string(spec.qd) + " threads=" + std::to_string(threads) + " " + v.method +
                              (v.choice == "decided" ? "" : " (" + v.choice + ")");
    const auto lat = baselines_.latency(test, spec.op, spec.size, spec.qd, threads);
    const bool paired_stream = spec.size >= kPairedStreamMin;
    const auto bw = paired_stream ? baselines_.stream(test) : opening_stream_;
    res.latency_baseline = report_.baselines[lat].id;
    res.bandwidth_baseline = report_.baselines[bw].id;
    if (o_.warmup > 0) (void)run_rpm(regions, spec, {o_.warmup, 0}, progress_, label + " (warm-up)", conns);
    // Alternate baseline and rpm slices so both meet the same neighbours.
    for (unsigned round = 0; round < o_.rounds && !interrupted(); ++round) {
        // --ops is shared out exactly; 0 ops in a slice would mean "no limit".
        const std::uint64_t ops = o_.op_count / o_.rounds + (round < o_.op_count % o_.rounds ? 1 : 0);
        if (o_.op_count && ops == 0) break;
        const StopRule slice{o_.duration / o_.rounds, ops};
        const std::string of = o_.rounds > 1 ? " [round " + std::to_string(round + 1) + "/" +
                                                   std::to_string(o_.rounds) + "]" : "";
        baselines_.measure(lat, slice, of);
        accumulate(res.m, run_rpm(regions, spec, slice, progress_, label + of, conns));
        if (paired_stream) baselines_.measure(bw, slice, of);
    }
    report_.results.push_back(std::move(res));
}

} // namespace

// Pin the process before any thread exists, so every thread inherits it:
// rpm's I/O threads, the in-process server's, the baselines'. On a small VM
// this removes cross-CPU wake-ups, whose cost otherwise swings from run to
// run (docs/benchmarks.md, "This machine").
bool pin(const std::vector<unsigned>& cpus, std::string& described) {
    if (cpus.empty()) return true;
    cpu_set_t set;
    CPU_ZERO(&set);
    described.clear();
    for (unsigned c : cpus) {
        if (c >= CPU_SETSIZE) return false;
        CPU_SET(c, &set);
        described += (described.empty() ? "" : ",") + std::to_string(c);
    }
    return ::sched_setaffinity(0, sizeof set, &set) == 0;
}

int emit_report(const Options& o, const std::string& text, const std::function<void(std::ostream&)>& print,
                bool any_errors, bool interrupted) {
    if (o.json) std::cout << text << "\n";
    else print(std::cout);
    if (!o.output.empty() && !(std::ofstream(o.output) << text << "\n"))
        return std::cerr << "rpm-bench: cannot write " << o.output << "\n", 1;
    int status = any_errors ? 1 : 0;
    if (o.self_check)
        for (const auto& problem : self_check(text)) std::cerr << "rpm-bench: self-check: " << problem << "\n", status = 1;
    return interrupted ? 130 : status;
}

namespace {

int emit(const Options& o, const Report& report) {
    bool errors = false;
    for (const auto& r : report.results) errors = errors || r.m.errors != 0;
    const int status = emit_report(o, to_json(report).dump(2), [&](std::ostream& out) { print_text(report, out); },
                                   errors, report.interrupted);
    return plot::write_plot(o.plot, plot::figure_of(report), status);
}

} // namespace

int run(const Options& o) {
    std::string cpus = "all";
    if (!pin(o.cpus, cpus)) return std::cerr << "rpm-bench: cannot pin to --cpus " << cpus << "\n", 2;
    std::string error;
    auto target = make_target(o, error);
    if (!target) return std::cerr << "rpm-bench: " << error << "\n", 1;
    auto probe = rpm::Client(target->client).connect(target->uri);
    if (!probe) return std::cerr << "rpm-bench: connect " << target->uri << ": " << probe.error().message() << "\n", 1;
    auto region = probe->open_region(target->region);
    if (!region) return std::cerr << "rpm-bench: open_region " << target->region << ": " << region.error().message() << "\n", 1;

    Report report;
    report.command_line = o.command_line;
    report.mode = target->mode;
    report.uri = target->uri;
    report.transport = std::string(rpm::to_string(*probe->transport()));
    report.region = region_info(*region);
    report.duration = o.duration;
    report.warmup = o.warmup;
    report.ops_limit = o.op_count;
    report.rounds = o.rounds;
    report.completion = std::string(rpm::to_string(o.completion));
    describe_machine(report);
    report.cpus = cpus;
    for (auto s : o.sizes)
        if (s > region->size()) return std::cerr << "rpm-bench: size " << s << " exceeds the region\n", 2;

    const bool persist = std::find(o.ops.begin(), o.ops.end(), Op::persist) != o.ops.end();
    const auto variants = persist_variants(*probe, *target, report.region, persist && o.forced, report.skipped);
    Progress progress(!o.quiet);
    Baselines baselines(report, report.transport, target->uri, o.baseline_server, o.warmup, progress);
    if (!baselines.error().empty()) return std::cerr << "rpm-bench: baselines: " << baselines.error() << "\n", 1;
    const auto opening = baselines.stream(static_cast<std::size_t>(-1));
    baselines.measure(opening, {o.duration, o.op_count});
    // Closed before the measurements: an idle connection is not free. In
    // busy mode its I/O thread and its server session spin for nothing, two
    // more spinning threads next to the measured connection's (4 on the lab
    // VM's 2 vCPUs: send_flush persists then waited whole timeslices, a
    // p50 of 16 ms in 3 of 5 rounds; docs/benchmarks-history.md, "Unsignaled
    // direct sends, one delivery round, an idle connection in busy mode").
    probe->close();
    Runner runner(o, *target, report, baselines, progress, opening);
    bool connected = true;
    for (unsigned threads : o.threads)
        if (!(connected = runner.run_threads(threads, variants)) || report.interrupted) break;
    const int status = emit(o, report);
    return connected ? status : 1;
}

} // namespace rpmbench
