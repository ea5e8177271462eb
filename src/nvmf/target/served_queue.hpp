#pragma once
// One queue of a target as the target's bookkeeping sees it, whatever its
// fabric: served by the Workers (workers.hpp), watched for its
// set-up timeout and its controller's keep-alive, closed from another
// thread. NVMe/TCP's Session and NVMe/RDMA's RdmaQueue are two.

#include "nvmf/controller/controller.hpp"
#include "nvmf/target/workers.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace rpm::nvmf::target {

class ServedQueue : public Workers::Conn {
public:
    virtual ~ServedQueue() = default;
    /// From another thread: make serve() return soon and end the queue.
    virtual void close() = 0;
    /// The controller this queue belongs to (null before Connect).
    virtual std::shared_ptr<Controller> controller() const = 0;
    /// The queue's id (meaningful once controller() is set).
    virtual std::uint16_t qid() const = 0;
    /// Ended and out of the Workers set: the owner may destroy it.
    virtual bool finished() const = 0;
    /// Connect done (thread-safe): the set-up timeout no longer applies.
    virtual bool set_up() const = 0;
    virtual std::chrono::steady_clock::time_point accepted() const = 0;
    /// The host's address, as the per-address set-up limit counts it.
    virtual const std::string& peer() const = 0;
};

} // namespace rpm::nvmf::target
