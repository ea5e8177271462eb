// The closed-loop load (load.cpp): --clients threads, each with its own
// connection and one put in flight, for --warmup then --duration seconds.
#pragma once

#include "options.hpp"

#include "../histogram.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace kvbench {

struct LoadResult {
    rpmbench::Histogram latency;           ///< every measured put (rpm-bench's recorder)
    std::uint64_t errors = 0;              ///< clients that stopped on a failed put
    double measured_s = 0;                 ///< from the end of the warm-up to the last measured put's end
    std::string error;                     ///< the first failure (connect or put), empty when none
};

/// Runs the load against o.addrs[0] (already checked to parse).
LoadResult run_load(const Options& o);

} // namespace kvbench
