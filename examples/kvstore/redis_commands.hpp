// The commands an rpm-kvstore node answers over RESP, the way Redis answers
// them, so Redis's own tools (redis-cli, redis-benchmark) and client
// libraries work unchanged: the data commands (SET, GET, DEL, MSET, MGET,
// EXISTS, DBSIZE) on the primary's store, and the connection and
// introspection commands those tools send first (PING, SELECT 0, HELLO,
// CLIENT, CONFIG GET, INFO). Anything else is refused with Redis's words
// for it ("ERR unknown command ...", "ERR wrong number of arguments ...",
// "ERR unknown subcommand ..."), never dropped.
#pragma once

#include "kv_store.hpp"

#include <rpm/error.hpp>

#include <string>
#include <vector>

namespace kvnode {

/// What the commands need of the node they run on.
class CommandHost {
public:
    virtual ~CommandHost() = default;
    /// The primary's store; nullptr while this node is not the primary.
    virtual kv::Store* store() = 0;
    /// The reply to a data command on a node that is not the primary.
    virtual void not_leader(std::string& out) = 0;
    /// The reply to a write that failed (and any step the node takes).
    virtual void write_error(const rpm::Error& e, std::string& out) = 0;
    /// INFO's text.
    virtual std::string info() = 0;
};

/// Executes one command (args[0] its name, any case) and appends its reply
/// to `out`. RETURN VALUE: true when the reply holds only once a commit
/// covers what the command wrote (a write that changed the store).
bool execute(CommandHost& host, const std::vector<std::string>& args, std::string& out);

/// Where a command's keys are among its arguments, as Redis's COMMAND says
/// (SET k v: 1..1; MSET k v k v: 1..3 step 2; DEL, EXISTS, MGET: all).
/// step 0: no keys (not a data command, unknown, or the wrong arity).
struct KeyPositions {
    std::size_t first = 0, last = 0, step = 0;
};
KeyPositions key_positions(const std::vector<std::string>& args);

/// Hint the keys a data command will look up (kv::Store::prefetch), before
/// it runs; anything else, or a node that is not the primary: nothing.
void prefetch(CommandHost& host, const std::vector<std::string>& args);

} // namespace kvnode
