// Pairs each region with each RDMA device and asks decide(); keeps the
// provenance of every input so the plan can explain itself.
#include <rpm/flush_plan.hpp>

namespace rpm::flush {
namespace {

Input<Ddio> ddio_input(const platform::RdmaDevice& dev) {
    Source s = dev.ddio.state == Ddio::unknown ? Source::assumed : Source::detected;
    std::string origin = dev.root_port ? "root port " + dev.root_port->bdf : dev.ddio.detail;
    return {dev.ddio.state, s, std::move(origin)};
}

Input<bool> native_input(const platform::RdmaDevice& dev) {
    if (dev.native_flush == platform::Tri::unknown)
        return {false, Source::assumed, dev.caps_detail};
    return {dev.native_flush == platform::Tri::yes, Source::detected, dev.caps_detail};
}

Inputs region_inputs(const RegionInput& r, Inputs in) {
    in.domain = r.domain;
    if (r.granularity) in.granularity = {r.granularity, Source::detected, "libpmem2"};
    return in;
}

Inputs no_device_inputs() {
    Inputs in;
    in.ddio = {Ddio::unknown, Source::assumed, "no RDMA device"};
    in.native_flush = {false, Source::assumed, "no RDMA device"};
    return in;
}

// "CXL region0 (mem0, mem1) via ": the decision's reason names CXL, because a CXL
// region's domain is a constant of the kernel's cxl_pmem driver, backed by
// the device's Global Persistent Flush, not a platform (ADR) report.
std::string cxl_origin(const platform::CxlInventory& cxl, const std::string& nd_region) {
    for (const auto& c : cxl.regions) {
        if (c.nd_region != nd_region) continue;
        std::string s = "CXL " + (c.cxl_region.empty() ? std::string("region unknown") : c.cxl_region);
        for (std::size_t i = 0; i < c.memdevs.size(); ++i) s += (i ? ", " : " (") + c.memdevs[i].name;
        return s + (c.memdevs.empty() ? " via " : ") via ");
    }
    return {};
}

} // namespace

std::vector<RegionInput> regions_of(const platform::Profile& profile) {
    std::vector<RegionInput> out;
    const platform::CxlInventory cxl =
        profile.regions.empty() ? platform::CxlInventory{} : platform::cxl_inventory(profile.root);
    for (const auto& r : profile.regions) {
        Source s = r.domain_readable ? Source::detected : Source::assumed;
        std::string origin = cxl_origin(cxl, r.name) + "/sys/bus/nd/devices/" + r.name + "/persistence_domain";
        out.push_back({r.name, {r.domain, s, origin}, std::nullopt});
    }
    return out;
}

Inputs device_inputs(const platform::RdmaDevice& dev) {
    Inputs in;
    in.ddio = ddio_input(dev);
    in.native_flush = native_input(dev);
    return in;
}

// The one place a build says whether it can issue FLUSH, and why not: the
// build's probe of rdma-core (cmake/Dependencies.cmake). The verbs layer's
// table follows the same probe (verbs.cpp: post_chain_ex).
TransportAbility rdma_ability() {
    if (RPM_HAVE_IBV_WR_FLUSH) return {true, {}};
    return {false, "rpm's rdma:// cannot issue it: this build's rdma-core has no ibv_wr_flush (added in rdma-core "
                   "v45; Debian 12 ships v44)"};
}

Inputs limit_to(Inputs in, const TransportAbility& ability) {
    if (!in.native_flush.value || ability.native_flush) return in;
    std::string why = "the RNIC reports native flush, but ";
    why += ability.why_not.empty() ? std::string("rpm's rdma:// does not issue it here") : ability.why_not;
    in.native_flush = {false, Source::assumed, in.native_flush.origin};
    in.native_flush_unusable = std::move(why);
    return in;
}

std::vector<PlannedDecision> plan(const std::vector<RegionInput>& regions,
                                  const std::vector<platform::RdmaDevice>& devices,
                                  const rpm::Overrides& overrides, TransportAbility ability) {
    std::vector<PlannedDecision> out;
    for (const auto& r : regions) {
        if (devices.empty()) {
            auto d = decide(region_inputs(r, no_device_inputs()), overrides.for_decision(r.name, ""));
            out.push_back({r.name, std::nullopt, std::move(d)});
        }
        for (const auto& dev : devices) {
            auto d = decide(region_inputs(r, limit_to(device_inputs(dev), ability)),
                            overrides.for_decision(r.name, dev.name));
            out.push_back({r.name, dev.name, std::move(d)});
        }
    }
    return out;
}

} // namespace rpm::flush
