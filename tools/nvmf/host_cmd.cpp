// rpm-nvmf's host subcommands, on rpm::nvmf::Host.
#include "commands.hpp"

#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <random>

namespace rpm_nvmf {

rpm::Result<rpm::nvmf::HostOptions> HostArgs::options() const {
    rpm::nvmf::HostOptions o;
    // Secrets come from files only (never the command line, where any user
    // sees them in ps), and are never printed.
    if (!dhchap_secret_file.empty()) {
        auto s = rpm::nvmf::read_dhchap_secret(dhchap_secret_file);
        if (!s) return s.error();
        o.dhchap_secret = std::move(*s);
    }
    if (!dhchap_ctrl_secret_file.empty()) {
        if (dhchap_secret_file.empty())
            return rpm::Error(rpm::errc::invalid_argument, "--dhchap-ctrl-secret-file needs --dhchap-secret-file");
        auto s = rpm::nvmf::read_dhchap_secret(dhchap_ctrl_secret_file);
        if (!s) return s.error();
        o.dhchap_ctrl_secret = std::move(*s);
    }
    o.transport = transport;
    o.address = address;
    o.port = port;
    o.subnqn = subnqn;
    o.hostnqn = hostnqn;
    o.header_digest = hdgst;
    o.data_digest = ddgst;
    o.timeout = std::chrono::milliseconds(timeout_ms);
    return o;
}

namespace {

int error(const rpm::Error& e) { return fail(e.message(), e == rpm::errc::invalid_argument ? 2 : 1); }

/// Options that contradict each other: exit status 2.
std::optional<int> check(const HostArgs& a) {
    if (a.transport == rpm::nvmf::Transport::rdma && (a.hdgst || a.ddgst))
        return fail("--header-digest and --data-digest are NVMe/TCP's: NVMe/RDMA has none", 2);
    return std::nullopt;
}

int discover(const HostArgs& a) {
    if (auto bad = check(a)) return *bad;
    auto o = a.options();
    if (!o) return error(o.error());
    auto entries = rpm::nvmf::Host::discover(*o);
    if (!entries) return error(entries.error());
    std::cout << "discovery log: " << entries->size() << " records\n";
    for (const auto& e : *entries)
        std::cout << "  trtype " << int(e.trtype) << " adrfam " << int(e.adrfam) << " subtype " << int(e.subtype)
                  << " portid " << e.portid << " traddr " << e.traddr << " trsvcid " << e.trsvcid << " subnqn "
                  << e.subnqn << "\n";
    return 0;
}

int identify(rpm::nvmf::Host& h) {
    const auto& c = h.controller();
    std::cout << "controller " << c.cntlid << ": model '" << c.model << "' serial '" << c.serial << "' firmware '"
              << c.firmware << "' subnqn " << c.subnqn << "\n  max transfer " << c.max_transfer
              << " bytes, in-capsule " << c.in_capsule_data << " bytes, " << c.namespaces
              << " namespaces, volatile write cache " << (c.volatile_write_cache ? "yes" : "no") << "\n";
    auto ids = h.active_namespaces();
    if (!ids) return error(ids.error());
    for (auto id : *ids) {
        auto ns = h.identify(id);
        if (!ns) return error(ns.error());
        std::cout << "  nsid " << id << ": " << ns->blocks << " blocks of " << ns->block_size << " bytes\n";
    }
    return 0;
}

std::vector<std::byte> pattern(std::size_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<std::byte> v(n);
    for (auto& b : v) b = std::byte(rng() & 0xFF);
    return v;
}

/// The namespace, if `blocks` fits in it (checked before a buffer of that
/// size is allocated). The LBA is left to the target to judge: its status
/// for a range past the end is what a user wants to see.
rpm::Result<rpm::nvmf::NamespaceInfo> sized(rpm::nvmf::Host& h, const HostArgs& a) {
    auto ns = h.identify(a.nsid);
    if (!ns) return ns.error();
    if (a.blocks > ns->blocks)
        return rpm::Error(rpm::errc::invalid_argument, "--blocks " + std::to_string(a.blocks) + ": namespace " +
                                                           std::to_string(a.nsid) + " has " +
                                                           std::to_string(ns->blocks) + " blocks");
    return ns;
}

int verify(rpm::nvmf::Host& h, const HostArgs& a) {
    auto ns = sized(h, a);
    if (!ns) return error(ns.error());
    const auto data = pattern(std::size_t(a.blocks) * ns->block_size, a.seed);
    if (auto ok = h.write(a.nsid, a.lba, data); !ok) return error(ok.error());
    if (auto ok = h.flush(a.nsid); !ok) return error(ok.error());
    std::vector<std::byte> back(data.size());
    if (auto ok = h.read(a.nsid, a.lba, back); !ok) return error(ok.error());
    if (back != data) return fail("verify: data read back differs from data written");
    std::cout << "verify: " << data.size() << " bytes at lba " << a.lba << " written, flushed, read back equal\n";
    return 0;
}

int read_cmd(rpm::nvmf::Host& h, const HostArgs& a) {
    auto ns = sized(h, a);
    if (!ns) return error(ns.error());
    std::vector<std::byte> buf(std::size_t(a.blocks) * ns->block_size);
    if (auto ok = h.read(a.nsid, a.lba, buf); !ok) return error(ok.error());
    std::ofstream out(a.file, std::ios::binary);
    out.write(reinterpret_cast<const char*>(buf.data()), std::streamsize(buf.size()));
    if (!out) return fail("--out " + a.file + ": cannot write", 2);
    return 0;
}

int write_cmd(rpm::nvmf::Host& h, const HostArgs& a) {
    std::ifstream in(a.file, std::ios::binary);
    if (!in) return fail("--in " + a.file + ": cannot read", 2);
    std::vector<char> raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto bytes = std::as_bytes(std::span(raw));
    if (auto ok = h.write(a.nsid, a.lba, bytes); !ok) return error(ok.error());
    return 0;
}

int with_host(const HostArgs& a, const std::string& what) {
    if (a.subnqn.empty()) return fail(what + ": --subsystem is required", 2);
    if (auto bad = check(a)) return *bad;
    auto o = a.options();
    if (!o) return error(o.error());
    auto h = rpm::nvmf::Host::connect(*o);
    if (!h) return error(h.error());
    if (what == "identify") return identify(*h);
    if (what == "verify") return verify(*h, a);
    if (what == "read") return read_cmd(*h, a);
    if (what == "write") return write_cmd(*h, a);
    if (what == "flush") {
        if (auto ok = h->flush(a.nsid); !ok) return error(ok.error());
        return 0;
    }
    if (auto ok = h->write_zeroes(a.nsid, a.lba, a.blocks); !ok) return error(ok.error());
    return 0;
}

void common(CLI::App* s, HostArgs& a) {
    add_transport_option(s, a.transport);
    s->add_option("--address", a.address, "target address (default 127.0.0.1)");
    s->add_option("--port", a.port, "target port (default 4420)");
    s->add_option("--hostnqn", a.hostnqn, "this host's NQN");
    s->add_flag("--header-digest", a.hdgst, "ask for header digests");
    s->add_flag("--data-digest", a.ddgst, "ask for data digests");
    s->add_option("--timeout-ms", a.timeout_ms, "per-reply timeout (default 10000)")->check(CLI::Range(1, 3600000));
    s->add_option("--dhchap-secret-file", a.dhchap_secret_file,
                  "DH-HMAC-CHAP: this host's secret (DHHC-1:..), in a file only its owner may read");
    s->add_option("--dhchap-ctrl-secret-file", a.dhchap_ctrl_secret_file,
                  "DH-HMAC-CHAP: the controller's secret; the controller must prove it holds it too");
}

} // namespace

void add_host(CLI::App& app, int& status) {
    auto a = std::make_shared<HostArgs>();
    auto* d = app.add_subcommand("discover", "print the discovery log of a target");
    common(d, *a);
    d->callback([a, &status] { status = discover(*a); });
    for (const std::string what : {"identify", "verify", "read", "write", "flush", "write-zeroes"}) {
        auto* s = app.add_subcommand(what, "NVMe/TCP or NVMe/RDMA host: " + what);
        common(s, *a);
        s->add_option("--subsystem", a->subnqn, "the subsystem NQN")->required();
        s->add_option("--nsid", a->nsid, "namespace (default 1)");
        s->add_option("--lba", a->lba, "first block (default 0)");
        s->add_option("--blocks", a->blocks, "blocks (read, verify, write-zeroes; default 8)")->check(CLI::Range(1u, 1u << 30));
        s->add_option("--seed", a->seed, "verify: the data pattern's seed");
        if (what == "read") s->add_option("--out", a->file, "write the data here")->required();
        if (what == "write") s->add_option("--in", a->file, "the data (a whole number of blocks)")->required();
        s->callback([a, what, &status] { status = with_host(*a, what); });
    }
}

} // namespace rpm_nvmf
