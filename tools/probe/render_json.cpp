// rpm-probe --json. The schema is documented in docs/flush-methods.md; fields are
// only ever added, so scripts can rely on them.
#include "dirty_since.hpp"
#include "report.hpp"

#include <nlohmann/json.hpp>

namespace rpm::probe {
namespace {
using nlohmann::json;

template <class T>
void put_source(json& j, const std::string& key, const flush::Input<T>& in) {
    j[key + "_source"] = std::string(flush::to_string(in.source));
    j[key + "_origin"] = in.origin;
}

json tri(platform::Tri t) {
    if (t == platform::Tri::unknown) return nullptr;
    return t == platform::Tri::yes;
}

json cpu_json(const Report& r) {
    json list = json::array();
    if (r.cpu.value.clwb) list.push_back("clwb");
    if (r.cpu.value.clflushopt) list.push_back("clflushopt");
    if (r.cpu.value.clflush) list.push_back("clflush");
    json j{{"flush_instructions", list}};
    put_source(j, "flush_instructions", r.cpu);
    return j;
}

json count_json(const platform::DirtyShutdown* d) {
    return d != nullptr && d->count ? json(*d->count) : json(nullptr);
}

// dirty_shutdown null: no count from this kernel (before 6.15) or device.
json memdev_json(const Report& r, const platform::CxlMemdev& m) {
    return json{{"name", m.name},
                {"serial", m.serial},
                {"pmem_size", m.pmem_size},
                {"ram_size", m.ram_size},
                {"host_bridge", m.host_bridge},
                {"dirty_shutdown", count_json(dirty_shutdown_of(r, m.name))}};
}

json memdevs_json(const Report& r, const std::vector<platform::CxlMemdev>& memdevs) {
    json mem = json::array();
    for (const auto& m : memdevs) mem.push_back(memdev_json(r, m));
    return mem;
}

json cxl_json(const Report& r, const platform::CxlRegion& c) {
    const json mem = memdevs_json(r, c.memdevs);
    return json{{"cxl_region", c.cxl_region.empty() ? json(nullptr) : json(c.cxl_region)},
                {"nd_region", c.nd_region},
                {"memdevs", mem},
                {"host_bridge", c.host_bridge},
                {"interleave_ways", c.interleave_ways},
                {"interleave_granularity", c.interleave_granularity},
                {"persistence_domain", std::string(to_string(c.domain))},
                {"raw_persistence_domain", c.raw_domain}};
}

// Machine-wide CXL facts that explain an empty regions list: volatile-only
// memdevs, or a bridge on which no pmem region was created yet, or
// regions that decode volatile capacity.
json cxl_summary_json(const Report& r) {
    json ram = json::array();
    for (const auto& c : r.cxl_ram.regions)
        ram.push_back({{"cxl_region", c.cxl_region},
                       {"mode", "ram"},
                       {"persistent", false},
                       {"memdevs", memdevs_json(r, c.memdevs)},
                       {"host_bridge", c.host_bridge},
                       {"interleave_ways", c.interleave_ways},
                       {"interleave_granularity", c.interleave_granularity}});
    return json{{"memdevs", memdevs_json(r, r.cxl.memdevs)},
                {"nvdimm_bridges", r.cxl.nvdimm_bridges},
                {"ram_regions", ram}};
}

// Every nd nmem with its dirty shutdown count (NFIT ones included, which
// have no CXL memdev to carry it).
json nvdimms_json(const Report& r) {
    json out = json::array();
    for (const auto& d : r.dirty_shutdown.nmems)
        out.push_back({{"nmem", d.nmem},
                       {"memdev", d.memdev.empty() ? json(nullptr) : json(d.memdev)},
                       {"dirty_shutdown", count_json(&d)},
                       {"dirty_shutdown_source", d.source.empty() ? json(nullptr) : json("/" + d.source)}});
    return out;
}

json region_json(const Report& r, const flush::RegionInput& in) {
    json j{{"name", in.name}, {"persistence_domain", std::string(to_string(in.domain.value))}};
    put_source(j, "persistence_domain", in.domain);
    j["granularity"] = in.granularity ? json(std::string(to_string(*in.granularity))) : json(nullptr);
    for (const auto& nd : r.profile.regions)
        if (nd.name == in.name) {
            j["kind"] = "nd_region";
            j["raw_persistence_domain"] = nd.raw_domain;
            j["size"] = nd.size;
            j["devices"] = nd.devices;
            if (const auto* c = cxl_of(r, nd.name)) j["cxl"] = cxl_json(r, *c);
        }
    for (const auto& p : r.paths)
        if (p.path == in.name) {
            j["kind"] = std::string(pmem::to_string(p.kind));
            j["nd_region"] = p.nd_region.empty() ? json(nullptr) : json(p.nd_region);
            j["size"] = p.size;
        }
    return j;
}

json device_json(const DeviceView& v) {
    const auto& d = v.dev;
    json j{{"name", d.name},
           {"pci_bdf", d.pci_bdf.empty() ? json(nullptr) : json(d.pci_bdf)},
           {"pci_path", d.pci_path},
           {"root_port", d.root_port ? json(d.root_port->bdf) : json(nullptr)},
           {"ddio", std::string(to_string(v.ddio.value))},
           {"ddio_detail", d.ddio.detail},
           {"native_flush", tri(v.native_flush.value)},
           {"atomic_write", tri(v.atomic_write.value)},
           {"caps_detail", d.caps_detail}};
    put_source(j, "ddio", v.ddio);
    put_source(j, "native_flush", v.native_flush);
    put_source(j, "atomic_write", v.atomic_write);
    if (d.root_port) {
        char id[16];
        std::snprintf(id, sizeof id, "%04x:%04x", d.root_port->vendor, d.root_port->device);
        j["root_port_id"] = id;
        j["root_port_xeon_iio"] = d.root_port->xeon_iio;
    }
    if (d.ddio.perfctrlsts_0) j["perfctrlsts_0"] = *d.ddio.perfctrlsts_0;
    if (d.ddio.no_snoop_op_wr_en) j["no_snoop_op_wr_en"] = *d.ddio.no_snoop_op_wr_en;
    return j;
}

json decision_json(const flush::PlannedDecision& p) {
    const auto& d = p.decision;
    return json{{"region", p.region},
                {"device", p.device ? json(*p.device) : json(nullptr)},
                {"method", std::string(flush::to_string(d.method))},
                {"server_persist", std::string(flush::to_string(d.server_persist))},
                {"effective_persistence_domain", std::string(to_string(d.effective_domain))},
                {"ddio", std::string(to_string(d.inputs.ddio.value))},
                {"native_flush", d.inputs.native_flush.value},
                {"overridden", d.overridden},
                {"reason", d.reason}};
}

json optional_count(const std::optional<DirtyEntry>& e) {
    return e && e->count ? json(*e->count) : json(nullptr);
}

// nmem, memdev and serial are this probe's (the baseline's for a device
// gone); baseline_* say what the baseline called it. moved is null when
// there are not two counts to compare.
json dirty_change_json(const DirtyChange& c) {
    const DirtyEntry& e = c.now ? *c.now : *c.before;
    const bool compared = c.status == DirtyStatus::moved || c.status == DirtyStatus::unchanged;
    return json{{"nmem", e.nmem},
                {"memdev", e.memdev.empty() ? json(nullptr) : json(e.memdev)},
                {"serial", e.serial ? json(*e.serial) : json(nullptr)},
                {"before", optional_count(c.before)},
                {"now", optional_count(c.now)},
                {"moved", compared ? json(c.status == DirtyStatus::moved) : json(nullptr)},
                {"status", std::string(to_string(c.status))},
                {"baseline_nmem", c.before ? json(c.before->nmem) : json(nullptr)},
                {"baseline_memdev", c.before && !c.before->memdev.empty() ? json(c.before->memdev) : json(nullptr)}};
}

json dirty_since_json(const DirtySince& s) {
    json devices = json::array();
    for (const auto& c : s.devices) devices.push_back(dirty_change_json(c));
    return json{{"file", s.file}, {"moved", s.any_moved()}, {"devices", devices}};
}

} // namespace

std::string render_json(const Report& r, const DirtySince* since) {
    json j;
    j["sysfs_root"] = r.profile.root.string();
    j["cpu"] = cpu_json(r);
    j["regions"] = json::array();
    for (const auto& in : r.regions) j["regions"].push_back(region_json(r, in));
    j["cxl"] = cxl_summary_json(r);
    j["nvdimms"] = nvdimms_json(r);
    j["rdma_devices"] = json::array();
    for (const auto& v : r.devices) j["rdma_devices"].push_back(device_json(v));
    j["decisions"] = json::array();
    for (const auto& p : r.decisions) j["decisions"].push_back(decision_json(p));
    j["unreadable"] = r.profile.unreadable;
    if (since != nullptr) j["dirty_shutdown_since"] = dirty_since_json(*since);
    return j.dump(2) + "\n";
}

} // namespace rpm::probe
