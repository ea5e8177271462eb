// etcd v3 through its JSON gateway (etcd_client.cpp): a put is
// POST /v3/kv/put on a kept-alive HTTP/1.1 connection, as etcd's HTTP
// clients do it; etcd answers once the put is committed by a majority.
#pragma once

#include "clients.hpp"

#include <string>
#include <string_view>

namespace kvbench {

std::unique_ptr<PutClient> connect_etcd(const Options& o, const Address& at, std::string& error);
std::string probe_etcd(const Options& o, const Address& at);
/// RETURN VALUE: empty when the member at `at` is the Raft leader (its
/// status names itself), else why not. A put to a follower is forwarded
/// to the leader: one more hop than a client that knows the leader pays.
std::string etcd_leader(const Options& o, const Address& at);

} // namespace kvbench
