// rpm-nvmf target: export namespaces over NVMe/TCP or NVMe/RDMA until SIGINT/SIGTERM
// (or --seconds), then print the target's counters.
#include "commands.hpp"

#include <charconv>
#include <csignal>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

namespace rpm_nvmf {

namespace {

struct TargetArgs {
    std::string listen = "127.0.0.1:4420";
    rpm::nvmf::Transport transport = rpm::nvmf::Transport::tcp;
    std::string nqn = "nqn.2026-11.io.rpm:target";
    std::vector<std::string> namespaces, hosts, dhchap_hosts;
    std::string nic, sysfs_root = "/", port_file;
    bool no_hdgst = false, no_ddgst = false;
    std::uint32_t in_capsule = 8192, max_io = 128 * 1024;
    std::uint32_t setup_timeout_ms = 10000;
    std::size_t max_connections = 256, max_setup_per_address = 16;
    int seconds = 0;
};

bool number(const std::string& s, std::uint64_t& out) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && p == s.data() + s.size();
}

/// "NSID=PATH[,pmem][,bs=N][,size=BYTES]" (size creates a missing file).
std::optional<rpm::nvmf::NamespaceSpec> parse_ns(const std::string& arg) {
    const auto eq = arg.find('=');
    std::uint64_t v = 0;
    if (eq == std::string::npos || !number(arg.substr(0, eq), v) || v == 0 || v > 0xFFFFFFFE) return std::nullopt;
    rpm::nvmf::NamespaceSpec ns;
    ns.nsid = std::uint32_t(v);
    std::stringstream rest(arg.substr(eq + 1));
    std::string part;
    std::getline(rest, part, ',');
    ns.path = part;
    while (std::getline(rest, part, ',')) {
        if (part == "pmem") ns.kind = rpm::nvmf::BackendKind::pmem;
        else if (part.starts_with("bs=") && number(part.substr(3), v) && (v == 512 || v == 4096)) ns.block_size = std::uint32_t(v);
        else if (part.starts_with("size=") && number(part.substr(5), v) && v > 0) ns.create = true, ns.size = v;
        else return std::nullopt;
    }
    if (ns.path.empty()) return std::nullopt;
    return ns;
}

/// "NQN=SECRET_FILE[,CTRL_SECRET_FILE]": the host must authenticate with the
/// secret in the first file; the second, if given, is what the controller
/// proves to a host that asks. The secrets are read (mode checked), never printed.
rpm::Result<rpm::nvmf::HostSecret> parse_dhchap_host(const std::string& arg) {
    const auto eq = arg.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == arg.size())
        return rpm::Error(rpm::errc::invalid_argument,
                          "--dhchap-host " + arg + ": expected HOSTNQN=SECRET_FILE[,CTRL_SECRET_FILE]");
    rpm::nvmf::HostSecret h;
    h.hostnqn = arg.substr(0, eq);
    const auto files = arg.substr(eq + 1);
    const auto comma = files.find(',');
    auto secret = rpm::nvmf::read_dhchap_secret(files.substr(0, comma));
    if (!secret) return rpm::Error(secret.error().code(), "--dhchap-host " + h.hostnqn + ": " + secret.error().detail());
    h.secret = std::move(*secret);
    if (comma != std::string::npos) {
        auto ctrl = rpm::nvmf::read_dhchap_secret(files.substr(comma + 1));
        if (!ctrl) return rpm::Error(ctrl.error().code(), "--dhchap-host " + h.hostnqn + ": " + ctrl.error().detail());
        h.ctrl_secret = std::move(*ctrl);
    }
    return h;
}

void print_started(const rpm::nvmf::Target& t, const rpm::nvmf::TargetOptions& o) {
    std::cout << "rpm-nvmf: listening on " << o.address << ":" << t.port()
              << (o.transport == rpm::nvmf::Transport::rdma ? " (NVMe/RDMA)\n" : " (NVMe/TCP)\n");
    const auto& nqn = o.subsystems.front().nqn;
    for (const auto& ns : t.namespaces())
        std::cout << "rpm-nvmf: " << nqn << " nsid " << ns.nsid << ": " << ns.blocks << " blocks of "
                  << ns.block_size << " bytes, " << ns.backend << "\n";
    const auto st = t.staging();
    std::cout << "rpm-nvmf: staging " << (st.p2p ? "in device memory at " + st.provider : std::string("in host memory"))
              << ", " << st.bytes << " bytes, " << st.slots << " slots: " << st.why << "\n";
}

void print_stats(const rpm::nvmf::TargetStats& s) {
    std::cout << "rpm-nvmf: connections " << s.connections << ", terminated " << s.connections_terminated
              << ", controllers " << s.controllers << ", keep-alive expired " << s.keep_alive_expired
              << ", admin " << s.admin_commands << ", I/O offloaded " << s.offloaded_commands << ", I/O software "
              << s.io_commands << ", errors " << s.errors << ", digest errors " << s.digest_errors
              << ", authenticated " << s.auth_succeeded << ", authentication failures " << s.auth_failed << "\n";
}

int run(const TargetArgs& a) {
    rpm::nvmf::TargetOptions o;
    const auto colon = a.listen.rfind(':');
    std::uint64_t port = 0;
    if (colon == std::string::npos || !number(a.listen.substr(colon + 1), port) || port > 65535)
        return fail("--listen " + a.listen + ": expected ADDRESS:PORT", 2);
    o.address = a.listen.substr(0, colon);
    o.port = std::uint16_t(port);
    o.transport = a.transport;
    rpm::nvmf::SubsystemSpec sub{.nqn = a.nqn, .namespaces = {}, .allowed_hosts = a.hosts, .host_secrets = {}};
    for (const auto& n : a.namespaces) {
        auto ns = parse_ns(n);
        if (!ns) return fail("--ns " + n + ": expected NSID=PATH[,pmem][,bs=512|4096][,size=BYTES]", 2);
        sub.namespaces.push_back(*ns);
    }
    for (const auto& d : a.dhchap_hosts) {
        auto h = parse_dhchap_host(d);
        if (!h) return fail(h.error().message(), h.error() == rpm::errc::invalid_argument ? 2 : 1);
        sub.host_secrets.push_back(std::move(*h));
    }
    o.subsystems.push_back(sub);
    o.allow_header_digest = !a.no_hdgst;
    o.allow_data_digest = !a.no_ddgst;
    o.in_capsule_data = a.in_capsule;
    o.max_io_size = a.max_io;
    o.setup_timeout = std::chrono::milliseconds(a.setup_timeout_ms);
    o.max_connections = a.max_connections;
    o.max_setup_per_address = a.max_setup_per_address;
    o.nic = a.nic;
    o.sysfs_root = a.sysfs_root;

    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);  // before any target thread starts
    auto t = rpm::nvmf::Target::start(o);
    if (!t) return fail(t.error().message(), t.error() == rpm::errc::invalid_argument ? 2 : 1);
    print_started(*t, o);
    std::cout.flush();
    if (!a.port_file.empty()) {
        std::ofstream(a.port_file + ".tmp") << t->port() << "\n";
        std::rename((a.port_file + ".tmp").c_str(), a.port_file.c_str());
    }
    int sig = 0;
    if (a.seconds > 0) {
        timespec ts{a.seconds, 0};
        sig = sigtimedwait(&set, nullptr, &ts);
    } else {
        sigwait(&set, &sig);
    }
    t->stop();
    print_stats(t->stats());
    return 0;
}

} // namespace

void add_transport_option(CLI::App* s, rpm::nvmf::Transport& t) {
    s->add_option("--transport", t, "tcp (default) or rdma (the address: an RDMA device's IP address)")
        ->transform(CLI::CheckedTransformer(std::map<std::string, rpm::nvmf::Transport>{
                                                {"tcp", rpm::nvmf::Transport::tcp}, {"rdma", rpm::nvmf::Transport::rdma}})
                        .description(""))  // CLI11 would print the enum's values as raw bytes
        ->type_name("tcp|rdma");
}

void add_target(CLI::App& app, int& status) {
    auto a = std::make_shared<TargetArgs>();
    auto* sub = app.add_subcommand("target", "export namespaces over NVMe/TCP or NVMe/RDMA");
    sub->add_option("--listen", a->listen, "ADDRESS:PORT (default 127.0.0.1:4420; port 0: any)");
    add_transport_option(sub, a->transport);
    sub->add_option("--subsystem", a->nqn, "the subsystem NQN");
    sub->add_option("--ns", a->namespaces, "NSID=PATH[,pmem][,bs=512|4096][,size=BYTES]")->required();
    sub->add_option("--allow-host", a->hosts, "host NQN allowed to connect (default: any)");
    sub->add_option("--dhchap-host", a->dhchap_hosts,
                    "HOSTNQN=SECRET_FILE[,CTRL_SECRET_FILE]: this host must authenticate (DH-HMAC-CHAP) with the "
                    "secret in the file (only its owner may read it); the second is the controller's, for a host "
                    "that asks it to authenticate too");
    sub->add_option("--nic", a->nic, "the NIC serving the target, for P2P staging placement");
    sub->add_option("--sysfs-root", a->sysfs_root, "root of the sysfs tree (tests)");
    sub->add_flag("--no-header-digest", a->no_hdgst, "refuse header digests");
    sub->add_flag("--no-data-digest", a->no_ddgst, "refuse data digests");
    sub->add_option("--in-capsule", a->in_capsule, "in-capsule data bytes for I/O queues (default 8192)");
    sub->add_option("--max-io", a->max_io, "largest transfer in bytes (default 131072)");
    sub->add_option("--setup-timeout-ms", a->setup_timeout_ms,
                    "close a connection without ICReq and Connect after this many ms (default 10000)")
        ->check(CLI::Range(1u, 3600000u));
    sub->add_option("--max-connections", a->max_connections, "connections at once (default 256)")
        ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 16));
    sub->add_option("--max-setup-per-address", a->max_setup_per_address,
                    "connections from one address still in set-up (default 16)")
        ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 16));
    sub->add_option("--port-file", a->port_file, "write the port here once listening");
    sub->add_option("--seconds", a->seconds, "stop after this many seconds (default: at SIGINT/SIGTERM)")
        ->check(CLI::Range(1, 86400 * 365));
    sub->callback([a, &status] { status = run(*a); });
}

} // namespace rpm_nvmf
