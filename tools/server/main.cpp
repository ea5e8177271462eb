// rpm-server: serve persistent-memory regions over tcp:// (and rdma://).
//
//   rpm-server --listen tcp://127.0.0.1:7000 --region kv=/dev/shm/kv.pool:64M
//              (continued) --secrets-file secrets.txt
//
// Runs until SIGINT or SIGTERM. Secrets: "--client ID:SECRET" (visible in
// ps; for tests) or "--secrets-file FILE" with one ID:SECRET per line.
#include "../lib/parse_args.hpp"

#include <rpm/server.hpp>

#include <CLI/CLI.hpp>

#include <csignal>
#include <fstream>
#include <iostream>

namespace {

// "64M", "1G", "4096" -> bytes; 0 on junk.
std::size_t parse_size(const std::string& s) {
    std::size_t pos = 0;
    unsigned long long v = 0;
    try { v = std::stoull(s, &pos); } catch (...) { return 0; }
    std::string unit = s.substr(pos);
    if (unit == "K" || unit == "k") v <<= 10;
    else if (unit == "M" || unit == "m") v <<= 20;
    else if (unit == "G" || unit == "g") v <<= 30;
    else if (!unit.empty()) return 0;
    return static_cast<std::size_t>(v);
}

// NAME=PATH[:SIZE]; a SIZE means: create the file if it is missing.
bool parse_region(const std::string& spec, rpm::ServedRegion& r, std::string& why) {
    auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) return why = "expected NAME=PATH[:SIZE]", false;
    r.name = spec.substr(0, eq);
    std::string rest = spec.substr(eq + 1);
    auto colon = rest.rfind(':');
    if (colon != std::string::npos) {
        r.size = parse_size(rest.substr(colon + 1));
        if (r.size == 0) return why = "size '" + rest.substr(colon + 1) + "' is not like 4096, 64M or 1G", false;
        r.create = true;
        rest = rest.substr(0, colon);
    }
    r.path = rest;
    return true;
}

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

} // namespace

int main(int argc, char** argv) {
    CLI::App app{"rpm-server: serve persistent-memory regions to authenticated rpm clients"};
    std::vector<std::string> listen, regions, clients, allow;
    std::string secrets_file, tls_cert, tls_key, config, sysfs_root = "/", port_file, fence_dir;
    app.add_option("--listen", listen, "tcp://HOST:PORT or rdma://HOST:PORT (repeatable; port 0 = any)")->required();
    app.add_option("--region", regions, "NAME=PATH[:SIZE] (repeatable; SIZE creates a missing file)")->required();
    app.add_option("--client", clients, "ID:SECRET (repeatable; prefer --secrets-file)");
    app.add_option("--secrets-file", secrets_file, "file of ID:SECRET lines")->check(CLI::ExistingFile);
    app.add_option("--allow", allow, "REGION=ID[,ID...]: only these clients get REGION (default: all)");
    app.add_option("--tls-cert", tls_cert, "PEM certificate: serve tcp:// over TLS")->check(CLI::ExistingFile);
    app.add_option("--tls-key", tls_key, "PEM private key for --tls-cert")->check(CLI::ExistingFile);
    app.add_option("--config", config, "JSON overrides (docs/flush-methods.md)")->check(CLI::ExistingFile);
    app.add_option("--sysfs-root", sysfs_root, "read sysfs under DIR")->check(CLI::ExistingDirectory);
    app.add_option("--fence-dir", fence_dir,
                   "keep each region's primary term (fencing) in DIR/NAME.fence (default: PATH.fence beside a "
                   "file region; a devdax region needs it to be fenced)")
        ->check(CLI::ExistingDirectory);
    app.add_option("--port-file", port_file, "write the bound port of the first --listen here once listening");
    unsigned io_threads = 0;
    app.add_option("--io-threads", io_threads, "I/O threads per tcp:// listener (default 0: one per CPU)")
        ->check(CLI::Range(0u, 1024u));
    unsigned handshake_ms = 10000;
    std::size_t max_connections = 1024, max_handshakes = 32;
    app.add_option("--handshake-timeout-ms", handshake_ms,
                   "close a connection not authenticated within this many ms (default 10000)")
        ->check(CLI::Range(1u, 3600000u));
    app.add_option("--max-connections", max_connections, "connections per listener at once, tcp:// and rdma:// each (default 1024)")
        ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20));
    app.add_option("--max-handshakes-per-address", max_handshakes,
                   "tcp:// connections from one address still authenticating (default 32)")
        ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20));
    std::string completion = "adaptive";
    app.add_option("--completion", completion,
                   "rdma:// sessions: busy (spin on the completion queue), adaptive (spin briefly, then sleep) or "
                   "event (sleep for every completion)")
        ->check(CLI::IsMember({"adaptive", "busy", "event"}))->capture_default_str();
    std::size_t max_queued = 4u << 20;
    app.add_option("--max-queued-answer-bytes", max_queued,
                   "answer bytes a connection may leave unread before the server stops reading its requests "
                   "(default 4194304)")
        ->check(CLI::Range(std::size_t{4096}, std::size_t{1} << 34));
    if (auto done = rpm_tools::parse_args(app, argc, argv)) return *done;

    rpm::ServerOptions o;
    o.listen = listen;
    o.sysfs_root = sysfs_root;
    o.io_threads = io_threads;
    o.completion = *rpm::parse_completion_mode(completion);
    o.handshake_timeout = std::chrono::milliseconds(handshake_ms);
    o.max_connections = max_connections;
    o.max_unauthenticated_per_address = max_handshakes;
    o.max_queued_answer_bytes = max_queued;
    o.on_log = [](std::string_view line) { std::cerr << "rpm-server: " << line << "\n"; };
    if (!config.empty()) o.config = config;
    if (!fence_dir.empty()) o.fence_dir = fence_dir;
    for (const auto& spec : regions) {
        rpm::ServedRegion r;
        std::string why;
        if (!parse_region(spec, r, why)) return fail("--region " + spec + ": " + why);
        o.regions.push_back(std::move(r));
    }
    for (const auto& c : clients)
        if (!add_secret(c, o)) return fail("--client " + c + ": expected ID:SECRET");
    if (!secrets_file.empty()) {
        std::ifstream in(secrets_file);
        for (std::string line; std::getline(in, line);)
            if (!line.empty() && line[0] != '#' && !add_secret(line, o))
                return fail(secrets_file + ": a line is not ID:SECRET");
    }
    for (const auto& a : allow) {
        auto eq = a.find('=');
        auto it = std::find_if(o.regions.begin(), o.regions.end(), [&](auto& r) { return r.name == a.substr(0, eq); });
        if (eq == std::string::npos || it == o.regions.end()) return fail("--allow " + a + ": expected REGION=ID,... for a --region");
        std::stringstream ids(a.substr(eq + 1));
        for (std::string id; std::getline(ids, id, ',');) it->clients.insert(id);
    }
    if (tls_cert.empty() != tls_key.empty()) return fail("--tls-cert and --tls-key go together");
    if (!tls_cert.empty()) o.tls = rpm::TlsOptions{tls_cert, tls_key};

    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);  // before any server thread starts

    auto server = rpm::Server::start(std::move(o));
    if (!server) return fail(server.error().message());
    for (const auto& uri : listen)
        std::cout << "rpm-server: listening on " << uri.substr(0, uri.rfind(':') + 1)
                  << server->port(uri.substr(0, uri.find(':'))) << "\n";
    print_regions(*server);
    std::cout.flush();
    if (!port_file.empty()) {
        const auto& first = listen.front();  // the port of the first --listen, whatever its scheme
        std::ofstream(port_file + ".tmp") << server->port(first.substr(0, first.find(':'))) << "\n";
        std::rename((port_file + ".tmp").c_str(), port_file.c_str());  // readers never see half a number
    }
    int sig = 0;
    sigwait(&set, &sig);
    std::cout << "rpm-server: stopping (signal " << sig << ")\n";
    server->stop();
    return 0;
}
