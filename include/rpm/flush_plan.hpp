// The flush plan: the decision for every (PM region, RDMA device) pair of a
// machine, from its detected profile and the user's overrides. rpm-probe
// prints it; a server hands each client the decision for its region.
#pragma once

#include <rpm/export.hpp>
#include <rpm/flush.hpp>
#include <rpm/overrides.hpp>
#include <rpm/platform.hpp>

#include <optional>
#include <string>
#include <vector>

RPM_API_BEGIN

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
/// RETURN VALUE: one RegionInput per Profile::regions entry, in order: the
/// domain as detected (Source::detected, or Source::assumed when its file
/// was unreadable), origin its persistence_domain path (prefixed "CXL
/// regionN (memN, ...) via " for a CXL-backed region, read through
/// platform::cxl_inventory(profile.root)), granularity
/// unknown; empty when the profile has no region. ERRORS: none.
std::vector<RegionInput> regions_of(const platform::Profile& profile);

/// The DDIO / native-flush inputs for one device (detected or assumed).
/// RETURN VALUE: Inputs with ddio and native_flush set from `dev` (an
/// unknown DDIO is kept as unknown, Source::assumed; an unknown native
/// flush becomes false, Source::assumed); domain and granularity left at
/// their defaults. ERRORS: none.
Inputs device_inputs(const platform::RdmaDevice& dev);

/// What rpm's rdma:// transport can issue, where that limits the decision.
struct TransportAbility {
    bool native_flush = false;  ///< an RDMA FLUSH (persistent)
    /// Why not, when native_flush is false: the build's rdma-core, or a
    /// region whose memory the RNIC would not register for FLUSH. limit_to
    /// quotes it.
    std::string why_not;
};

/// This build's: native flush where rdma-core has ibv_wr_flush (v45 on;
/// the build probes it: RPM_HAVE_IBV_WR_FLUSH), none on Debian 12's v44.
/// RETURN VALUE: {true} where the probe found it; otherwise {false, "rpm's
/// rdma:// cannot issue it: this build's rdma-core has no ibv_wr_flush
/// ..."}. ERRORS: none.
TransportAbility rdma_ability();

/// `in`, with a native flush the RNIC reports switched off when `ability`
/// cannot issue it, and Inputs::native_flush_unusable saying why (an
/// override of native_flush still decides: it is applied afterwards).
/// RETURN VALUE: `in` unchanged when its native_flush is false or
/// `ability` can issue one; otherwise `in` with native_flush false
/// (Source::assumed, origin kept) and native_flush_unusable set: "the RNIC
/// reports native flush, but " then ability.why_not ("rpm's rdma:// does
/// not issue it here" when that is empty). ERRORS: none.
Inputs limit_to(Inputs in, const TransportAbility& ability);

/// One decision per region and device; one per region with no device when
/// there is none (DDIO then counts as unknown, i.e. on). Each device's
/// inputs are limited to what `ability` can issue (limit_to), as a server's
/// grants are.
/// RETURN VALUE: the decisions, region by region, each region's devices in
/// `devices` order (regions x devices entries, or one per region with
/// device nullopt when `devices` is empty; empty when there is no region);
/// overrides are looked up per region and device name
/// (Overrides::for_decision). ERRORS: none.
std::vector<PlannedDecision> plan(const std::vector<RegionInput>& regions,
                                  const std::vector<platform::RdmaDevice>& devices,
                                  const rpm::Overrides& overrides, TransportAbility ability = rdma_ability());

} // namespace rpm::flush

RPM_API_END
