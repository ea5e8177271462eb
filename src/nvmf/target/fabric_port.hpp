// A fabric's listening port as the Target sees it: started once the
// registry exists, stopped first at shutdown, handing each new queue to the
// Target's admit. NVMe/RDMA's RdmaPort is one (nvmf/rdma/port.cpp defines
// listen_rdma); NVMe/TCP listens through the Target's own Asio acceptor.
// Declared here, defined by the fabric: the Target includes no fabric, the
// way src/server/listener.hpp keeps rpm's server free of its transports.
#pragma once

#include "nvmf/target/queue_commands.hpp"

#include <rpm/result.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace rpm::nvmf::target {

class ServedQueue;

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
using AdmitQueue = std::function<bool(const std::shared_ptr<ServedQueue>&)>;

struct RdmaListen {
    std::string address;
    std::uint16_t port = 0;
    std::uint16_t max_io_queues = 8;
    std::uint16_t max_queue_size = 128;
    std::uint32_t in_capsule_data = 8192;
    SharedStats* stats = nullptr;
};

/// NVMe/RDMA's port on the real verbs (nvmf/rdma/port.cpp), listening but
/// taking no connection before start().
/// RETURN VALUE: the port. ERRORS: as RdmaPort::listen (errc::io_error for
/// an address of no RDMA device or a failed verbs call, errc::invalid_argument
/// for an address that does not parse).
Result<std::unique_ptr<FabricPort>> listen_rdma(const RdmaListen& l, AdmitQueue admit);

} // namespace rpm::nvmf::target
