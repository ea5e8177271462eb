// One connection to the system under test, able to do a durable put: the
// call returns once the system says the value is durable where it promises
// (rpm-kvstore: on a majority; Redis: in the master's AOF, fsynced, and
// acknowledged by WAIT's replicas; etcd: committed by its Raft majority).
#pragma once

#include "net.hpp"
#include "options.hpp"

#include <memory>
#include <string>
#include <string_view>

namespace kvbench {

class PutClient {
public:
    virtual ~PutClient() = default;
    /// One durable put. RETURN VALUE: empty on success, else why it failed
    /// (an error reply, an unexpected reply, the connection).
    virtual std::string put(std::string_view key, std::string_view value) = 0;
};

/// A client of o.target connected to `at`, or null with `error` set.
std::unique_ptr<PutClient> connect_client(const Options& o, const Address& at, std::string& error);

/// rpm-kvstore or redis: PING `at`; any well-formed RESP reply counts (a
/// node may refuse the command, it still speaks RESP). etcd: the member
/// answers /v3/maintenance/status with a leader.
/// RETURN VALUE: empty when it answers, else why not.
std::string probe(const Options& o, const Address& at);

/// rpm-kvstore: SET a probe key on `at`. RETURN VALUE: empty when it
/// answered +OK (it is the leader), else its answer or the failure.
std::string try_leader(const Options& o, const Address& at);

} // namespace kvbench
