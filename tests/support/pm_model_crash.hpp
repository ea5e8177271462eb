// The crash test's workload: a simulated client writes random bytes into a
// PersistenceModel served by a real server::Service, flushes recently written
// ranges by the method Service granted, and the power fails at a random point.
// A DurabilityOracle then counts the bytes that an acknowledged flush
// promised and the crash did not keep.
//
// The client does what rpm's transports do for each flush::Method:
//   RDMA writes       -> PersistenceModel::nic_write (one-sided: no server code)
//   RDMA atomic write -> an aligned 8-byte nic_write
//   read_after_write  -> nic_read (an RDMA read after the writes)
//   send_flush        -> nic_receive (the send arrives), then Service::handle_flush
//   native_flush      -> nic_native_flush per range as the wire has it: one
//                        FLUSH per written range, adjacent ones joined
//                        (rdma::merge_flush_ranges, flusher.cpp)
//   TCP write / atomic write / flush -> Service::handle_write / handle_atomic_write
//                        / handle_flush (the server's CPU stores and persist step)
//   persist (1 to 3 slices) -> TCP: Service::handle_persist (one request);
//                        RDMA: the writes, then the flush, as above
#pragma once

#include "server/service.hpp"

#include <rpm/flush.hpp>
#include <rpm/persistence.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace rpm::test {

/// One configuration of the crash test: a platform, a transport, and
/// (for negative controls) a deliberately wrong flush.
struct CrashCell {
    std::string name;
    PersistenceDomain domain = PersistenceDomain::memory_controller;
    Ddio ddio = Ddio::on;
    bool native_flush = false;  ///< the RNIC reports persistent FLUSH
    server::TransportKind kind = server::TransportKind::rdma;
    // Negative controls only:
    std::optional<flush::Method> force_method;      ///< asked for in OpenRegion (unsafe allowed)
    std::optional<flush::ServerPersist> force_step; ///< replaces the granted step behind Service's back
    bool skip_flush = false;                        ///< "flush" acknowledges without doing anything
    bool short_ranges = false;  ///< the server (or the FLUSH) is told each range one byte short (an off-by-one)
    /// Every native FLUSH completes in error (the responder's memory lacks
    /// IBV_ACCESS_FLUSH_PERSISTENT): nothing may be acknowledged.
    bool flush_refused = false;
    // The workload:
    std::uint64_t seed = 1;
    unsigned runs = 200;       ///< one crash per run
    unsigned mean_ops = 50;    ///< ops per run are uniform in [1, 2 * mean_ops - 1]
    std::uint64_t region_size = 16 * 1024;  ///< small, so writes overlap and lines are shared
};

struct CrashReport {
    flush::Method method = flush::Method::send_flush;  ///< as granted by Service
    flush::ServerPersist step = flush::ServerPersist::none;
    std::string reason;
    std::string setup_error;  ///< non-empty when the server could not be set up
    std::uint64_t runs = 0;
    std::uint64_t ops = 0;
    std::uint64_t writes = 0;
    std::uint64_t atomic_writes = 0;
    std::uint64_t flushes = 0;
    std::uint64_t persists = 0;        ///< vectored persists (each also counted in bytes_acknowledged)
    std::uint64_t bytes_written = 0;
    std::uint64_t bytes_acknowledged = 0;  ///< bytes named by returned flushes
    std::uint64_t crashes = 0;
    std::uint64_t lost_bytes = 0;      ///< acknowledged bytes the crash did not keep
    std::uint64_t runs_with_loss = 0;
    std::uint64_t torn_words = 0;      ///< words that fell back to their durable value
    std::uint64_t drifted_lines = 0;
    std::uint64_t read_mismatches = 0; ///< bytes a pre-crash read saw wrong (must be 0)
    std::uint64_t server_errors = 0;   ///< failed flushes, handler errors (0 but where a control plants them)
};

/// Runs cell.runs crashes; deterministic for a given cell (seed included).
CrashReport run_crash_cell(const CrashCell& cell);

/// One line for test output and docs.
std::string summary(const CrashCell& cell, const CrashReport& r);

/// The flush decision for a platform whose every input was detected (as the
/// server decides it for a model region).
flush::Decision detected_decision(PersistenceDomain domain, Ddio ddio, bool native_flush);

} // namespace rpm::test
