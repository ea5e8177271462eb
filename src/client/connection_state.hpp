// What a Connection and its RemoteRegions share: the transport and the
// grants. Kept alive by shared_ptr so a RemoteRegion handle can outlive a
// moved-from Connection object.
#pragma once

#include <rpm/client.hpp>

#include "client/transport.hpp"

#include <deque>
#include <memory>
#include <mutex>

namespace rpm::detail {

class ConnectionState {
public:
    ConnectionState(std::unique_ptr<client::Transport> t, ClientOptions opts)
        : transport(std::move(t)), options(std::move(opts)) {}
    ~ConnectionState() { if (transport) transport->close(); }

    std::unique_ptr<client::Transport> transport;
    ClientOptions options;

    struct Granted {
        std::string name;
        proto::RegionGrant grant;
    };
    // A deque: RemoteRegion indexes stay valid as more regions are opened,
    // and in-flight operations keep referring to their grant.
    std::deque<Granted> regions;
    mutable std::mutex mu;

    const Granted& region(std::size_t i) const {
        std::lock_guard lock(mu);
        return regions[i];
    }
};

/// The library's own way into a Connection (the Replicator polls its
/// rdma:// members' completions through their transports).
struct ConnectionAccess {
    static std::shared_ptr<ConnectionState> state(Connection& c) noexcept { return c.s_; }
};

/// Wait for an async operation with the connection's timeout. A timeout
/// closes the connection: the operation's state is unknown, and closing
/// guarantees no late completion touches the caller's buffers.
std::error_code wait_for(ConnectionState& conn, FunctionRef<void(Callback)> start);

} // namespace rpm::detail
