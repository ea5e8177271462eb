#pragma once
// Internals of src/nvmf/controller/: a controller's mutable state and the
// free functions that build its admin replies (Identify data, log pages,
// features, properties, Connect checks), grouped one topic per .cpp file.
// src/nvmf/controller/*.cpp and their tests include this, and the target's
// queue's commands for invalid_connect_parameter() (a Connect refused before it
// reaches a controller).

#include "nvmf/controller/controller.hpp"

#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>
#include <span>
#include <string_view>
#include <vector>

namespace rpm::nvmf::target {

// ---- what the controllers report -------------------------------------------
inline constexpr std::uint32_t nvme_version = 0x00010300;      // 1.3
inline constexpr std::uint32_t kas_ms = 100;                   // Identify KAS = 1 (100 ms units)
inline constexpr std::uint16_t admin_queue_max_sqsize = 31;    // the kernel's NVME_AQ_DEPTH - 1
inline constexpr std::size_t max_aers = 4;                     // AERL = 3 (0's based)
inline constexpr std::size_t error_log_entries = 16;           // ELPE = 15 (0's based)
inline constexpr std::size_t error_entry_len = 64;
inline constexpr std::size_t identify_len = 4096;
inline constexpr std::size_t smart_len = 512;
inline constexpr std::size_t discovery_record_len = 1024;      // header and each entry
inline constexpr std::uint16_t max_cntlid = 0xFFEF;            // 0xFFF0.. are reserved

// ---- CC / CSTS fields ---------------------------------------------------------
namespace cc {
inline constexpr std::uint32_t en = 1u << 0;
inline std::uint32_t css(std::uint32_t v) { return (v >> 4) & 0x7; }
inline std::uint32_t mps(std::uint32_t v) { return (v >> 7) & 0xF; }
inline std::uint32_t ams(std::uint32_t v) { return (v >> 11) & 0x7; }
inline std::uint32_t shn(std::uint32_t v) { return (v >> 14) & 0x3; }
inline std::uint32_t iosqes(std::uint32_t v) { return (v >> 16) & 0xF; }
inline std::uint32_t iocqes(std::uint32_t v) { return (v >> 20) & 0xF; }
} // namespace cc
namespace csts {
inline constexpr std::uint32_t rdy = 1u << 0;
inline constexpr std::uint32_t cfs = 1u << 1;
inline constexpr std::uint32_t shst_complete = 2u << 2;
} // namespace csts

/// One Error Information log entry (what record_error was told).
struct ErrorRecord {
    std::uint64_t count = 0;  // the controller's running error count, 1 first
    std::uint16_t sqid = 0, cid = 0, status = 0;
    std::uint32_t nsid = 0;
};

/// I/O totals for the SMART log.
struct IoTotals {
    std::uint64_t reads = 0, writes = 0;
    std::uint64_t bytes_read = 0, bytes_written = 0;
};

/// A controller's mutable state; every field is guarded by `mu` (the admin
/// queue's thread and the I/O queues' threads all reach it).
struct ControllerState {
    mutable std::mutex mu;
    std::uint32_t cc = 0;
    std::uint32_t csts = 0;
    std::uint32_t kato_ms = 0;
    std::chrono::steady_clock::time_point last_touch = std::chrono::steady_clock::now();
    std::uint16_t granted_queues = 0;          // 0: Number of Queues never set
    std::uint32_t async_event_config = 0;
    std::vector<std::uint16_t> pending_aers;
    std::vector<std::uint16_t> queues;          // connected qids (0 = admin)
    std::deque<ErrorRecord> errors;             // newest first
    std::uint64_t error_count = 0;
    IoTotals io;
};

/// What the Controller knows about itself, for the page builders.
struct ControllerView {
    std::uint16_t cntlid = 0;
    const Subsystem* subsystem = nullptr;
    const Limits* limits = nullptr;
    bool discovery() const { return subsystem->is_discovery(); }
};

// ---- properties.cpp -----------------------------------------------------------
std::uint64_t cap_value(const Limits& limits);
/// Property Get / Set on `s` (caller holds s.mu).
Outcome get_property(const ControllerState& s, const ControllerView& v, const wire::Sqe& sqe);
Outcome set_property(ControllerState& s, const ControllerView& v, const wire::Sqe& sqe);
bool is_ready(const ControllerState& s);

// ---- identify.cpp ---------------------------------------------------------------
/// Identify (CNS 0, 1, 2, 3); the controller's namespaces come from the engine.
Outcome identify(const ControllerView& v, const wire::Sqe& sqe);
std::uint32_t highest_nsid(const Subsystem& sub, const std::vector<NamespaceView>& views);

// ---- log_pages.cpp ----------------------------------------------------------------
/// Get Log Page (caller holds s.mu).
Outcome get_log_page(const ControllerState& s, const ControllerView& v, const wire::Sqe& sqe);
std::vector<std::uint8_t> discovery_log(const Subsystem& sub, const Limits& limits);
std::vector<std::uint8_t> error_log(const ControllerState& s, std::uint8_t trtype);
std::vector<std::uint8_t> smart_log(const ControllerState& s);

// ---- features.cpp -----------------------------------------------------------------
/// Set / Get Features (caller holds s.mu).
Outcome set_features(ControllerState& s, const ControllerView& v, const wire::Sqe& sqe);
Outcome get_features(const ControllerState& s, const ControllerView& v, const wire::Sqe& sqe);
std::uint16_t granted_io_queues(const ControllerState& s, const ControllerView& v);
std::uint32_t round_kato(std::uint32_t ms);

// ---- connect.cpp ------------------------------------------------------------------
/// Connect Invalid Parameters with IATTR (0: SQE, 1: data) and IPO (byte offset).
Outcome invalid_connect_parameter(bool in_data, std::uint16_t offset);
/// Checks of the SQE that do not need the registry: data length, recfmt,
/// sqsize. RETURN VALUE: success, or the failed Outcome.
Outcome check_connect(const wire::Sqe& sqe, std::span<const std::uint8_t> data, const Limits& limits);
/// The subsystem a Connect names (the discovery NQN names the discovery one).
std::shared_ptr<Subsystem> find_subsystem(const std::vector<std::shared_ptr<Subsystem>>& all, std::string_view nqn);

// Byte offsets the Connect IPO points at.
namespace connect_offset {
inline constexpr std::uint16_t hostid = 0;    // data
inline constexpr std::uint16_t qid = 42;      // SQE
inline constexpr std::uint16_t sqsize = 44;   // SQE
inline constexpr std::uint16_t cntlid = 16;   // data
inline constexpr std::uint16_t subnqn = 256;  // data
inline constexpr std::uint16_t hostnqn = 512; // data
} // namespace connect_offset

/// Copy `s` into `out`, padded with `pad` (Identify ASCII fields use spaces).
void put_string(std::span<std::uint8_t> out, std::string_view s, std::uint8_t pad);

} // namespace rpm::nvmf::target
