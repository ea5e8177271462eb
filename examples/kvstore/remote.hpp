// `rpm-kvstore client` and `rpm-kvstore status`: talking to a group of
// nodes (node.hpp) over RESP, the primary found through the coordinator or
// by following a node's "-NOTLEADER NAME HOST:PORT TERM" redirect.
//
// A write is retried, within --timeout-ms, on whatever a failover shows: a
// connection refused or reset, no answer within 2 s, NOTLEADER, FENCED or
// NOREPLICAS; the retry repeats the same key and value, so a put counts once
// whether or not the first attempt landed. `load` logs a key as acknowledged
// only on +OK, which a node sends after a commit that covers the put; with
// --pipeline N it writes N SETs, then reads their replies in order, logging
// each +OK as it is read, and resends from the first reply it did not read.
#pragma once

#include "commands.hpp"

#include <string>

namespace kvcli {

struct RemoteArgs {
    std::string coordinator;  ///< etcd://...: find the primary there
    std::string election = "rpm-kvstore";
    std::string node;         ///< HOST:PORT: talk to this node only (no etcd)
    int timeout_ms = 10000;   ///< per command (load: for each reply)
    bool follow = true;       ///< false: one attempt at --node, no redirect or retry
};

enum class RemoteCommand { put, get, remove, info };

/// One command; prints its answer as the local commands do.
int remote(const RemoteArgs& a, RemoteCommand cmd, const std::string& key, const std::string& value);
int remote_load(const RemoteArgs& a, const LoadArgs& l);
int remote_verify(const RemoteArgs& a, const std::string& acked);
/// The leader etcd names (name, address, term) and what its INFO says:
/// role, term, keys, and each member with its state and frontier.
int status(const RemoteArgs& a);

} // namespace kvcli
