// rpm-kvstore: a persistent-memory hash map replicated to remote replicas
// (kv_store.hpp has the design; docs/replication.md walks through it).
//
//   rpm-kvstore replica --listen tcp://127.0.0.1:7001 --region /dev/shm/b.pool
//   rpm-kvstore replica --listen tcp://127.0.0.1:7002 --region /dev/shm/c.pool
//   rpm-kvstore primary --local /dev/shm/a.pool --replica tcp://127.0.0.1:7001
//       (continued) --replica tcp://127.0.0.1:7002 put colour blue
//       (and get, delete, stats, shell, dump, load, verify likewise)
//   rpm-kvstore offline --region /dev/shm/b.pool dump     (no network)
//
// A replica serves one region named "kv" until SIGINT or SIGTERM. The
// default client id and secret (kvstore:kvstore) are for trying it out on
// 127.0.0.1; give --client / --id --secret otherwise.
#include "commands.hpp"
#include "node.hpp"
#include "remote.hpp"
#include "../../tools/lib/parse_args.hpp"

#include <rpm/server.hpp>

#include <CLI/CLI.hpp>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>

namespace kvcli {

int fail(const std::string& msg, int status) {
    std::cerr << "rpm-kvstore: " << msg << "\n";
    return status;
}

std::optional<std::uint64_t> parse_size(const std::string& s) {
    std::size_t pos = 0;
    std::uint64_t v = 0;
    try { v = std::stoull(s, &pos); } catch (...) { return std::nullopt; }
    const std::string unit = s.substr(pos);
    int shift = 0;
    if (unit == "K" || unit == "k") shift = 10;
    else if (unit == "M" || unit == "m") shift = 20;
    else if (unit == "G" || unit == "g") shift = 30;
    else if (!unit.empty()) return std::nullopt;
    if (v == 0 || v > (UINT64_MAX >> shift)) return std::nullopt;
    return v << shift;
}

rpm::Result<rpm::ServerOptions> replica_server_options(const ReplicaArgs& a) {
    auto colon = a.client.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == a.client.size())
        return rpm::Error(rpm::errc::invalid_argument, "--client " + a.client + ": expected ID:SECRET");
    rpm::ServerOptions o;
    o.listen = {a.listen};
    if (!a.fence_dir.empty()) o.fence_dir = a.fence_dir;
    o.secrets[a.client.substr(0, colon)] = a.client.substr(colon + 1);
    rpm::RegionSpec r{kRegionName, a.region, 0, false, {}};
    auto size = parse_size(a.size);
    if (!size) return rpm::Error(rpm::errc::invalid_argument, "--size " + a.size + " is not like 65536, 64M or 1G");
    if (*size < kv::kMinRegionSize)
        return rpm::Error(rpm::errc::invalid_argument, "--size " + a.size + ": a store needs at least 64K");
    std::error_code ec;
    if (!std::filesystem::exists(a.region, ec)) {  // an existing region keeps its size
        r.size = *size;
        r.create = true;
    }
    o.regions.push_back(std::move(r));
    return o;
}

namespace {

int replica(const ReplicaArgs& a) {
    auto o = replica_server_options(a);
    if (!o) return fail(o.error().message());
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);  // before any server thread starts
    auto server = rpm::Server::start(std::move(*o));
    if (!server) return fail(server.error().message(), 3);
    // Server::start accepted the URI, so its scheme parses.
    const auto port = server->port(*rpm::parse_scheme(a.listen.substr(0, a.listen.find(':'))));
    std::cout << "rpm-kvstore replica: serving region " << kRegionName << " (" << a.region << ", "
              << server->regions().front().size << " bytes) on " << a.listen.substr(0, a.listen.rfind(':') + 1) << port
              << std::endl;
    if (!a.port_file.empty()) {
        std::ofstream(a.port_file + ".tmp") << port << "\n";
        std::rename((a.port_file + ".tmp").c_str(), a.port_file.c_str());  // readers never see half a number
    }
    int sig = 0;
    sigwait(&set, &sig);
    std::cout << "rpm-kvstore replica: stopping (signal " << sig << ")" << std::endl;
    server->stop();
    return 0;
}

void add_replica_options(CLI::App* r, ReplicaArgs& a) {
    r->add_option("--listen", a.listen, "tcp://HOST:PORT or rdma://HOST:PORT (port 0 = any)")->required();
    r->add_option("--region", a.region, "region file (created with --size if missing)")->required();
    r->add_option("--size", a.size, "size when creating it (default 64M)");
    r->add_option("--client", a.client, "ID:SECRET the primary connects with (default kvstore:kvstore)");
    r->add_option("--port-file", a.port_file, "write the bound port here once listening");
    r->add_option("--fence-dir", a.fence_dir,
                  "keep the region's fencing term here (default: REGION.fence beside the region file)")
        ->check(CLI::ExistingDirectory);
}

void add_primary_options(CLI::App* p, PrimaryArgs& a) {
    p->add_option("--local", a.local, "this node's region file (created with --size if missing)")->required();
    p->add_option("--size", a.size, "region size when creating it, header included (default 64M)");
    p->add_option("--replica", a.replicas, "tcp://HOST:PORT or rdma://HOST:PORT of an rpm-kvstore replica (repeatable)")
        ->required();
    p->add_option("--durability", a.durability, "majority, all or K, with +local (default) or -local");
    p->add_option("--id", a.id, "client id the replicas know (default kvstore)");
    p->add_option("--secret", a.secret, "its secret (default kvstore; visible in ps)");
    p->add_option("--heartbeat-ms", a.heartbeat_ms, "heartbeat interval (default 100)")->check(CLI::PositiveNumber);
    p->add_option("--failure-timeout-ms", a.failure_timeout_ms, "a replica silent this long leaves (default 1000)")
        ->check(CLI::PositiveNumber);
    p->add_option("--reconnect-ms", a.reconnect_ms, "reconnect a failed replica this often (default 500)")
        ->check(CLI::PositiveNumber);
    p->add_option("--dial-timeout-ms", a.dial_timeout_ms,
                  "give up a reconnect attempt after this long (default: twice the failure timeout, at least 1000)")
        ->check(CLI::PositiveNumber);
    p->add_option("--degraded-ms", a.degraded_ms,
                  "report a replica degraded when its round trips' p90 passes this (default: failure timeout / 10)")
        ->check(CLI::PositiveNumber);
    p->add_option("--fencing-term", a.fencing_term,
                  "this primary's fencing term: larger than any earlier primary's; the replicas then "
                  "refuse every older one (docs/replication.md, \"Fencing\"; default 0: none)");
}

void add_node_options(CLI::App* n, NodeArgs& a) {
    n->add_option("--name", a.name, "this node's name, unique in the group")->required();
    n->add_option("--coordinator", a.coordinator, "etcd://HOST:PORT[,HOST:PORT...] (etcd v3's JSON gateway)")
        ->required();
    n->add_option("--election", a.election, "the group's election in etcd (default rpm-kvstore)");
    n->add_option("--lease-ttl", a.lease_ttl_s, "seconds a silent primary keeps its leadership (default 2)")
        ->check(CLI::Range(2, 600));
    n->add_option("--listen", a.replica.listen, "tcp://HOST:PORT or rdma://HOST:PORT its region is served on")
        ->required();
    n->add_option("--region", a.replica.region, "its region file (created with --size if missing)")->required();
    n->add_option("--size", a.replica.size, "size when creating it (default 64M)");
    n->add_option("--fence-dir", a.replica.fence_dir, "keep the region's fencing term here (default: beside it)")
        ->check(CLI::ExistingDirectory);
    n->add_option("--serve", a.serve, "HOST:PORT clients reach it on (RESP, as redis-cli speaks)")->required();
    n->add_option("--member", a.members, "every node's --listen URI, this one's included (repeatable)")->required();
    n->add_option("--durability", a.primary.durability, "when leading: majority (default), all or K, +local/-local");
    n->add_option("--heartbeat-ms", a.primary.heartbeat_ms, "when leading (default 100)")->check(CLI::PositiveNumber);
    n->add_option("--failure-timeout-ms", a.primary.failure_timeout_ms, "when leading (default 1000)")
        ->check(CLI::PositiveNumber);
    n->add_option("--reconnect-ms", a.primary.reconnect_ms, "when leading (default 500)")->check(CLI::PositiveNumber);
    n->add_option("--dial-timeout-ms", a.primary.dial_timeout_ms, "when leading (default: 2 x failure timeout, >= 1000)")
        ->check(CLI::PositiveNumber);
    n->add_option("--degraded-ms", a.primary.degraded_ms, "when leading (default: failure timeout / 10)")
        ->check(CLI::PositiveNumber);
    n->add_option("--fault", a.fault,
                  "tests only: ignore-lease, no-fencing (no terms either), or ack-before-commit "
                  "(answer +OK before the commit, and keep it if the commit fails)")
        ->check(CLI::IsMember({"", "ignore-lease", "no-fencing", "ack-before-commit"}));
}

void add_remote_options(CLI::App* c, RemoteArgs& a, bool node_option) {
    auto* co = c->add_option("--coordinator", a.coordinator, "etcd://HOST:PORT[,...]: find the primary there");
    c->add_option("--election", a.election, "the group's election (default rpm-kvstore)");
    c->add_option("--timeout-ms", a.timeout_ms, "give up a command (load: a reply) after this (default 10000)")
        ->check(CLI::PositiveNumber);
    if (!node_option) return void(co->required());
    auto* no = c->add_option("--node", a.node, "HOST:PORT of a node: start there (no etcd), following redirects");
    c->add_flag("--follow,!--no-follow", a.follow, "--no-follow: one attempt at --node, no redirect or retry");
    co->excludes(no);
}

// A file load can append to, checked before the store opens: not a
// directory, in a directory that exists (open(2) says the rest).
const CLI::Validator writable_file_path(
    [](std::string& path) -> std::string {
        namespace fs = std::filesystem;
        std::error_code ec;
        if (fs::is_directory(path, ec)) return path + " is a directory";
        const auto dir = fs::path(path).parent_path();
        if (!dir.empty() && !fs::is_directory(dir, ec)) return dir.string() + " is not a directory";
        return {};
    },
    "FILE");

// KEY and VALUE of put, get and delete, and the --acked file of verify:
// whichever subcommand was given filled them in.
struct Words {
    std::string key, value, acked;
};

// put, get and delete, which primary and client both have.
struct KeyCommands {
    CLI::App *put = nullptr, *get = nullptr, *del = nullptr;
};

KeyCommands add_key_commands(CLI::App* parent, Words& w) {
    auto* put = parent->add_subcommand("put", "store VALUE under KEY (returns once durable)");
    put->add_option("key", w.key)->required();
    put->add_option("value", w.value)->required();
    auto* get = parent->add_subcommand("get", "print KEY's value (exit 1: not found)");
    get->add_option("key", w.key)->required();
    auto* del = parent->add_subcommand("delete", "delete KEY (exit 1: not found)");
    del->add_option("key", w.key)->required();
    return {put, get, del};
}

// load's options that primary and client share (primary adds its own).
CLI::App* add_load_command(CLI::App* parent, LoadArgs& a) {
    auto* load = parent->add_subcommand("load", "put keys k<RUN>-<I>, logging each acknowledged one to --acked");
    load->add_option("--count", a.count, "puts to make")->required()->check(CLI::PositiveNumber);
    load->add_option("--acked", a.acked, "file the acknowledged keys are appended to")->required();
    load->add_option("--run", a.run, "a number in every key and value (a fresh one per run)");
    return load;
}

CLI::App* add_verify_command(CLI::App* parent, std::string& acked) {
    auto* verify = parent->add_subcommand("verify", "check that every key in --acked holds its value");
    verify->add_option("--acked", acked, "a file load wrote")->required()->check(CLI::ExistingFile);
    return verify;
}

// `primary OPTIONS COMMAND`: what its options and COMMAND's fill in, and the
// commands, to tell which one was given. CLI11 keeps pointers into it: it
// stays where main made it.
struct PrimaryCli {
    PrimaryArgs args;
    LoadArgs load_args;
    CLI::App* cmd = nullptr;
    KeyCommands keys;
    CLI::App *stats = nullptr, *shell = nullptr, *dump = nullptr, *load = nullptr, *verify = nullptr;
};

void add_primary(CLI::App& app, PrimaryCli& p, Words& w) {
    p.cmd = app.add_subcommand("primary", "open the store on --local, replicated to each --replica, and run COMMAND");
    add_primary_options(p.cmd, p.args);
    p.cmd->require_subcommand(1);
    p.keys = add_key_commands(p.cmd, w);
    p.stats = p.cmd->add_subcommand("stats", "records, keys, space, generation, LSN frontiers, replicas");
    p.shell = p.cmd->add_subcommand("shell", "read put/get/delete/stats/dump lines from stdin");
    p.dump = p.cmd->add_subcommand("dump", "print every live KEY=VALUE, sorted");
    p.load = add_load_command(p.cmd, p.load_args);
    p.load->add_option("--fault", p.load_args.fault, "ack-before-quorum: acknowledge each put before its commit (a planted bug for negative controls)")
        ->check(CLI::IsMember({"", "ack-before-quorum"}));
    p.load->add_option("--timeline", p.load_args.timeline,
                       "append a line per acknowledged put to FILE: \"<steady-clock ns at the ack> <latency ns>\" "
                       "(the put's duration); written in blocks, at most 4096 puts or 100 ms behind the load")
        ->type_name("FILE")
        ->check(writable_file_path);
    p.verify = add_verify_command(p.cmd, w.acked);
    for (auto* sub : {p.keys.put, p.keys.get, p.keys.del, p.stats, p.shell, p.dump, p.load, p.verify})
        sub->fallthrough();  // primary's options may come after COMMAND too
}

int run_primary(const PrimaryCli& p, const Words& w) {
    int status = 0;
    auto store = open_primary(p.args, status);
    if (!store) return status;
    if (*p.keys.put) return put(*store, w.key, w.value);
    if (*p.keys.get) return get(*store, w.key);
    if (*p.keys.del) return kvcli::remove(*store, w.key);
    if (*p.stats) return stats(*store);
    if (*p.shell) return shell(*store);
    if (*p.dump) return dump(*store);
    if (*p.load) return load(*store, p.load_args);
    return verify(*store, w.acked);
}

// `client OPTIONS COMMAND`, as PrimaryCli is primary's.
struct ClientCli {
    RemoteArgs args;
    LoadArgs load_args;
    CLI::App* cmd = nullptr;
    KeyCommands keys;
    CLI::App *info = nullptr, *load = nullptr, *verify = nullptr;
};

void add_client(CLI::App& app, ClientCli& c, Words& w) {
    c.cmd = app.add_subcommand("client", "talk to a group's primary over RESP: put, get, delete, info, load, verify");
    add_remote_options(c.cmd, c.args, true);
    c.cmd->require_subcommand(1);
    c.keys = add_key_commands(c.cmd, w);
    c.info = c.cmd->add_subcommand("info", "what the primary says of itself and its members");
    c.load = add_load_command(c.cmd, c.load_args);
    c.load->add_option("--pipeline", c.load_args.pipeline,
                       "write N SETs before reading their N replies, in order; a key is logged to --acked as its "
                       "+OK is read (default 1: one put at a time; at most 1024)")
        ->type_name("N")
        ->check(CLI::Range(1u, kMaxPipeline));
    c.verify = add_verify_command(c.cmd, w.acked);
    for (auto* sub : {c.keys.put, c.keys.get, c.keys.del, c.info, c.load, c.verify}) sub->fallthrough();
}

int run_client(const ClientCli& c, const Words& w) {
    if (c.args.coordinator.empty() && c.args.node.empty()) return fail("client: give --coordinator or --node");
    if (*c.load) return remote_load(c.args, c.load_args);
    if (*c.verify) return remote_verify(c.args, w.acked);
    const auto cmd = *c.keys.put ? RemoteCommand::put : *c.keys.get ? RemoteCommand::get
                   : *c.keys.del ? RemoteCommand::remove : RemoteCommand::info;
    return remote(c.args, cmd, w.key, w.value);
}

// `offline --region PATH dump | verify --acked FILE`.
struct OfflineCli {
    std::string region;
    CLI::App *cmd = nullptr, *verify = nullptr;
};

void add_offline(CLI::App& app, OfflineCli& o, std::string& acked) {
    o.cmd = app.add_subcommand("offline", "read a region file with no replicas and no network");
    o.cmd->add_option("--region", o.region, "a member's region file")->required()->check(CLI::ExistingFile);
    o.cmd->require_subcommand(1);
    auto* dump = o.cmd->add_subcommand("dump", "print every live KEY=VALUE in its log, sorted");
    o.verify = add_verify_command(o.cmd, acked);
    dump->fallthrough();
    o.verify->fallthrough();
}

} // namespace
} // namespace kvcli

int main(int argc, char** argv) {
    using namespace kvcli;
    CLI::App app{"rpm-kvstore: a persistent-memory hash map replicated with rpm (an example)"};
    app.require_subcommand(1);
    Words words;
    ReplicaArgs ra;
    auto* rep = app.add_subcommand("replica", "serve region \"kv\" to a primary until SIGINT/SIGTERM");
    add_replica_options(rep, ra);
    PrimaryCli pri;
    add_primary(app, pri, words);
    NodeArgs na;
    auto* node_cmd = app.add_subcommand("node", "a member of a group with an elected primary (etcd), until SIGINT/SIGTERM");
    add_node_options(node_cmd, na);
    ClientCli cli;
    add_client(app, cli, words);
    RemoteArgs sa;
    auto* status_cmd = app.add_subcommand("status", "the group's leader and term (from etcd), and its members");
    add_remote_options(status_cmd, sa, false);
    OfflineCli off;
    add_offline(app, off, words.acked);
    if (auto done = rpm_tools::parse_args(app, argc, argv)) return *done;

    if (*rep) return replica(ra);
    if (*node_cmd) return node(std::move(na));
    if (*status_cmd) return status(sa);
    if (*cli.cmd) return run_client(cli, words);
    if (*off.cmd) return offline(off.region, *off.verify ? std::optional(words.acked) : std::nullopt);
    return run_primary(pri, words);
}
