// rpm-probe's human-readable report: inputs, then decisions with reasons,
// then what could not be read.
#include "dirty_since.hpp"
#include "report.hpp"

#include <cstdio>
#include <sstream>

namespace rpm::probe {
namespace {

template <class T>
std::string provenance(const flush::Input<T>& in) {
    std::string s = " [" + std::string(flush::to_string(in.source));
    if (!in.origin.empty()) s += ": " + in.origin;
    return s + "]";
}

std::string cpu_line(const Report& r) {
    std::string s;
    if (r.cpu.value.clwb) s += " CLWB";
    if (r.cpu.value.clflushopt) s += " CLFLUSHOPT";
    if (r.cpu.value.clflush) s += " CLFLUSH";
    if (s.empty()) s = " none";
    return "CPU flush instructions:" + s + provenance(r.cpu) + "\n";
}

std::string hex(std::uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "%#llx", static_cast<unsigned long long>(v));
    return buf;
}

// The count only: whether it moved needs the value from before, which
// --dirty-shutdown-since or the application brings (docs/flush-methods.md).
std::string dirty_shutdown_text(const platform::DirtyShutdown* d) {
    if (d == nullptr || !d->count) return "dirty shutdown count not reported by this kernel or device";
    return "dirty shutdown count " + std::to_string(*d->count);
}

void cxl_line(std::ostringstream& o, const Report& r, const platform::CxlRegion& c) {
    o << "    CXL " << (c.cxl_region.empty() ? std::string("region unknown") : c.cxl_region) << ": "
      << c.interleave_ways << "-way, granularity " << c.interleave_granularity << ", host bridge "
      << (c.host_bridge.empty() ? std::string("unknown") : c.host_bridge) << ", memdevs";
    if (c.memdevs.empty()) o << " unknown";
    for (const auto& m : c.memdevs)
        o << " " << m.name << " (serial " << hex(m.serial) << ", " << dirty_shutdown_text(dirty_shutdown_of(r, m.name))
          << ")";
    o << "; persistence_domain " << to_string(c.domain) << " (set by the kernel's cxl_pmem driver)\n";
}

// NFIT nvdimms have no CXL memdev line to carry their count.
void nvdimm_lines(std::ostringstream& o, const Report& r) {
    for (const auto& d : r.dirty_shutdown.nmems)
        if (d.memdev.empty() && d.count)
            o << "  nvdimm " << d.nmem << ": " << dirty_shutdown_text(&d) << " (/" << d.source << ")\n";
}

// Why a machine with CXL memory still has no PM region (or only some).
void cxl_without_regions(std::ostringstream& o, const Report& r) {
    for (const auto& m : r.cxl.memdevs)
        if (m.pmem_size == 0)
            o << "  CXL " << m.name << " (serial " << hex(m.serial) << "): volatile only (ram " << hex(m.ram_size)
              << ", no pmem capacity): not persistent memory\n";
    for (const auto& c : r.cxl_ram.regions) {
        o << "  CXL " << c.cxl_region << " (mode ram:";
        for (const auto& m : c.memdevs) o << " " << m.name;
        o << "): volatile, not persistent memory\n";
    }
    if (r.cxl.regions.empty())
        for (const auto& b : r.cxl.nvdimm_bridges)
            o << "  CXL " << b << " present but no CXL pmem region on it (create one: cxl create-region -t pmem)\n";
}

void regions(std::ostringstream& o, const Report& r) {
    o << "\nPersistent-memory regions:\n";
    if (r.regions.empty()) o << "  none (no nd regions; pass --pmem PATH to inspect a file or device)\n";
    cxl_without_regions(o, r);
    for (const auto& in : r.regions) {
        o << "  " << in.name << ": persistence_domain " << to_string(in.domain.value);
        if (in.granularity) o << ", granularity " << to_string(*in.granularity);
        for (const auto& p : r.paths)
            if (p.path == in.name)
                o << ", " << pmem::to_string(p.kind) << (p.nd_region.empty() ? "" : " in " + p.nd_region);
        o << provenance(in.domain) << "\n";
        if (const auto* c = cxl_of(r, in.name)) cxl_line(o, r, *c);
    }
    nvdimm_lines(o, r);
}

std::string root_port_text(const platform::RdmaDevice& d) {
    if (!d.root_port) return "no root port";
    char id[16];
    std::snprintf(id, sizeof id, "%04x:%04x", d.root_port->vendor, d.root_port->device);
    return "root port " + d.root_port->bdf + " (" + id + ")";
}

void devices(std::ostringstream& o, const Report& r) {
    o << "\nRDMA devices:\n";
    if (r.devices.empty()) o << "  none (decisions below treat DDIO as unknown, which counts as on)\n";
    for (const auto& v : r.devices) {
        const auto& d = v.dev;
        o << "  " << d.name << ": " << (d.pci_bdf.empty() ? "software device" : "pci " + d.pci_bdf)
          << ", " << root_port_text(d) << "\n"
          << "    DDIO " << to_string(v.ddio.value) << ": " << d.ddio.detail << provenance(v.ddio) << "\n"
          << "    native flush " << platform::to_string(v.native_flush.value) << ", atomic write "
          << platform::to_string(v.atomic_write.value) << provenance(v.native_flush) << "\n";
    }
}

void decisions(std::ostringstream& o, const Report& r) {
    o << "\nFlush decisions:\n";
    if (r.decisions.empty()) o << "  none (no regions)\n";
    for (const auto& p : r.decisions) {
        o << "  " << p.region << " via " << (p.device ? *p.device : "(no RDMA device)") << ": "
          << flush::to_string(p.decision.method) << ", server persist "
          << flush::to_string(p.decision.server_persist) << "\n    why: " << p.decision.reason << "\n";
    }
}

// "mem0 (serial 0x1)", with the baseline's name when the memdev was
// renamed (matched by serial); NFIT nvdimms by nmem name.
std::string device_label(const DirtyChange& c) {
    const DirtyEntry& e = c.now ? *c.now : *c.before;
    if (e.memdev.empty()) return e.nmem;
    std::string s = e.memdev + " (serial " + (e.serial ? hex(*e.serial) : std::string("unknown"));
    if (c.now && c.before && c.before->memdev != c.now->memdev)
        s += ", " + (c.before->memdev.empty() ? c.before->nmem : c.before->memdev) + " in the baseline";
    return s + ")";
}

std::string change_text(const DirtyChange& c) {
    const auto count = [](const std::optional<DirtyEntry>& e) { return std::to_string(*e->count); };
    switch (c.status) {
    case DirtyStatus::moved:
        return "moved " + count(c.before) + " -> " + count(c.now) +
               ": a power loss may have lost data not yet durable elsewhere";
    case DirtyStatus::unchanged: return "unchanged (" + count(c.now) + ")";
    case DirtyStatus::gone: return "gone: not here now (count " + count(c.before) + " in the baseline)";
    case DirtyStatus::no_count:
        return "no count now (" + count(c.before) + " in the baseline): not reported by this kernel or device";
    case DirtyStatus::no_baseline: return "no baseline (count " + count(c.now) + " now, none in the baseline)";
    }
    return {};
}

void dirty_since(std::ostringstream& o, const DirtySince& s) {
    o << "\nDirty shutdown since " << s.file << ":\n";
    if (s.devices.empty()) o << "  no nvdimm has a dirty shutdown count, now or in the baseline\n";
    for (const auto& c : s.devices) o << "  " << device_label(c) << ": " << change_text(c) << "\n";
}

} // namespace

std::string render_text(const Report& r, const DirtySince* since) {
    std::ostringstream o;
    o << "rpm-probe: sysfs root " << r.profile.root.string() << "\n" << cpu_line(r);
    regions(o, r);
    devices(o, r);
    decisions(o, r);
    if (since != nullptr) dirty_since(o, *since);
    if (!r.profile.unreadable.empty()) {
        o << "\nCould not read:\n";
        for (const auto& u : r.profile.unreadable) o << "  - " << u << "\n";
    }
    return o.str();
}

} // namespace rpm::probe
