#include "report.hpp"

namespace rpm::probe {
namespace {
using flush::Input;
using flush::Source;

Input<platform::CpuFlush> cpu_input(const platform::Profile& p, const Overrides& ov) {
    if (ov.cpu_flush) return *ov.cpu_flush;
    return {p.cpu, Source::detected, p.cpu_detail};
}

template <class T>
Input<T> with_override(Input<T> detected, const std::optional<Input<T>>& ov) {
    return ov ? *ov : detected;
}

Input<platform::Tri> tri_input(platform::Tri detected, const std::string& detail,
                               const std::optional<Input<bool>>& ov) {
    if (ov) return {ov->value ? platform::Tri::yes : platform::Tri::no, ov->source, ov->origin};
    Source s = detected == platform::Tri::unknown ? Source::assumed : Source::detected;
    return {detected, s, detail};
}

DeviceView view_of(const platform::RdmaDevice& dev, const Overrides& ov) {
    DeviceView v{dev, {}, {}, {}};
    v.ddio = with_override(flush::device_inputs(dev).ddio, Overrides::lookup(ov.ddio, dev.name));
    v.native_flush = tri_input(dev.native_flush, dev.caps_detail, Overrides::lookup(ov.native_flush, dev.name));
    v.atomic_write = tri_input(dev.atomic_write, dev.caps_detail, Overrides::lookup(ov.atomic_write, dev.name));
    return v;
}

Result<PathRegion> open_path(const std::filesystem::path& path, const std::filesystem::path& root) {
    pmem::OpenOptions o;
    o.sysfs_root = root;
    auto region = pmem::Region::open(path, o);
    if (!region) return Error(region.error().code(), "--pmem " + region.error().message());
    return PathRegion{path.string(),          region->kind(),      region->granularity(),
                      region->domain(),       region->nd_region(), region->size()};
}

flush::RegionInput region_input(const PathRegion& p) {
    std::string origin = p.nd_region.empty() ? "libpmem2 granularity" : "nd " + p.nd_region;
    Source s = p.domain == PersistenceDomain::unknown ? Source::assumed : Source::detected;
    return {p.path, {p.domain, s, origin}, p.granularity};
}

// The regions section shows overridden domains too ("reported as an override").
void apply_region_overrides(std::vector<flush::RegionInput>& regions, const Overrides& ov) {
    for (auto& r : regions)
        r.domain = with_override(r.domain, Overrides::lookup(ov.persistence_domain, r.name));
}

} // namespace

const platform::CxlRegion* cxl_of(const Report& r, const std::string& name) {
    for (const auto& c : r.cxl.regions)
        if (c.nd_region == name) return &c;
    return nullptr;
}

const platform::DirtyShutdown* dirty_shutdown_of(const Report& r, const std::string& memdev) {
    for (const auto& d : r.dirty_shutdown.nmems)
        if (!d.memdev.empty() && d.memdev == memdev) return &d;
    return nullptr;
}

Result<Report> build_report(const Options& opts, const EnvLookup& env) {
    auto ov = load_overrides(opts.config, env);
    if (!ov) return ov.error();
    platform::DetectOptions d;
    d.root = opts.sysfs_root;
    d.query_verbs = opts.sysfs_root == "/";
    d.extra_iio_device_ids = ov->iio_root_port_ids;
    auto profile = platform::detect(d);
    if (!profile) return profile.error();

    Report r{*profile,
             cpu_input(*profile, *ov),
             flush::regions_of(*profile),
             {},
             {},
             {},
             platform::cxl_inventory(opts.sysfs_root),
             platform::cxl_ram_regions(opts.sysfs_root),
             platform::dirty_shutdown_counts(opts.sysfs_root)};
    for (const auto* lines : {&r.cxl.unreadable, &r.cxl_ram.unreadable, &r.dirty_shutdown.unreadable})
        for (const auto& u : *lines) r.profile.unreadable.push_back(u);
    for (const auto& path : opts.pmem_paths) {
        auto p = open_path(path, opts.sysfs_root);
        if (!p) return p.error();
        r.paths.push_back(*p);
        r.regions.push_back(region_input(*p));
    }
    for (const auto& dev : profile->rdma_devices) r.devices.push_back(view_of(dev, *ov));
    r.decisions = flush::plan(r.regions, profile->rdma_devices, *ov);
    apply_region_overrides(r.regions, *ov);
    return r;
}

} // namespace rpm::probe
