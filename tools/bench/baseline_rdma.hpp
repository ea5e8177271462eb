// The plain-RDMA baseline for rdma:// figures: an RDMA read round trip of
// the tested size (and, for bandwidth, RDMA write streaming) between the
// same two hosts, without rpm's protocol on top.
//
// Every verbs call belongs in src/transport/rdma/; rpm-bench must not grow
// its own RDMA stack, and it has no server-side peer for a bare MR. This
// returns "unavailable" with the reason, and rpm-bench reports the baseline
// (and every rdma:// ratio) as unavailable: no number is ever made up. The
// baselines are separate processes in the lab VM: tools/lab/bench runs
// rpm-bench next to perftest's ib_read_lat and ib_write_lat on the same rxe
// device, and tools/lab/ab/floor.sh next to rpm-floor (tools/floor/: rpm's
// operations as bare work requests on the verbs layer), ratios computed
// outside.
#pragma once

#include "measure.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace rpmbench {

struct RdmaReadSpec {
    std::string host;       ///< the rpm server's address (rdma://HOST:PORT)
    std::uint16_t port = 0;
    std::size_t size = 64;  ///< bytes per RDMA read
    unsigned qd = 1;
    unsigned threads = 1;
};

struct RdmaBaseline {
    std::optional<Measurement> result;  ///< set when measured
    std::string unavailable;            ///< else why not ("unavailable: ...")
};

/// Measure RDMA read round trips of spec.size bytes until `stop`.
RdmaBaseline rdma_read_round_trip(const RdmaReadSpec& spec, const StopRule& stop);

/// Measure RDMA write streaming bandwidth (1 MiB writes) until `stop`.
RdmaBaseline rdma_write_stream(const RdmaReadSpec& spec, const StopRule& stop);

} // namespace rpmbench
