#pragma once
// rpm::nvmf::Host's state and the steps of its connect sequence.

#include "nvmf/host/queue.hpp"

#include <condition_variable>
#include <string>
#include <string_view>
#include <thread>

namespace rpm::nvmf {

struct Host::Impl {
    HostOptions options;
    std::unique_ptr<host::Queue> admin, io;
    ControllerInfo info;
    std::uint32_t mps = 4096;   ///< CAP.MPSMIN page size
    std::uint16_t last_status = 0;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> block_sizes;  ///< nsid -> LBA size

    std::mutex mu;
    std::condition_variable cv;
    bool stopping = false;
    std::thread keep_alive_thread;

    ~Impl();
    void keep_alive_loop();
    /// A completion with an error status becomes errc::nvme_status naming
    /// `what` and the status; last_status keeps it.
    Result<void> check(const Result<Completion>& c, const std::string& what);
};

namespace host {

/// What every Result call on a moved-from Host (no Impl: it went with the
/// move) answers, instead of dereferencing null.
inline Error moved_from_host(std::string_view call) {
    return Error(errc::invalid_argument, std::string(call) + " on a moved-from nvmf::Host");
}

/// Property Get / Set on the admin queue (8-byte when `wide`).
Result<std::uint64_t> property_get(Queue& admin, std::uint32_t offset, bool wide);
Result<void> property_set(Queue& admin, std::uint32_t offset, std::uint64_t value, bool wide);

/// Fabrics Connect for `qid` (cntlid 0xFFFF for the admin queue).
Result<Completion> connect_queue(Queue& q, const HostOptions& o, std::uint16_t qid, std::uint16_t sqsize,
                                 std::uint16_t cntlid);

/// Admin queue, CC.EN / CSTS.RDY, Identify Controller (and, for an NVM
/// subsystem, Number of Queues and the I/O queue).
Result<void> bring_up(Host::Impl& h);
/// DH-HMAC-CHAP on queue `qid` after its Connect asked for it (AUTHREQ.ATR).
/// ERRORS: errc::auth_failed (no secret, or either side refused: the detail
/// says which and why), errc::invalid_argument (a malformed secret),
/// errc::io_error / protocol_error / nvme_status (the commands themselves).
Result<void> authenticate(Queue& q, const HostOptions& o, std::uint16_t qid);
/// Admin queue only, enabled: for the discovery controller.
Result<std::unique_ptr<Queue>> open_admin(const HostOptions& o, std::uint16_t& cntlid);

ControllerInfo parse_identify_controller(std::span<const std::uint8_t> id, std::uint32_t mps);
std::vector<DiscoveryEntry> parse_discovery_log(std::span<const std::uint8_t> log);

} // namespace host
} // namespace rpm::nvmf
