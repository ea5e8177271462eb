// Target::start's steps: checking options, building subsystems through the
// engine's verbs (seed 004's create SRQ / create NVMe backend / map nsid).
#include "nvmf/serve/setup.hpp"

#include "nvmf/auth/auth.hpp"

#include <algorithm>
#include <bit>
#include <set>

namespace rpm::nvmf::target {

namespace {

Result<void> bad(std::string what) { return Error(errc::invalid_argument, std::move(what)); }

Result<void> check_subsystem(const SubsystemSpec& s, std::set<std::string>& nqns) {
    // NQNs are at most 223 bytes (NVMe Base 4.5), and must differ from the
    // discovery NQN, which the target serves itself.
    if (s.nqn.empty() || s.nqn.size() > 223) return bad("subsystem NQN '" + s.nqn + "' is empty or over 223 bytes");
    if (s.nqn == wire::discovery_nqn) return bad("subsystem NQN is the discovery NQN");
    if (!nqns.insert(s.nqn).second) return bad("subsystem NQN '" + s.nqn + "' listed twice");
    std::set<std::uint32_t> ids;
    for (const auto& ns : s.namespaces) {
        if (ns.nsid == 0 || ns.nsid == 0xFFFFFFFF) return bad(s.nqn + ": nsid " + std::to_string(ns.nsid) + " is reserved");
        if (!ids.insert(ns.nsid).second) return bad(s.nqn + ": nsid " + std::to_string(ns.nsid) + " listed twice");
        if (ns.path.empty()) return bad(s.nqn + ": namespace " + std::to_string(ns.nsid) + " has no path");
    }
    std::set<std::string> hosts;
    for (const auto& h : s.host_secrets) {
        if (h.hostnqn.empty() || h.hostnqn.size() > 223) return bad(s.nqn + ": a host secret's NQN is empty or over 223 bytes");
        if (!hosts.insert(h.hostnqn).second) return bad(s.nqn + ": host " + h.hostnqn + " has two secrets");
        if (auto k = auth::parse_secret(h.secret); !k) return bad(s.nqn + ": host " + h.hostnqn + ": " + k.error().detail());
        if (!h.ctrl_secret.empty())
            if (auto k = auth::parse_secret(h.ctrl_secret); !k)
                return bad(s.nqn + ": host " + h.hostnqn + ": controller " + k.error().detail());
    }
    return {};
}

} // namespace

Result<void> check_options(const TargetOptions& o) {
    if (o.subsystems.empty()) return bad("no subsystem to export");
    if (o.max_io_size < 4096 || !std::has_single_bit(o.max_io_size))
        return bad("max_io_size " + std::to_string(o.max_io_size) + " is not a power of two >= 4096");
    if (o.in_capsule_data < 1024 || o.in_capsule_data % 16 || o.in_capsule_data > o.max_io_size)
        return bad("in_capsule_data " + std::to_string(o.in_capsule_data) +
                   " must be a multiple of 16 from 1024 to max_io_size");
    if (o.max_h2c_data < wire::min_maxh2cdata || o.max_h2c_data % 4)
        return bad("max_h2c_data must be a multiple of 4, >= 4096");
    if (o.max_io_queues == 0 || o.max_queue_size < 2 || o.max_queue_size > 1024)
        return bad("max_io_queues must be >= 1 and max_queue_size 2..1024");
    if (o.setup_timeout.count() <= 0 || o.max_connections == 0 || o.max_setup_per_address == 0)
        return bad("setup_timeout, max_connections and max_setup_per_address must be positive");
    std::set<std::string> nqns;
    for (const auto& s : o.subsystems)
        if (auto ok = check_subsystem(s, nqns); !ok) return ok;
    return {};
}

Result<std::vector<std::shared_ptr<Subsystem>>> build_subsystems(const TargetOptions& o, const std::shared_ptr<Engine>& engine,
                                                                 std::vector<SubsystemHandle>& handles) {
    std::vector<std::shared_ptr<Subsystem>> out;
    for (const auto& spec : o.subsystems) {
        SubsystemAttrs attrs;
        attrs.max_namespaces = std::max<std::uint32_t>(32, std::uint32_t(spec.namespaces.size()));
        attrs.ioccsz = (64 + o.in_capsule_data) / 16;
        attrs.max_io_size = o.max_io_size;
        attrs.queue_size = o.max_queue_size;
        attrs.staging_bytes = std::size_t(o.max_io_size) * (o.max_io_queues + 1);
        attrs.sysfs_root = o.sysfs_root;
        if (!o.nic.empty()) {
            attrs.staging_clients.push_back(o.nic);
            for (const auto& ns : spec.namespaces) attrs.staging_clients.push_back(ns.path.filename().string());
        }
        auto h = engine->create_subsystem(attrs);
        if (!h) return Error(h.error().code(), spec.nqn + ": " + h.error().detail());
        handles.push_back(*h);
        for (const auto& ns : spec.namespaces) {
            auto b = engine->create_backend(*h, ns);
            if (!b) return Error(b.error().code(), spec.nqn + " nsid " + std::to_string(ns.nsid) + ": " + b.error().detail());
            if (auto m = engine->map_namespace(*b, ns.nsid, ns.block_size, 1); !m)
                return Error(m.error().code(), spec.nqn + " nsid " + std::to_string(ns.nsid) + ": " + m.error().detail());
        }
        out.push_back(Subsystem::make_nvm(spec, engine, *h));
    }
    return out;
}

Limits limits_of(const TargetOptions& o, std::uint16_t port) {
    Limits l;
    l.in_capsule_data = o.in_capsule_data;
    l.max_io_size = o.max_io_size;
    l.max_io_queues = o.max_io_queues;
    l.max_queue_size = o.max_queue_size;
    l.trtype = o.transport == Transport::rdma ? trtype_rdma : trtype_tcp;
    l.traddr = o.address;
    l.trsvcid = port;
    return l;
}

std::vector<DiscoveryEntry> discovery_entries(const TargetOptions& o, std::uint16_t port) {
    std::vector<DiscoveryEntry> out;
    for (const auto& s : o.subsystems)
        out.push_back({.trtype = o.transport == Transport::rdma ? trtype_rdma : trtype_tcp, .adrfam = 1, .subtype = 2, .portid = 1, .cntlid = 0xFFFF,
                       .trsvcid = std::to_string(port), .traddr = o.address, .subnqn = s.nqn});
    return out;
}

} // namespace rpm::nvmf::target
