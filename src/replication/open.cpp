// Opening a replicator: the local region, then every replica. Recovery
// (which member is the most advanced) is in recovery.cpp.
#include "replication/impl.hpp"
#include "replication/quorum.hpp"

namespace rpm {

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
        auto d = dial(m.spec);
        if (!d) {
            // A configuration error is the caller's to fix, not a failure
            // to ride out.
            // So is a newer primary's term: this one must not serve.
            // And a replica that cannot do what is asked (a fencing term on
            // a devdax region its server keeps no fence file for).
            if (d.error() == errc::bad_size || d.error() == errc::invalid_argument ||
                d.error() == errc::permission_denied || d.error() == errc::auth_failed || d.error() == errc::fenced ||
                d.error() == errc::unsupported)
                return d.error();
            m.last_error = d.error();
            unreachable += (unreachable.empty() ? "" : "; ") + d.error().message();
            continue;
        }
        m.position_at_open = d->header.valid ? d->header.h.position : 0;
        m.conn.emplace(std::move(d->conn));
        m.region.emplace(d->region);
        m.opened_header = d->header;
    }
    return {};
}

} // namespace rpm
