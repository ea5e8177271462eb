#pragma once
// The target's controllers and subsystems, independent of the transport:
// Fabrics Connect / Property Get / Property Set, and the admin commands
// (Identify, Get Log Page, Set/Get Features, Keep Alive, Async Event
// Request). A queue's QueueCommands (src/nvmf/serve/queue_commands.cpp) brings
// them commands, and its fabric's queue (nvmf/tcp/, nvmf/rdma/) the bytes;
// everything here works on SQEs and data buffers, so it is unit-tested
// without sockets.

#include "nvmf/wire.hpp"

#include <rpm/nvmf.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

namespace rpm::nvmf::auth {
struct ControllerPolicy;
}

namespace rpm::nvmf::target {

/// What a command's execution produced.
struct Outcome {
    std::uint16_t status = wire::sc::success;
    std::uint32_t dw0 = 0;
    std::uint32_t dw1 = 0;
    /// Data for the host (controller-to-host transfer), at most the length
    /// the command's SGL allows: the fabric sends min(data, sgl length).
    std::vector<std::uint8_t> data;
    /// Async Event Request: no completion now (sent when the controller is
    /// torn down, with abort_sq_deletion).
    bool deferred = false;
};

/// An Outcome carrying only a failure status (no data, dw0 = 0).
inline Outcome failed(std::uint16_t status) {
    Outcome o;
    o.status = status;
    return o;
}

/// NVMe transport types (TRTYPE).
inline constexpr std::uint8_t trtype_rdma = 1;
inline constexpr std::uint8_t trtype_tcp = 3;

/// Per-target limits the controllers report.
struct Limits {
    std::uint32_t in_capsule_data = 8192;    ///< I/O queues (IOCCSZ = (64 + this) / 16)
    std::uint32_t max_io_size = 128 * 1024;  ///< MDTS
    std::uint16_t max_io_queues = 8;
    std::uint16_t max_queue_size = 128;      ///< CAP.MQES + 1
    std::uint8_t trtype = 3;                 ///< NVMe transport type: 3 TCP, 1 RDMA (discovery log, error log, SGLS)
    std::string traddr = "127.0.0.1";        ///< for discovery log entries
    std::uint16_t trsvcid = 4420;
};

class Subsystem;

/// One controller: created by an admin-queue Connect, found again by cntlid
/// from I/O-queue Connects; lives while any of its queues does.
class Controller {
public:
    Controller(std::shared_ptr<Subsystem> subsystem, std::uint16_t cntlid, std::string hostnqn,
               std::uint32_t kato_ms, const Limits& limits);

    std::uint16_t cntlid() const { return cntlid_; }
    Subsystem& subsystem() const { return *subsystem_; }
    const std::string& hostnqn() const { return hostnqn_; }
    /// The Host Identifier of the admin queue's Connect: every I/O queue's
    /// Connect must carry the same (set once, before the controller is shared).
    const std::array<std::uint8_t, 16>& hostid() const { return hostid_; }
    void set_hostid(const std::array<std::uint8_t, 16>& id) { hostid_ = id; }
    bool is_discovery() const;

    /// Property Get / Property Set (fctype 0x04 / 0x00): CAP, VS, CC, CSTS.
    /// CC.EN 0->1 sets CSTS.RDY (refused with CSTS.CFS if IOSQES/IOCQES are
    /// not 6/4 on an I/O controller); CC.SHN sets CSTS.SHST complete.
    Outcome property_get(const wire::Sqe& sqe);
    Outcome property_set(const wire::Sqe& sqe);

    /// Any admin-queue command other than Fabrics: Identify, Get Log Page,
    /// Set/Get Features, Keep Alive, Async Event Request; others:
    /// invalid_opcode. `data` is the host's data for the command (none of
    /// these take any: ignored). Commands other than Property Get/Set and
    /// Connect fail with command_sequence_error while CC.EN = 0 or CSTS.RDY = 0.
    Outcome admin(const wire::Sqe& sqe, std::span<const std::uint8_t> data);

    /// Whether I/O queues may be used (CC.EN and CSTS.RDY set).
    bool ready() const;
    /// I/O queues granted by Set Features Number of Queues (or max_io_queues
    /// if never set).
    std::uint16_t io_queues() const;

    /// Keep alive: any admin command counts (Keep Alive itself included).
    void touch();
    /// Whether KATO (0 = disabled) has passed since the last touch().
    bool expired(std::chrono::steady_clock::time_point now) const;
    std::uint32_t kato_ms() const;

    /// Outstanding Async Event Requests' cids, to abort at teardown.
    std::vector<std::uint16_t> take_pending_aers();

    /// Record a failed command for the Error Information log, and I/O totals
    /// for SMART.
    void record_error(std::uint16_t sqid, std::uint16_t cid, std::uint16_t status, std::uint32_t nsid);
    void record_io(bool write, std::uint64_t bytes);

    // (implementation state is private; one mutex: admin and I/O threads)
private:
    friend class Registry;
    /// Registry: queue `qid` connects (checks readiness and io_queues() for
    /// qid > 0, under the controller's lock). RETURN VALUE: the Connect status.
    std::uint16_t attach_queue(std::uint16_t qid);
    /// Registry: queue `qid` went away.
    void detach_queue(std::uint16_t qid);

    struct State;
    std::shared_ptr<Subsystem> subsystem_;
    std::uint16_t cntlid_;
    std::string hostnqn_;
    std::array<std::uint8_t, 16> hostid_{};
    Limits limits_;
    std::shared_ptr<State> state_;
};

/// An exported subsystem (or the discovery subsystem): its NQN, host
/// access, namespaces (from the engine) and live controllers.
class Subsystem {
public:
    /// A discovery subsystem lists `entries` (the target's NVM subsystems).
    static std::shared_ptr<Subsystem> make_discovery(std::vector<DiscoveryEntry> entries);
    static std::shared_ptr<Subsystem> make_nvm(const SubsystemSpec& spec, std::shared_ptr<Engine> engine,
                                               SubsystemHandle handle);

    const std::string& nqn() const;
    bool is_discovery() const;
    bool host_allowed(const std::string& hostnqn) const;
    /// What a host must prove on each queue (DH-HMAC-CHAP), or null when it
    /// connects without authenticating.
    const auth::ControllerPolicy* auth_policy(const std::string& hostnqn) const;
    /// S1 of the next authentication transaction (counts up, never 0).
    std::uint32_t next_auth_seqnum() const;
    const SubsystemSpec& spec() const;             ///< nqn, serial, model
    Engine* engine() const;                         ///< null for discovery
    SubsystemHandle handle() const;
    std::vector<NamespaceView> namespaces() const;  ///< empty for discovery
    const std::vector<DiscoveryEntry>& discovery_entries() const;

private:
    struct Data;
    explicit Subsystem(std::shared_ptr<Data> d);
    std::shared_ptr<Data> d_;
};

/// All subsystems of a target and their controllers: where Connect lands.
class Registry {
public:
    Registry(std::vector<std::shared_ptr<Subsystem>> subsystems, Limits limits);

    /// Fabrics Connect. qid 0: a new controller (cntlid in the data must be
    /// 0xFFFF: the dynamic model) if the subsystem exists and the host may
    /// connect; qid > 0: the existing controller `data.cntlid` of the same
    /// host and subsystem, ready, and qid <= its io_queues(). sqsize must
    /// be >= 1 and < max_queue_size (admin queue: < 32 is fine, kernel uses 31).
    /// recfmt must be 0.
    /// RETURN VALUE: the controller and the Outcome (status, dw0 = cntlid on
    /// success); the controller is null when status != success.
    std::pair<std::shared_ptr<Controller>, Outcome> connect(const wire::Sqe& sqe, std::span<const std::uint8_t> data);

    /// A queue of `c` went away; when its admin queue goes, the controller
    /// is forgotten (its cntlid can be reused later).
    void release(const std::shared_ptr<Controller>& c, std::uint16_t qid);

    /// Controllers whose keep-alive timer expired (removed from the registry).
    std::vector<std::shared_ptr<Controller>> take_expired(std::chrono::steady_clock::time_point now);

    const Limits& limits() const { return limits_; }

private:
    std::vector<std::shared_ptr<Subsystem>> subsystems_;
    Limits limits_;
    mutable std::mutex mu_;
    std::vector<std::shared_ptr<Controller>> controllers_;
    std::uint16_t next_cntlid_ = 1;  // the lowest cntlid that may be free
    std::vector<bool> cntlid_used_;  // by cntlid, 0..0xFFEF

    std::pair<std::shared_ptr<Controller>, Outcome> connect_admin(const wire::Sqe& sqe, const wire::ConnectData& d);
    std::pair<std::shared_ptr<Controller>, Outcome> connect_io(const wire::Sqe& sqe, const wire::ConnectData& d);
    std::uint16_t allocate_cntlid();  // 0 when all are taken (caller holds mu_)
    void forget(std::size_t index);   // drop controllers_[index], free its cntlid (caller holds mu_)
};

} // namespace rpm::nvmf::target
