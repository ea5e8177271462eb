#pragma once
// The commands of one NVMe-oF queue on the target, whatever the fabric:
// where a command goes (Connect to the registry, admin commands to the
// controller, I/O to the engine: its offload queue once enabled, its
// software path otherwise), the buffers its data lands in, and the
// completion's fields. A fabric (nvmf/tcp/, nvmf/rdma/) only moves
// capsules, data and completions, through its FabricQueue (fabric.hpp):
// Linux nvmet's nvmet_fabrics_ops and SPDK's spdk_nvmf_transport_ops draw
// the same line.

#include "nvmf/auth/exchange.hpp"
#include "nvmf/controller/controller.hpp"
#include "nvmf/wire.hpp"

#include <rpm/nvmf.hpp>
#include <rpm/nvmf_offload.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <utility>
#include <vector>

namespace rpm::nvmf::target {

/// Counters the queues of a target share.
struct SharedStats {
    std::atomic<std::uint64_t> connections{0}, terminated{0}, controllers{0}, keep_alive_expired{0};
    std::atomic<std::uint64_t> admin{0}, io{0}, offloaded{0}, errors{0}, digest_errors{0};
    std::atomic<std::uint64_t> refused{0}, setup_timeouts{0};
    std::atomic<std::uint64_t> auth_succeeded{0}, auth_failed{0};
};

/// What every queue of a target needs, whatever its transport.
struct QueueEnv {
    Registry* registry = nullptr;
    SharedStats* stats = nullptr;
};

// Where a command's data is (wire.hpp: host and target fabrics read SGLs
// into it alike).
using CommandData = wire::CommandData;

/// A command capsule as a transport read it.
struct Capsule {
    wire::Sqe sqe;
    CommandData data;
};

class FabricQueue;

/// One queue's commands, in order. Not thread-safe, but for controller(),
/// qid() and set_up(), which the target's watchdog reads.
class QueueCommands {
public:
    QueueCommands(const QueueEnv& env, FabricQueue& fabric) : env_(env), t_(fabric) {}

    /// One command capsule. RETURN VALUE: false when the queue must end
    /// (the transport failed); a refused command is answered and is true.
    bool on_command(const wire::Sqe& sqe, const CommandData& data);
    /// Capsules that arrived together, in order (queue_batch.cpp): runs of
    /// Reads and of Writes with their data in the capsule go to the engine
    /// together (OffloadQueue::execute_many: their I/O in flight at once),
    /// each in its own part of the staging buffer; any other command runs
    /// alone through on_command(). Answers come in the capsules' order.
    /// RETURN VALUE: as on_command().
    bool on_commands(std::span<const Capsule> capsules);
    /// The data of `sqe` whose FabricQueue::pull said Pulled::later, now
    /// all in `data` (`length` bytes, as the capsule's CommandData said).
    /// RETURN VALUE: as on_command().
    bool on_pulled(const wire::Sqe& sqe, std::span<const std::uint8_t> data, bool intact);
    /// Whether on_command() may pull the command's data from host memory
    /// (FabricQueue::pull): data from host to controller, not in the capsule.
    static bool may_pull(const wire::Sqe& sqe, const CommandData& data);
    /// The completion of `sqe` with `status`, and `c2h` before it:
    /// counts and traces a failure, records it in the controller's error log.
    bool respond(const wire::Sqe& sqe, std::uint16_t status, std::uint32_t dw0 = 0, std::uint32_t dw1 = 0,
                 std::span<const std::uint8_t> c2h = {});
    /// The queue's end: the staging slot and the controller's queue given back.
    void release();

    /// The controller this queue belongs to (null before Connect).
    std::shared_ptr<Controller> controller() const;
    /// The queue's id (meaningful once controller() is set).
    std::uint16_t qid() const;
    /// Connect done (thread-safe).
    bool set_up() const { return set_up_.load(std::memory_order_acquire); }
    /// Capsules a queue may have outstanding: its SQ size (0's based) + 1.
    std::size_t depth() const { return std::size_t(sqsize_) + 1; }
    /// The largest SQSIZE (0's based) a Connect may ask for on this queue,
    /// when the transport bounds it (0: the controller's CAP.MQES only).
    void limit_sqsize(std::uint16_t max) { max_sqsize_ = max; }

private:
    bool io_queue() const { return connected_ && qid_ != 0; }
    bool dispatch(const wire::Sqe& sqe, std::span<const std::uint8_t> data, std::uint32_t data_len);
    /// Pull a command's data from host memory, then dispatch it.
    bool pull_and_dispatch(const wire::Sqe& sqe, std::uint32_t len);
    /// Where dispatch would take an I/O command to on_io: the status its
    /// transfer length earns there (0: none), so that a Write the queue
    /// would refuse is refused before its data is asked for.
    std::uint16_t io_length_status(const wire::Sqe& sqe, std::uint32_t data_len);
    bool on_connect(const wire::Sqe& sqe, std::span<const std::uint8_t> data);
    bool on_admin(const wire::Sqe& sqe, std::span<const std::uint8_t> data);
    bool on_io(const wire::Sqe& sqe, std::uint32_t data_len);
    /// Authentication Send / Receive (queue_auth.cpp).
    bool on_auth(const wire::Sqe& sqe, std::span<const std::uint8_t> data);
    bool auth_receive(const wire::Sqe& sqe);
    void auth_ended();
    bool finish(const wire::Sqe& sqe, const Outcome& o);
    /// The bytes a capsule moves when it may join a batch (queue_batch.cpp);
    /// 0 when it must run alone (anything on_command would refuse or treat
    /// otherwise).
    std::uint32_t batchable(const Capsule& c);
    /// Run batch_ (at least two) on the engine and answer each.
    bool run_batch(std::span<std::uint8_t> staging);
    std::span<std::uint8_t> io_buffer();
    std::uint32_t block_size(std::uint32_t nsid);

    QueueEnv env_;
    FabricQueue& t_;
    std::uint16_t qid_ = 0;
    std::uint16_t sqsize_ = 0;
    std::uint16_t sq_head_ = 0;
    std::uint16_t max_sqsize_ = 0;
    std::uint32_t sgl_len_ = 0;  ///< the running command's data length (CommandData::length)
    bool connected_ = false;
    // DH-HMAC-CHAP: the host's policy when it must authenticate (set at
    // Connect), the running transaction, and whether one succeeded.
    const auth::ControllerPolicy* auth_policy_ = nullptr;
    std::unique_ptr<auth::ControllerExchange> auth_;
    bool authenticated_ = false;
    bool failed_auth_ = false;  ///< a transaction failed: the queue ends once that is told
    std::shared_ptr<Controller> controller_;
    std::unique_ptr<OffloadQueue> offload_;
    std::vector<std::uint8_t> software_buf_;  // io_buffer() uses a 4096-aligned view of it
    std::vector<std::uint8_t> data_buf_;      // pulled data of non-I/O commands
    std::vector<std::pair<std::uint32_t, std::uint32_t>> block_sizes_;
    std::vector<StagedCommand> batch_;        // run_batch's commands (kept: no allocation per batch)
    std::vector<std::uint32_t> batch_bytes_;
    mutable std::mutex mu_;  // controller_ and qid_ (read by the target's watchdog)
    std::atomic<bool> set_up_{false};
};

} // namespace rpm::nvmf::target
