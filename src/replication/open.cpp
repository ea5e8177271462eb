// Opening a replicator: the local region, then every replica. Recovery
// (which member is the most advanced) is in recovery.cpp.
#include "replication/impl.hpp"
#include "replication/quorum.hpp"

#include <future>
#include <system_error>

namespace rpm {
namespace {

// What open() returns at once instead of riding it out as a failed member:
// a configuration error is the caller's to fix; so is a newer primary's
// term (this one must not serve), and a replica that cannot do what is
// asked (a fencing term on a devdax region its server keeps no fence file
// for).
bool refusal(const Error& e) {
    return e == errc::bad_size || e == errc::invalid_argument || e == errc::permission_denied ||
           e == errc::auth_failed || e == errc::fenced || e == errc::unsupported;
}

} // namespace

Result<void> Replicator::Impl::open_local() {
    if (opts.local_path.empty()) return Error(errc::invalid_argument, "ReplicatorOptions::local_path is empty");
    pmem::OpenOptions o;
    o.create = opts.create;
    o.size = opts.local_size;
    o.sysfs_root = opts.sysfs_root;
    auto r = pmem::Region::open(opts.local_path, o);
    if (!r) return r.error();
    if (r->size() < kReplicaHeaderSize + 4096)
        return Error(errc::bad_size, opts.local_path.string() + ": a replicated region needs at least 8 KiB");
    local.emplace(std::move(*r));
    data = local->bytes().subspan(kReplicaHeaderSize);
    local_msync = local->granularity() == Granularity::page;
    return {};
}

Result<void> Replicator::Impl::connect_all(std::string& unreachable) {
    replicas.resize(opts.replicas.size());
    for (std::size_t i = 0; i < replicas.size(); ++i) {
        auto& m = replicas[i];
        m.index = i;
        m.spec = opts.replicas[i];
        if (m.spec.uri.empty()) return Error(errc::invalid_argument, "replica " + std::to_string(i) + " has no uri");
        // The same region twice would be counted as two members: a quorum
        // met by one node.
        for (std::size_t j = 0; j < i; ++j)
            if (opts.replicas[j].uri == m.spec.uri && opts.replicas[j].region == m.spec.region)
                return Error(errc::invalid_argument, "replicas " + std::to_string(j) + " and " + std::to_string(i) +
                                                         " are the same region (" + m.spec.uri + " " + m.spec.region + ")");
    }
    // Every replica dialled at once: an unreachable one costs the open one
    // dial timeout, not one per replica.
    std::vector<std::future<Result<Dialed>>> dials;
    for (const auto& m : replicas) {
        auto one = [this, &m] { return dial(m.spec); };
        try {
            dials.push_back(std::async(std::launch::async, one));
        } catch (const std::system_error&) {
            dials.push_back(std::async(std::launch::deferred, one));  // no thread to be had: dialled in turn
        }
    }
    std::optional<Error> refused;
    for (std::size_t i = 0; i < replicas.size(); ++i) {
        auto d = dials[i].get();
        if (!d) {
            if (refusal(d.error())) {
                if (!refused) refused = d.error();
                continue;
            }
            replicas[i].last_error = d.error();
            unreachable += (unreachable.empty() ? "" : "; ") + d.error().message();
            continue;
        }
        auto& m = replicas[i];
        m.position_at_open = d->header.valid ? d->header.h.position : 0;
        m.conn.emplace(std::move(d->conn));
        m.region.emplace(d->region);
        m.opened_header = d->header;
    }
    if (refused) return *refused;
    return {};
}

} // namespace rpm
