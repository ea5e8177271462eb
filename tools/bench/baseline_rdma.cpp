// Not implemented on purpose: see baseline_rdma.hpp. The reason names what
// is missing on this machine as well, so a report read later says whether
// the device or the code was the blocker, and where the lab's comparison is.
#include "baseline_rdma.hpp"

#include <filesystem>

namespace rpmbench {
namespace {

std::string reason() {
    std::error_code ec;
    const std::filesystem::path sys = "/sys/class/infiniband";
    const bool device = std::filesystem::exists(sys, ec) && !std::filesystem::is_empty(sys, ec);
    return std::string("unavailable: rpm-bench has no plain RDMA baseline (raw verbs calls belong in "
                       "src/transport/rdma/, not in rpm-bench); in the lab VM, tools/lab/bench compares "
                       "rdma:// with perftest's ib_read_lat and ib_write_lat on the same device, and "
                       "tools/lab/ab/floor.sh with rpm-floor") +
           (device ? "" : "; this machine has no RDMA device (/sys/class/infiniband is empty)");
}

} // namespace

RdmaBaseline rdma_read_round_trip(const RdmaReadSpec&, const StopRule&) { return {std::nullopt, reason()}; }

RdmaBaseline rdma_write_stream(const RdmaReadSpec&, const StopRule&) { return {std::nullopt, reason()}; }

} // namespace rpmbench
