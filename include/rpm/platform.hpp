// Platform detection: what a machine (or a sysfs fixture tree) says about
// persistence domains, DDIO, the RNICs' root ports, CPU flush instructions
// and native RDMA FLUSH / atomic write.
//
// Every reader works under a root directory (default "/"), so tests point it
// at a fixture tree in tests/fixtures/. Detection never fails as a whole for
// a file it cannot read: it records what it could not read in
// Profile::unreadable and carries on, marking the affected input unknown.
// Overrides (environment, configuration) are applied by rpm::Overrides, not
// here: detect() reports only what the machine says.
#pragma once

#include <rpm/export.hpp>
#include <rpm/persistence.hpp>
#include <rpm/result.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

RPM_API_BEGIN

namespace rpm::platform {

/// CPU cache-flush instructions (cpuid leaf 1 EDX[19], leaf 7 EBX[23], EBX[24]).
struct CpuFlush {
    bool clflush = false;
    bool clflushopt = false;
    bool clwb = false;
};

/// One nd region (/sys/bus/nd/devices/regionN).
struct NdRegion {
    std::string name;                   ///< "region0"
    PersistenceDomain domain = PersistenceDomain::unknown;
    std::string raw_domain;             ///< the file's text, trimmed ("" on memmap)
    bool domain_readable = false;       ///< false: file missing/unreadable, domain is unknown
    std::uint64_t size = 0;             ///< bytes, 0 when unreadable
    std::vector<std::string> devices;   ///< block (pmemN) and dax (daxN.M) devices in it
};

/// DDIO as read from an Intel Xeon IIO root port's perfctrlsts_0 (0x180).
struct DdioReading {
    Ddio state = Ddio::unknown;
    std::optional<std::uint8_t> perfctrlsts_0;  ///< the byte at 0x180 when read
    std::optional<bool> use_allocating_flow_wr; ///< bit 7: 1 = DDIO on
    std::optional<bool> no_snoop_op_wr_en;      ///< bit 3, reported only
    std::string detail;                         ///< how it was read, or why unknown
};

/// The PCIe root port above an RDMA device.
struct RootPort {
    std::string bdf;              ///< "0000:17:00.0"
    std::uint16_t vendor = 0;     ///< 0 when unreadable
    std::uint16_t device = 0;
    bool xeon_iio = false;        ///< an Intel Xeon IIO root port rpm knows
};

/// Yes / no / could not tell.
enum class Tri { no, yes, unknown };
/// RETURN VALUE: "no", "yes" or "unknown" ("unknown" too for a value
/// outside the enum); never fails.
std::string_view to_string(Tri t) noexcept;

/// One RDMA device (/sys/class/infiniband/<name>).
struct RdmaDevice {
    std::string name;                     ///< "mlx5_0", "rxe0"
    std::string pci_bdf;                  ///< empty for a software device (rxe)
    std::vector<std::string> pci_path;    ///< BDFs from the root port down to the device
    std::optional<RootPort> root_port;    ///< none for software or root-complex devices
    DdioReading ddio;
    Tri native_flush = Tri::unknown;      ///< IB_UVERBS_DEVICE_FLUSH_PERSISTENT
    Tri atomic_write = Tri::unknown;      ///< IB_UVERBS_DEVICE_ATOMIC_WRITE
    std::string caps_detail;              ///< how the capabilities were learned, or why not
};

/// Everything detect() found, plus what it could not read and why.
struct Profile {
    std::filesystem::path root;
    CpuFlush cpu;
    std::string cpu_detail;               ///< "cpuid" or why not
    std::vector<NdRegion> regions;
    std::vector<RdmaDevice> rdma_devices;
    std::vector<std::string> unreadable;  ///< one line per thing that could not be read
};

struct DetectOptions {
    std::filesystem::path root = "/";
    /// Ask libibverbs for device capabilities. Only meaningful when root is
    /// "/": a fixture tree has no devices behind it, and then the
    /// capabilities are reported unknown with that reason.
    bool query_verbs = true;
    /// Extra Intel root-port device IDs to treat as Xeon IIO ports (for
    /// CPUs newer than rpm's table; from configuration).
    std::vector<std::uint16_t> extra_iio_device_ids;
};

/// Read everything. Never fails for a missing or unreadable file (see
/// Profile::unreadable); fails with errc::path_not_found only when the root
/// itself does not exist.
/// RETURN VALUE: the profile: CPU flush instructions from cpuid (whatever
/// the root), nd regions and RDMA devices read under opts.root, device
/// capabilities from libibverbs only when the root is "/" and
/// opts.query_verbs is set (a failed query is noted in caps_detail and
/// Profile::unreadable, not returned).
/// ERRORS: errc::path_not_found (opts.root is missing, is not a directory,
/// or cannot be examined, e.g. EACCES on a parent: the detail names the
/// root and the reason).
Result<Profile> detect(const DetectOptions& opts = {});

/// A CXL memory device (/sys/bus/cxl/devices/memN).
struct CxlMemdev {
    std::string name;                   ///< "mem0"
    std::uint64_t serial = 0;           ///< PCIe Device Serial Number (0 when unreadable)
    std::uint64_t pmem_size = 0;        ///< bytes of persistent capacity (pmem/size)
    std::uint64_t ram_size = 0;         ///< bytes of volatile capacity (ram/size)
    std::string host_bridge;            ///< "pci0000:0c": the PCI root above it, "" if none
};

/// What stands behind an nd region on the CXL nvdimm bus: the CXL region
/// with the same id and the memdevs its targets decode to.
struct CxlRegion {
    std::string nd_region;              ///< "region0" (/sys/bus/nd/devices)
    std::string cxl_region;             ///< "region0" (/sys/bus/cxl/devices), "" if not found
    std::vector<CxlMemdev> memdevs;     ///< in interleave position order
    std::string host_bridge;            ///< distinct host bridges, comma-separated
    unsigned interleave_ways = 0;       ///< 0 when unreadable
    unsigned interleave_granularity = 0;
    PersistenceDomain domain = PersistenceDomain::unknown;  ///< the nd region's
    std::string raw_domain;             ///< its persistence_domain text
};

/// The CXL side of a machine, as far as persistent memory is concerned.
struct CxlInventory {
    std::vector<CxlRegion> regions;        ///< one per nd region whose bus provider is "CXL"
    std::vector<CxlMemdev> memdevs;        ///< every memdev, numeric order
    std::vector<std::string> nvdimm_bridges;  ///< "nvdimm-bridge0": CXL PM can be made here
    std::vector<std::string> unreadable;   ///< one line per thing that could not be read
};

/// Read /sys/bus/cxl and the CXL-backed nd regions under `root`. Kept out
/// of Profile so that no existing public struct changes layout.
/// RETURN VALUE: the inventory; all empty on a machine without CXL (no
/// /sys/bus/cxl is not an error). ERRORS: none: what cannot be read is
/// left at its default and named in CxlInventory::unreadable.
CxlInventory cxl_inventory(const std::filesystem::path& root);

/// A CXL region that decodes volatile capacity (`mode` "ram", Linux 6.3
/// and later): CXL memory, but not persistent memory. It is never on the
/// nd bus, so it has no nd region and no persistence domain.
struct CxlRamRegion {
    std::string cxl_region;             ///< "region0" (/sys/bus/cxl/devices)
    std::vector<CxlMemdev> memdevs;     ///< in interleave position order
    std::string host_bridge;            ///< distinct host bridges, comma-separated
    unsigned interleave_ways = 0;       ///< 0 when unreadable
    unsigned interleave_granularity = 0;
};

/// The CXL regions that are not persistent memory. A struct of its own so
/// that CxlInventory keeps the layout it was released with.
struct CxlRamRegions {
    std::vector<CxlRamRegion> regions;     ///< numeric order
    std::vector<std::string> unreadable;   ///< one line per thing that could not be read
};

/// Read the CXL regions under `root` whose `mode` is "ram". A region
/// without a `mode` file (Linux before 6.3, where every region is pmem) or
/// with another mode is left out: persistent ones are cxl_inventory's.
/// RETURN VALUE: those regions; empty on a machine without CXL or without
/// volatile regions. ERRORS: none: what cannot be read is left at its
/// default and named in CxlRamRegions::unreadable.
CxlRamRegions cxl_ram_regions(const std::filesystem::path& root);

/// One nvdimm's (nd nmemN's) dirty shutdown count: how many times the
/// device may have lost data at power loss. The count persists across
/// power cycles and only grows (wrapping at overflow), so an application
/// stores it with its data and compares at the next start: a change means
/// a shutdown the device could not make clean (as PMDK does with the NFIT
/// count).
struct DirtyShutdown {
    std::string nmem;                    ///< "nmem0" (/sys/bus/nd/devices)
    std::string memdev;                  ///< the CXL memdev behind it ("mem0"), "" for NFIT or unknown
    std::string source;                  ///< the file read, relative to root; "" when none
    std::optional<std::uint64_t> count;  ///< std::nullopt: not reported
};

/// Every nvdimm's dirty shutdown count. A struct of its own so that no
/// existing public struct changes layout.
struct DirtyShutdownCounts {
    std::vector<DirtyShutdown> nmems;      ///< every nd nmemN, numeric order
    std::vector<std::string> unreadable;   ///< one line per thing that could not be read
};

/// Read nmemN/cxl/dirty_shutdown (CXL, Linux 6.15 and later, "%llu") or
/// nmemN/nfit/dirty_shutdown (ACPI NFIT, "%d") for every nmem under
/// <root>/sys/bus/nd/devices. A CXL nmem's memdev comes from its
/// cxl/provider (Linux 6.2 and later).
/// RETURN VALUE: one entry per nmem; count std::nullopt when neither file
/// exists (an older kernel, or a device without dirty tracking: the kernel
/// hides the file then). Empty without an nd bus.
/// ERRORS: none: a file that exists but cannot be read or parsed leaves
/// the count std::nullopt and is named in DirtyShutdownCounts::unreadable.
DirtyShutdownCounts dirty_shutdown_counts(const std::filesystem::path& root);

/// The nd region (name, e.g. "region0") that holds the block or character
/// device `dev` (st_dev of a file on fsdax, st_rdev of a devdax or pmem
/// device), found through <root>/sys/dev/{block,char}/MAJ:MIN. nullopt when
/// the device is not in an nd region.
/// RETURN VALUE: the name of the nd region directory ("regionN" whose
/// parent is an "ndbusN") nearest the device in its resolved sysfs path,
/// or std::nullopt: also for a device below a CXL region (a volatile
/// region's dax device), and when the MAJ:MIN link is missing, cannot be
/// read, loops or climbs above `root`.
/// ERRORS: none; every failure to look is std::nullopt.
std::optional<std::string> nd_region_of(const std::filesystem::path& root, unsigned major,
                                        unsigned minor, bool char_device);

} // namespace rpm::platform

RPM_API_END
