// rpm::Coordinator: electing one primary through an existing coordinator
// (etcd v3), with the leader key's revision as the primary's fencing term,
// the token a Replicator opens its replicas with
// (ReplicatorOptions::fencing_term; docs/coordinator.md).
//
// A lease alone does not give mutual exclusion: a leader that stalls past
// its lease may act after a newer one was elected. The fencing term closes
// that gap at the storage: replica servers refuse one older than one they
// have seen (docs/replication.md, "Fencing").
#pragma once

#include <rpm/export.hpp>
#include <rpm/result.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

RPM_API_BEGIN

namespace rpm {

/// Who leads, as the coordinator says.
struct Leader {
    std::string name;        ///< the candidate's name, as it campaigned
    /// The leader key's creation revision: larger for every later election
    /// (etcd revisions only grow). The fencing token: pass it as
    /// ReplicatorOptions::fencing_term.
    std::uint64_t fencing_term = 0;
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
/// RETURN VALUE: the options, endpoints in the order given (one trailing
/// comma is ignored). Names are not resolved here.
/// errc::invalid_argument also for an endpoint without a host, an empty
/// one between two commas, or a port that is not a number from 1 to 65535.
Result<CoordinatorOptions> parse_coordinator_uri(std::string_view uri);

/// The calls' errors below are those of connect_etcd's coordinator, the
/// one implementation. Each request to etcd goes to the member that last
/// answered, then to the others in turn; "etcd refused the request" is any
/// other error answer of etcd's, as errc::invalid_argument with etcd's
/// message as the detail.
class Coordinator {
public:
    /// connect_etcd's: stops the keep-alive and watch threads (no more
    /// on_lost or on_change calls) and revokes the lease with one request to
    /// the member that answered last, waiting at most 500 ms (best effort:
    /// a leader hands over at once; otherwise its lease runs out by TTL).
    /// RETURN VALUE: none. ERRORS: none.
    virtual ~Coordinator() = default;

    /// Become the leader: wait until this candidate leads, at most `timeout`.
    /// A lease is granted and kept alive from here on; the candidate's key
    /// goes with it if the wait ends first.
    /// RETURN VALUE: this leadership (name, fencing term).
    /// ERRORS: errc::io_error (no etcd member reachable, or not elected
    /// within `timeout`: another candidate leads; detail says which);
    /// errc::quorum_lost (etcd answered but cannot decide: no quorum);
    /// errc::invalid_argument (already leading or campaigning, an empty name).
    /// In more detail: the lease is granted first (request_timeout, every
    /// member tried), then the campaign request goes to one member only (it
    /// must not be sent twice), so that member being unreachable is
    /// errc::io_error as well; errc::io_error also for an answer that is not
    /// JSON or names no leader key; errc::invalid_argument also when etcd
    /// refused the lease grant or the campaign. When the campaign request
    /// fails, its lease is revoked (best effort).
    virtual Result<Leader> campaign(std::string_view name, std::chrono::milliseconds timeout) = 0;

    /// The current leader; nullopt when there is none.
    /// RETURN VALUE: the leader (name and fencing term, from etcd), or nullopt when
    /// nobody leads the election (etcd's "election: no leader").
    /// ERRORS: as campaign's io_error and quorum_lost.
    /// Also errc::io_error for an answer that is not JSON, and
    /// errc::invalid_argument when etcd refused the request otherwise.
    virtual Result<std::optional<Leader>> leader() = 0;

    /// Give the leadership up: the leader key and the lease are deleted,
    /// so another candidate is elected at once (not after the TTL).
    /// RETURN VALUE: {} once etcd has taken the resignation.
    /// ERRORS: as leader(); errc::invalid_argument when not leading.
    /// leading() is false from the call on, and the lease is revoked (best
    /// effort, which deletes the leader key too) also when the resign
    /// request fails with errc::io_error, errc::quorum_lost or
    /// errc::invalid_argument (etcd refused it).
    virtual Result<void> resign() = 0;

    /// True from a successful campaign until resign() or the leadership is
    /// lost (on_lost). A leader that sees false must stop writing: a newer
    /// one may be elected, and fencing will refuse this one's writes.
    /// RETURN VALUE: as said. ERRORS: none.
    [[nodiscard]] virtual bool leading() const noexcept = 0;

    /// Follow the leadership: `on_change` is called on the coordinator's
    /// watch thread with the leader at once and at every change after
    /// (etcd's election observe stream; re-established on another member
    /// when one fails). Replaces an earlier watch. Calls stop when the
    /// coordinator is destroyed.
    /// RETURN VALUE: {} once the callback is in place (the first call comes
    /// later, from the watch thread, and only while some candidate leads).
    /// ERRORS: errc::invalid_argument (empty callback).
    /// etcd's errors never reach the caller: a stream that fails, or cannot
    /// be opened, is tried again on the next member after 200 ms.
    virtual Result<void> watch(std::function<void(const Leader&)> on_change) = 0;
};

/// A Coordinator on etcd v3 through its JSON gateway (HTTP/1.1 with
/// Boost.Beast; docs/coordinator.md says why not gRPC). Checks that some
/// endpoint answers. Destroying it stops its threads and revokes its
/// lease (best effort): a leader that exits hands over at once; one that
/// crashes hands over when its lease expires.
/// RETURN VALUE: the coordinator, not yet campaigning or watching.
/// ERRORS: errc::invalid_argument (no endpoints, an empty election,
/// lease_ttl under 2 s); errc::io_error (no endpoint answers).
/// errc::invalid_argument also for request_timeout not positive, or an
/// endpoint that is not HOST:PORT with a port from 1 to 65535. The probe is
/// etcd's maintenance status: a member that answers it with an error (no
/// quorum, say) still counts as answering.
Result<std::unique_ptr<Coordinator>> connect_etcd(CoordinatorOptions options);

} // namespace rpm

RPM_API_END
