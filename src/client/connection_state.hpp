// What a Connection and its RemoteRegions share: the transport and the
// grants. Kept alive by shared_ptr so a RemoteRegion handle can outlive a
// moved-from Connection object.
#pragma once

#include <rpm/client.hpp>

#include "client/transport.hpp"

#include <deque>
#include <future>
#include <memory>
#include <mutex>

namespace rpm::detail {

/// A region the server granted, as its RemoteRegion handles see it.
struct GrantedRegion {
    std::string name;
    proto::RegionGrant grant;
};

class ConnectionState {
public:
    ConnectionState(std::unique_ptr<client::Transport> t, ClientOptions opts)
        : transport(std::move(t)), options(std::move(opts)) {}
    ~ConnectionState() { if (transport) transport->close(); }

    std::unique_ptr<client::Transport> transport;
    ClientOptions options;

    // A deque: an element stays where it is as more regions are opened
    // (push_back moves none), so a RemoteRegion keeps a pointer to its
    // grant, taken once under mu, and an operation reads it without a lock
    // (a std::mutex per operation was two calls into libc, and in the lab
    // a call costs tens of nanoseconds: docs/benchmarks-history.md). A grant never
    // changes once granted.
    std::deque<GrantedRegion> regions;
    std::mutex mu;

    /// Append a grant. RETURN VALUE: the grant, at an address that stays valid.
    const GrantedRegion& add(std::string name, proto::RegionGrant grant) {
        std::lock_guard lock(mu);
        return regions.emplace_back(GrantedRegion{std::move(name), std::move(grant)});
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
Result<void> wait_for(ConnectionState& conn, FunctionRef<void(Callback)> start);

/// The future form of a callback form: `start` posts the operation with a
/// callback that sets the future (which never holds an exception).
template <class T>
std::future<Result<T>> as_future(FunctionRef<void(std::function<void(Result<T>)>)> start) {
    auto p = std::make_shared<std::promise<Result<T>>>();
    auto f = p->get_future();
    start([p](Result<T> r) { p->set_value(std::move(r)); });
    return f;
}

} // namespace rpm::detail
