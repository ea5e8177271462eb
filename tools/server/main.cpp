// rpm-server: serve persistent-memory regions over tcp:// (and rdma://).
//
//   rpm-server --listen tcp://127.0.0.1:7000 --region kv=/dev/shm/kv.pool:64M
//              (continued) --secrets-file secrets.txt
//
// Runs until SIGINT or SIGTERM. Secrets: "--client ID:SECRET" (visible in
// ps; for tests) or "--secrets-file FILE" with one ID:SECRET per line.
//
//   rpm-server reset-term --region kv=/dev/shm/kv.pool --fencing-term 7 [--yes]
//
// sets a region's fencing term while no server serves it (reset_term.cpp).
#include "../lib/parse_args.hpp"
#include "args.hpp"
#include "reset_term.hpp"

#include <rpm/server.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <csignal>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

namespace {

using rpm_server::parse_region;

// What the serving command line says, before it is checked.
struct ServeArgs {
    std::vector<std::string> listen, regions, clients, allow, fencers;
    std::string secrets_file, tls_cert, tls_key, config, sysfs_root = "/", port_file, fence_dir;
    std::string max_fencing_term_step;
    unsigned io_threads = 0, handshake_ms = 10000;
    std::size_t max_connections = 1024, max_handshakes = 32, max_queued = 4u << 20;
    std::string completion = "adaptive";
};

bool add_secret(const std::string& line, rpm::ServerOptions& o) {
    auto colon = line.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == line.size()) return false;
    o.secrets[line.substr(0, colon)] = line.substr(colon + 1);
    return true;
}

int fail(const std::string& msg) {
    std::cerr << "rpm-server: " << msg << "\n";
    return 2;
}

// The port of the listener `uri` (a --listen value the server accepted) got.
std::uint16_t port_of(const rpm::Server& s, const std::string& uri) {
    const auto scheme = rpm::parse_scheme(uri.substr(0, uri.find(':')));
    return scheme ? s.port(*scheme) : 0;
}

void print_regions(const rpm::Server& s) {
    for (const auto& r : s.regions()) {
        std::cout << "region " << r.name << ": " << r.path << ", " << r.size << " bytes, persistence domain "
                  << rpm::to_string(r.domain) << "\n"
                  << "  tcp: the server stores the bytes, then " << rpm::flush::to_string(r.tcp_persist) << "\n"
                  << "  rdma: " << rpm::flush::to_string(r.rdma_decision.method) << ", server persist "
                  << rpm::flush::to_string(r.rdma_decision.server_persist) << "\n"
                  << "  why: " << r.rdma_decision.reason << "\n";
    }
}

// --listen and --region are required to serve, not for reset-term: CLI11
// would ask for them there too, so they are checked after parsing.
void add_serve_options(CLI::App& app, ServeArgs& a) {
    app.add_option("--listen", a.listen,
                   "tcp://HOST:PORT or rdma://HOST:PORT (required to serve; repeatable; port 0 = any)");
    app.add_option("--region", a.regions,
                   "NAME=PATH[:SIZE] (required to serve; repeatable; SIZE creates a missing file)");
    app.add_option("--client", a.clients, "ID:SECRET (repeatable; prefer --secrets-file)");
    app.add_option("--secrets-file", a.secrets_file, "file of ID:SECRET lines")->check(CLI::ExistingFile);
    app.add_option("--allow", a.allow, "REGION=ID[,ID...]: only these clients get REGION (default: all)");
    app.add_option("--tls-cert", a.tls_cert, "PEM certificate: serve tcp:// over TLS")->check(CLI::ExistingFile);
    app.add_option("--tls-key", a.tls_key, "PEM private key for --tls-cert")->check(CLI::ExistingFile);
    app.add_option("--config", a.config, "JSON overrides (docs/flush-methods.md)")->check(CLI::ExistingFile);
    app.add_option("--sysfs-root", a.sysfs_root, "read sysfs under DIR")->check(CLI::ExistingDirectory);
    app.add_option("--fence-dir", a.fence_dir,
                   "keep each region's fencing term in DIR/NAME.fence (default: PATH.fence beside a "
                   "file region; a devdax region needs it to be fenced)")
        ->check(CLI::ExistingDirectory);
    app.add_option("--fencer", a.fencers,
                   "ID: only these clients may open a region with a fencing term (repeatable; default: every client "
                   "the region is granted to)")
        ->type_name("ID");
    app.add_option("--max-fencing-term-step", a.max_fencing_term_step,
                   "refuse a fencing term more than N above a region's current one (default 1099511627776 = 2^40)")
        ->type_name("N");
    app.add_option("--port-file", a.port_file, "write the bound port of the first --listen here once listening");
    app.add_option("--io-threads", a.io_threads, "I/O threads per tcp:// listener (default 0: one per CPU)")
        ->check(CLI::Range(0u, 1024u));
    app.add_option("--handshake-timeout-ms", a.handshake_ms,
                   "close a connection not authenticated within this many ms (default 10000)")
        ->check(CLI::Range(1u, 3600000u));
    app.add_option("--max-connections", a.max_connections, "connections per listener at once, tcp:// and rdma:// each (default 1024)")
        ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20));
    app.add_option("--max-handshakes-per-address", a.max_handshakes,
                   "tcp:// connections from one address still authenticating (default 32)")
        ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20));
    app.add_option("--completion", a.completion,
                   "rdma:// sessions: busy (spin on the completion queue), adaptive (spin briefly, then sleep) or "
                   "event (sleep for every completion)")
        ->check(CLI::IsMember({"adaptive", "busy", "event"}))->capture_default_str();
    app.add_option("--max-queued-answer-bytes", a.max_queued,
                   "answer bytes a connection may leave unread before the server stops reading its requests "
                   "(default 4194304)")
        ->check(CLI::Range(std::size_t{4096}, std::size_t{1} << 34));
}

// The plain settings; 0, or the exit status after a message.
int base_options(const ServeArgs& a, rpm::ServerOptions& o) {
    o.listen = a.listen;
    o.sysfs_root = a.sysfs_root;
    o.io_threads = a.io_threads;
    o.completion = *rpm::parse_completion_mode(a.completion);
    o.handshake_timeout = std::chrono::milliseconds(a.handshake_ms);
    o.max_connections = a.max_connections;
    o.max_unauthenticated_per_address = a.max_handshakes;
    o.max_queued_answer_bytes = a.max_queued;
    o.on_log = [](std::string_view line) { std::cerr << "rpm-server: " << line << "\n"; };
    if (!a.config.empty()) o.config = a.config;
    if (!a.fence_dir.empty()) o.fence_dir = a.fence_dir;
    if (!a.fencers.empty()) o.fencers = std::set<std::string>(a.fencers.begin(), a.fencers.end());
    if (!a.max_fencing_term_step.empty() &&
        (!rpm_server::parse_u64(a.max_fencing_term_step, o.max_fencing_term_step) || o.max_fencing_term_step == 0))
        return fail("--max-fencing-term-step " + a.max_fencing_term_step +
                    ": expected a whole number from 1 to 18446744073709551615");
    if (a.tls_cert.empty() != a.tls_key.empty()) return fail("--tls-cert and --tls-key go together");
    if (!a.tls_cert.empty()) o.tls = rpm::TlsOptions{a.tls_cert, a.tls_key};
    return 0;
}

// Regions, clients and grants; 0, or the exit status after a message.
int access_options(const ServeArgs& a, rpm::ServerOptions& o) {
    for (const auto& spec : a.regions) {
        rpm::RegionSpec r;
        std::string why;
        if (!parse_region(spec, r, why)) return fail("--region " + spec + ": " + why);
        o.regions.push_back(std::move(r));
    }
    for (const auto& c : a.clients)
        if (!add_secret(c, o)) return fail("--client " + c + ": expected ID:SECRET");
    if (!a.secrets_file.empty()) {
        std::ifstream in(a.secrets_file);
        for (std::string line; std::getline(in, line);)
            if (!line.empty() && line[0] != '#' && !add_secret(line, o))
                return fail(a.secrets_file + ": a line is not ID:SECRET");
    }
    for (const auto& al : a.allow) {
        auto eq = al.find('=');
        auto it = std::find_if(o.regions.begin(), o.regions.end(), [&](auto& r) { return r.name == al.substr(0, eq); });
        if (eq == std::string::npos || it == o.regions.end()) return fail("--allow " + al + ": expected REGION=ID,... for a --region");
        std::stringstream ids(al.substr(eq + 1));
        for (std::string id; std::getline(ids, id, ',');) it->clients.insert(id);
    }
    return 0;
}

int serve(const ServeArgs& a, rpm::ServerOptions o) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);  // before any server thread starts

    auto server = rpm::Server::start(std::move(o));
    if (!server) return fail(server.error().message());
    for (const auto& uri : a.listen)
        std::cout << "rpm-server: listening on " << uri.substr(0, uri.rfind(':') + 1)
                  << port_of(*server, uri) << "\n";
    print_regions(*server);
    std::cout.flush();
    if (!a.port_file.empty()) {
        const auto& first = a.listen.front();  // the port of the first --listen, whatever its scheme
        std::ofstream(a.port_file + ".tmp") << port_of(*server, first) << "\n";
        std::rename((a.port_file + ".tmp").c_str(), a.port_file.c_str());  // readers never see half a number
    }
    int sig = 0;
    sigwait(&set, &sig);
    std::cout << "rpm-server: stopping (signal " << sig << ")\n";
    server->stop();
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    CLI::App app{"rpm-server: serve persistent-memory regions to authenticated rpm clients"};
    ServeArgs a;
    add_serve_options(app, a);
    rpm_server::ResetTermArgs ra;
    auto* reset = rpm_server::add_reset_term(app, ra);
    if (auto done = rpm_tools::parse_args(app, argc, argv)) return *done;
    if (reset->parsed()) {
        for (const CLI::Option* opt : app.get_options())
            if (opt->count() > 0)
                return fail(opt->get_name() + " before reset-term is a serving option; reset-term takes its own "
                            "after it: reset-term --region NAME=PATH --fencing-term N [--fence-dir DIR] [--yes]");
        return rpm_server::reset_term(ra);
    }
    for (const char* required : {"--listen", "--region"})
        if (app.get_option(required)->count() == 0) return app.exit(CLI::RequiredError(required)) == 0 ? 0 : 2;
    rpm::ServerOptions o;
    if (int status = base_options(a, o)) return status;
    if (int status = access_options(a, o)) return status;
    return serve(a, std::move(o));
}
