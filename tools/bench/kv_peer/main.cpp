// rpm-kvbench: the peer benchmark's load generator (issue 19). A fixed
// number of clients, each with its own connection and thread, put values
// of one size as fast as the system acknowledges them durable; p50, p99,
// p99.9, mean and throughput of those puts. tools/bench/kv-peer starts
// rpm-kvstore, Redis and etcd on 127.0.0.1 and runs this against each.
//
//   rpm-kvbench --target redis --addr 127.0.0.1:6379 --clients 4 --value-size 64 --duration 5
//   rpm-kvbench --target etcd --addr 127.0.0.1:2379 --addr 127.0.0.1:22379 --json
//   rpm-kvbench --target rpm-kvstore --find-leader --addr A --addr B --addr C   # prints the leader's
//   rpm-kvbench --target etcd --find-leader --addr A --addr B --addr C          # (etcd: the Raft leader)
//   rpm-kvbench --target etcd --probe --addr A --addr B --addr C                # exit 0 once all answer
//   rpm-kvbench --target rpm-kvstore --op ping --addr A   # the round trip under any put
//   rpm-kvbench --summarize runs.jsonl [--json]                                 # the script's table
#include "clients.hpp"
#include "etcd_client.hpp"
#include "load.hpp"
#include "report.hpp"
#include "../../lib/parse_args.hpp"

#include <CLI/CLI.hpp>

#include <iostream>

namespace {

using namespace kvbench;

struct Modes {
    bool probe = false, find_leader = false;
    std::string summarize;
};

// --probe: every --addr answers (the script polls this until it does).
int probe_all(const Options& o, const std::vector<Address>& at) {
    int status = 0;
    for (const auto& a : at)
        if (auto why = probe(o, a); !why.empty()) std::cerr << "rpm-kvbench: " << a.text() << ": " << why << "\n", status = 1;
    return status;
}

// --find-leader: the rpm-kvstore node that takes a SET (others refuse with
// -NOTLEADER), or the etcd member whose status names itself leader; its
// address goes to stdout.
int find_leader(const Options& o, const std::vector<Address>& at) {
    for (const auto& a : at) {
        const auto why = o.target == "etcd" ? etcd_leader(o, a) : try_leader(o, a);
        if (why.empty()) return std::cout << a.text() << "\n", 0;
        std::cerr << "rpm-kvbench: " << a.text() << ": " << why << "\n";
    }
    std::cerr << "rpm-kvbench: no node took the put\n";
    return 1;
}

int load(const Options& o) {
    const auto r = run_load(o);
    const auto j = result_json(o, r);
    if (o.json) std::cout << j.dump() << "\n";  // also when it failed: the script keeps the record
    else if (r.latency.count() > 0) print_text(std::cout, j);
    if (!r.error.empty()) return std::cerr << "rpm-kvbench: " << o.target << " run failed: " << r.error << "\n", 1;
    if (r.latency.count() == 0) return std::cerr << "rpm-kvbench: no put completed in the measured time\n", 1;
    return 0;
}

void add_options(CLI::App& app, Options& o, Modes& m) {
    app.add_option("--target", o.target, "system under test")->check(CLI::IsMember({"rpm-kvstore", "redis", "etcd"}));
    app.add_option("--op", o.op, "put (durable puts), or ping (rpm-kvstore, redis: bare PINGs, the round trip any put costs at least)")
        ->check(CLI::IsMember({"put", "ping"}));
    app.add_option("--addr", o.addrs, "HOST:PORT (repeatable; the load goes to the first: redis' master, etcd's first member)");
    app.add_option("--clients", o.clients, "concurrent clients, each its own connection and thread")->check(CLI::Range(1, 1024));
    app.add_option("--value-size", o.value_size, "bytes per value")->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20));
    app.add_option("--duration", o.duration, "measured seconds")->check(CLI::Range(0.01, 3600.0));
    app.add_option("--warmup", o.warmup, "unmeasured seconds first")->check(CLI::Range(0.0, 3600.0));
    app.add_option("--wait-replicas", o.wait_replicas, "redis: WAIT for this many replicas")->check(CLI::Range(0, 64));
    app.add_option("--timeout", o.reply_timeout, "seconds without a reply before a put fails")->check(CLI::Range(0.1, 600.0));
    app.add_flag("--json", o.json, "one JSON line per run (with --summarize: runs, summary and ratios)");
    app.add_flag("--probe", m.probe, "exit 0 when every --addr answers (RESP: PING; etcd: status with a leader)");
    app.add_flag("--find-leader", m.find_leader, "print the leader's --addr (rpm-kvstore: the node that takes a SET; etcd: the Raft leader)");
    app.add_option("--summarize", m.summarize, "print the table of the JSON lines (one run each) in FILE");
}

} // namespace

int main(int argc, char** argv) {
    CLI::App app{"rpm-kvbench: durable-put latency and throughput of rpm-kvstore, Redis and etcd"};
    Options o;
    Modes m;
    add_options(app, o, m);
    if (auto done = rpm_tools::parse_args(app, argc, argv)) return *done;
    if (!m.summarize.empty()) return summarize(m.summarize, o.json, std::cout, std::cerr);
    if (o.addrs.empty()) return std::cerr << "rpm-kvbench: --addr HOST:PORT is required\n", 2;
    std::vector<Address> at(o.addrs.size());
    for (std::size_t i = 0; i < at.size(); ++i)
        if (!parse_address(o.addrs[i], at[i])) return std::cerr << "rpm-kvbench: --addr " << o.addrs[i] << ": expected HOST:PORT\n", 2;
    if (o.op == "ping" && o.target == "etcd") return std::cerr << "rpm-kvbench: --op ping is for the RESP targets (rpm-kvstore, redis)\n", 2;
    if (m.probe) return probe_all(o, at);
    if (m.find_leader) {
        if (o.target == "redis") return std::cerr << "rpm-kvbench: --find-leader is for rpm-kvstore and etcd (Redis' master is the one started so)\n", 2;
        return find_leader(o, at);
    }
    return load(o);
}
