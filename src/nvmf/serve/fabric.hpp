#pragma once
// The fabric table: everything the target asks of a fabric, in one place,
// the way Linux nvmet has nvmet_fabrics_ops and SPDK
// spdk_nvmf_transport_ops. A fabric (NVMe/TCP in nvmf/tcp/, NVMe/RDMA in
// nvmf/rdma/) gives:
//   Fabric       listen: a FabricPort bound to the address, taking no
//                connection before start()
//   FabricPort   start (accept connections, each a FabricQueue handed to
//                the Target's admit), stop, the port it listens on
//   FabricQueue  one queue (one connection): served by the Workers when it
//                has bytes, watched and closed by the Target, and moving
//                QueueCommands' data and completions
// Declared here, defined by the fabric: serve/ includes no fabric, the way
// src/server/listener.hpp keeps rpm's server free of its transports.

#include "nvmf/serve/queue_commands.hpp"

#include <rpm/nvmf.hpp>
#include <rpm/result.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

namespace rpm::nvmf::target {

/// What FabricQueue::pull did.
enum class Pulled : std::uint8_t {
    done,    ///< the data is in place
    failed,  ///< a fatal transport error: the queue ends (the host was told, as the binding says)
    later,   ///< asked for, still coming: the fabric hands it to QueueCommands::on_pulled
};

class FabricQueue {
public:
    virtual ~FabricQueue() = default;

    // Serving (the Workers, workers.hpp).
    /// The descriptor that is readable when the queue has work.
    virtual int fd() const = 0;
    /// Serve what arrived. RETURN VALUE: true when the queue is idle
    /// (nothing read ahead) and waits for more; false when it ended.
    virtual bool serve() = 0;
    /// Out of the Workers set: the last call; the owner may destroy it after.
    virtual void retire() = 0;

    // Bookkeeping (the Target, target.cpp; thread-safe).
    /// From another thread: make serve() return soon and end the queue.
    virtual void close() = 0;
    /// The controller this queue belongs to (null before Connect).
    virtual std::shared_ptr<Controller> controller() const = 0;
    /// The queue's id (meaningful once controller() is set).
    virtual std::uint16_t qid() const = 0;
    /// Ended and out of the Workers set: the owner may destroy it.
    virtual bool finished() const = 0;
    /// Connect done: the set-up timeout no longer applies.
    virtual bool set_up() const = 0;
    virtual std::chrono::steady_clock::time_point accepted() const = 0;
    /// The host's address, as the per-address set-up limit counts it.
    virtual const std::string& peer() const = 0;

    // Moving data and completions (QueueCommands, queue_commands.hpp).
    /// Send the completion `cqe` of `sqe`, preceded by `c2h` (the
    /// controller-to-host data, at most the SGL's length) when not empty.
    /// RETURN VALUE: false when the connection is gone or broken (the queue ends).
    virtual bool complete(const wire::Sqe& sqe, const wire::Cqe& cqe, std::span<const std::uint8_t> c2h) = 0;
    /// Fill `into` with the command's host-to-controller data from host
    /// memory (NVMe/TCP: R2T and H2CData PDUs; NVMe/RDMA: an RDMA READ).
    /// `intact` is set false when the data arrived but failed the
    /// transport's integrity check. Pulled::later: the fabric keeps serving
    /// other capsules meanwhile and calls QueueCommands::on_pulled with
    /// the data once it has all of it (`into` may be reused before that).
    virtual Pulled pull(const wire::Sqe& sqe, std::span<std::uint8_t> into, bool& intact) = 0;
};

/// A fabric's listening port as the Target sees it: started once the
/// registry exists, stopped first at shutdown.
class FabricPort {
public:
    virtual ~FabricPort() = default;
    /// RETURN VALUE: the port it listens on (the one asked for, or the
    /// one the system chose for 0).
    [[nodiscard]] virtual std::uint16_t port() const = 0;
    /// Take connections from now on, their queues bound to `registry`.
    virtual void start(Registry* registry) = 0;
    /// Take no more connections; queues already admitted are the Target's.
    virtual void stop() = 0;
};

/// Takes a new queue into the Target's bookkeeping; false refuses it.
using AdmitQueue = std::function<bool(const std::shared_ptr<FabricQueue>&)>;

/// One fabric's entry point.
struct Fabric {
    /// Bind and listen on options.address:options.port; no connection is
    /// taken before FabricPort::start. ERRORS: errc::invalid_argument for
    /// an address that does not parse, errc::io_error when binding or
    /// listening failed (NVMe/RDMA: no RDMA device at the address).
    Result<std::unique_ptr<FabricPort>> (*listen)(const TargetOptions& options, SharedStats* stats, AdmitQueue admit);
};

extern const Fabric tcp_fabric;   // nvmf/tcp/port.cpp
extern const Fabric rdma_fabric;  // nvmf/rdma/port.cpp

inline const Fabric& fabric_of(Transport t) { return t == Transport::rdma ? rdma_fabric : tcp_fabric; }

/// The bookkeeping every fabric's queue answers the same way: from its
/// QueueCommands and the queue's own flags. A fabric's queue derives from
/// it and adds serving and moving.
class QueueBase : public FabricQueue {
public:
    void retire() override { finished_ = true; }
    std::shared_ptr<Controller> controller() const override { return commands_.controller(); }
    std::uint16_t qid() const override { return commands_.qid(); }
    bool finished() const override { return finished_.load(); }
    bool set_up() const override { return commands_.set_up(); }
    std::chrono::steady_clock::time_point accepted() const override { return accepted_; }
    const std::string& peer() const override { return peer_; }

protected:
    QueueBase(const QueueEnv& env, std::string peer) : commands_(env, *this), peer_(std::move(peer)) {}

    QueueCommands commands_;
    std::atomic<bool> finished_{false};
    std::atomic<bool> closing_{false};  ///< close() was called
    const std::chrono::steady_clock::time_point accepted_ = std::chrono::steady_clock::now();
    const std::string peer_;
};

} // namespace rpm::nvmf::target
