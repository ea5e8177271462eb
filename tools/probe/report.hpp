// What rpm-probe found and decided, before it is rendered as text or JSON.
#pragma once

#include <rpm/flush_plan.hpp>
#include <rpm/overrides.hpp>
#include <rpm/platform.hpp>
#include <rpm/pmem.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace rpm::probe {

/// A --pmem path, opened and inspected through libpmem2.
struct PathRegion {
    std::string path;
    pmem::Kind kind;
    Granularity granularity;
    PersistenceDomain domain;
    std::string nd_region;
    std::size_t size;
};

/// An RDMA device with overrides laid over what was detected.
struct DeviceView {
    platform::RdmaDevice dev;
    flush::Input<Ddio> ddio;
    flush::Input<platform::Tri> native_flush;
    flush::Input<platform::Tri> atomic_write;
};

struct Report {
    platform::Profile profile;
    flush::Input<platform::CpuFlush> cpu;
    std::vector<flush::RegionInput> regions;  ///< nd regions, then --pmem paths
    std::vector<PathRegion> paths;
    std::vector<DeviceView> devices;
    std::vector<flush::PlannedDecision> decisions;
    platform::CxlInventory cxl;               ///< what stands behind CXL nd regions
    platform::CxlRamRegions cxl_ram;          ///< CXL regions that are volatile (not PM)
    platform::DirtyShutdownCounts dirty_shutdown;  ///< per nd nmem
};

/// The CXL provenance of nd region `name`, or nullptr when it is not on CXL.
const platform::CxlRegion* cxl_of(const Report& r, const std::string& name);

/// The dirty shutdown entry of CXL memdev `memdev`, or nullptr when no nmem
/// names it (a volatile memdev, or a kernel before 6.2).
const platform::DirtyShutdown* dirty_shutdown_of(const Report& r, const std::string& memdev);

struct Options {
    std::filesystem::path sysfs_root = "/";
    std::vector<std::filesystem::path> pmem_paths;
    std::optional<std::filesystem::path> config;
};

/// Detect, open the --pmem paths, apply overrides, decide.
/// ERRORS: as platform::detect, pmem::Region::open and load_overrides.
Result<Report> build_report(const Options& opts, const EnvLookup& env);

struct DirtySince;

/// `since`: --dirty-shutdown-since's comparison, a section of its own; null
/// without the option.
std::string render_text(const Report& r, const DirtySince* since = nullptr);
std::string render_json(const Report& r, const DirtySince* since = nullptr);

} // namespace rpm::probe
