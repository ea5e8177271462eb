// The flush plan: the decision for every (PM region, RDMA device) pair of a
// machine, from its detected profile and the user's overrides. rpm-probe
// prints it; a server hands each client the decision for its region.
#pragma once

#include <rpm/flush.hpp>
#include <rpm/overrides.hpp>
#include <rpm/platform.hpp>

#include <optional>
#include <string>
#include <vector>

namespace rpm::flush {

/// A PM region as the planner sees it: an nd region (granularity unknown,
/// it is not mapped) or a mapped region (granularity from libpmem2).
struct RegionInput {
    std::string name;                      ///< "region0" or a path
    Input<PersistenceDomain> domain;
    std::optional<Granularity> granularity;
};

struct PlannedDecision {
    std::string region;
    std::optional<std::string> device;  ///< nullopt: no RDMA device on this machine
    Decision decision;
};

/// The regions of a profile, with their detected domains and provenance.
std::vector<RegionInput> regions_of(const platform::Profile& profile);

/// The DDIO / native-flush inputs for one device (detected or assumed).
Inputs device_inputs(const platform::RdmaDevice& dev);

/// One decision per region and device; one per region with no device when
/// there is none (DDIO then counts as unknown, i.e. on).
std::vector<PlannedDecision> plan(const std::vector<RegionInput>& regions,
                                  const std::vector<platform::RdmaDevice>& devices,
                                  const rpm::Overrides& overrides);

} // namespace rpm::flush
