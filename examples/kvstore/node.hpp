// `rpm-kvstore node`: one member of a group that elects its primary through
// a coordinator (etcd), docs/replication.md "Automatic failover".
//
// Every node serves its region as a replica (an rpm::Server on --listen)
// and campaigns. The elected one, with the leader key's revision as its
// term:
//   1. opens its own region through its own server with that term, which
//      keeps the term in the region's fence file and revokes the older
//      primary's connection to it;
//   2. stops its server (its region is now its local copy);
//   3. opens the store with every other member as a replica and the term as
//      fencing token: recovery at open makes the members equal, and the
//      replicas refuse every older term from then on;
//   4. serves clients' puts over RESP (--serve) until it steps down: its
//      lease is lost, or a replica says it is fenced. It then closes the
//      store, serves its region as a replica again and campaigns.
// A node that does not lead answers writes and reads with
// "-NOTLEADER NAME HOST:PORT TERM" (the leader it knows, for a redirect).
#pragma once

#include "commands.hpp"

#include <string>
#include <vector>

namespace kvcli {

struct NodeArgs {
    std::string name;         ///< unique in the group
    std::string coordinator;  ///< etcd://HOST:PORT[,HOST:PORT...]
    std::string election = "rpm-kvstore";
    int lease_ttl_s = 2;
    std::string serve;                 ///< HOST:PORT of the RESP service
    std::vector<std::string> members;  ///< every node's --listen URI, this one's included
    ReplicaArgs replica;               ///< listen, region, size, client, fence_dir
    PrimaryArgs primary;               ///< durability and timings when leading
    /// Test-only faults: "ignore-lease" (a primary whose lease check comes
    /// too late: it keeps serving after losing its lease; fencing must stop
    /// it), "no-fencing" (that, and no terms at the replicas: the planted
    /// control of the failover test), "ack-before-commit" (group commit
    /// sends its +OKs before the commit and keeps them if it fails: the
    /// planted control of the failover test's pipelined round).
    std::string fault;
};

/// Run until SIGINT or SIGTERM. Exit status as the other commands (2 bad
/// input, 3 the coordinator or the service could not start).
int node(NodeArgs a);

/// The value a node campaigns with: "NAME HOST:PORT" (the RESP address).
std::string candidate_value(const std::string& name, const std::string& serve);
/// Its parts; false when `value` is not one.
bool parse_candidate(const std::string& value, std::string& name, std::string& serve);

} // namespace kvcli
