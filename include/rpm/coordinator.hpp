// rpm::Coordinator: electing one primary through an existing coordinator
// (etcd v3), with the leader key's revision as the primary's term, the
// fencing token a Replicator opens its replicas with
// (ReplicatorOptions::fencing_term; docs/coordinator.md).
//
// A lease alone does not give mutual exclusion: a leader that stalls past
// its lease may act after a newer one was elected. The term closes that
// gap at the storage: replica servers refuse a term older than one they
// have seen (docs/replication.md, "Fencing").
#pragma once

#include <rpm/result.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rpm {

/// Who leads, as the coordinator says.
struct Leader {
    std::string name;        ///< the candidate's name, as it campaigned
    /// The leader key's creation revision: larger for every later election
    /// (etcd revisions only grow). The fencing token.
    std::uint64_t term = 0;
};

struct CoordinatorOptions {
    /// etcd members' client addresses, "HOST:PORT" (plain http). Requests
    /// go to the first that answers; a member that fails is passed over.
    std::vector<std::string> endpoints;
    /// The election (an etcd key prefix): the candidates of one group.
    std::string election = "rpm/primary";
    /// The lease's TTL: a leader that cannot renew it for this long loses
    /// the leadership, and another candidate may be elected.
    std::chrono::seconds lease_ttl{5};
    /// Each request to etcd (a campaign waits as long as its own timeout).
    std::chrono::milliseconds request_timeout{2000};
    /// Called once, on the coordinator's thread, when this candidate's
    /// leadership is lost: its lease could not be renewed within the TTL
    /// (etcd unreachable or without quorum), or etcd says it expired.
    std::function<void(const Error&)> on_lost;
    /// Tests only: false stops renewing the lease (a leader that stalls).
    bool keep_alive = true;
};

/// "etcd://HOST:PORT[,HOST:PORT...]" into options.endpoints (the rest
/// default). ERRORS: errc::invalid_argument (another scheme, no endpoint,
/// an endpoint without a port).
Result<CoordinatorOptions> parse_coordinator_uri(std::string_view uri);

class Coordinator {
public:
    virtual ~Coordinator() = default;

    /// Become the leader: wait until this candidate leads, at most `timeout`.
    /// A lease is granted and kept alive from here on; the candidate's key
    /// goes with it if the wait ends first.
    /// RETURN VALUE: this leadership (name, term).
    /// ERRORS: errc::io_error (no etcd member reachable, or not elected
    /// within `timeout`: another candidate leads; detail says which);
    /// errc::quorum_lost (etcd answered but cannot decide: no quorum);
    /// errc::invalid_argument (already leading or campaigning, an empty name).
    virtual Result<Leader> campaign(std::string_view name, std::chrono::milliseconds timeout) = 0;

    /// The current leader; nullopt when there is none.
    /// ERRORS: as campaign's io_error and quorum_lost.
    virtual Result<std::optional<Leader>> leader() = 0;

    /// Give the leadership up: the leader key and the lease are deleted,
    /// so another candidate is elected at once (not after the TTL).
    /// ERRORS: as leader(); errc::invalid_argument when not leading.
    virtual Result<void> resign() = 0;

    /// True from a successful campaign until resign() or the leadership is
    /// lost (on_lost). A leader that sees false must stop writing: a newer
    /// one may be elected, and fencing will refuse this one's writes.
    [[nodiscard]] virtual bool leading() const noexcept = 0;

    /// Follow the leadership: `on_change` is called on the coordinator's
    /// watch thread with the leader at once and at every change after
    /// (etcd's election observe stream; re-established on another member
    /// when one fails). Replaces an earlier watch. Calls stop when the
    /// coordinator is destroyed.
    /// ERRORS: errc::invalid_argument (empty callback).
    virtual Result<void> watch(std::function<void(const Leader&)> on_change) = 0;
};

/// A Coordinator on etcd v3 through its JSON gateway (HTTP/1.1 with
/// Boost.Beast; docs/coordinator.md says why not gRPC). Checks that some
/// endpoint answers. Destroying it stops its threads and revokes its
/// lease (best effort): a leader that exits hands over at once; one that
/// crashes hands over when its lease expires.
/// ERRORS: errc::invalid_argument (no endpoints, an empty election,
/// lease_ttl under 2 s); errc::io_error (no endpoint answers).
Result<std::unique_ptr<Coordinator>> connect_etcd(CoordinatorOptions options);

} // namespace rpm
