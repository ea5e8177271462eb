// CXL provenance of persistent-memory regions: /sys/bus/cxl and the nd
// regions the kernel's cxl_pmem driver registers on its "CXL" nvdimm bus.
//
// Volatile CXL regions (`mode` "ram", Linux 6.3 and later) are never on
// the nd bus; cxl_ram_regions lists them so a report can say why CXL
// memory is not PM.
//
// Linking the two sides (Linux 6.1 and later): an nd region on the CXL bus
// takes the id of its CXL region (ND_REGION_CXL, region_devs.c), so nd
// regionN is CXL regionN. The CXL region's targetK names an endpoint
// decoder; that decoder's parent endpoint port has a `uport` link to the
// memdev, which carries the serial and sits below its host bridge.
#include <rpm/platform.hpp>

#include "platform/nd_regions.hpp"
#include "platform/sysfs.hpp"

#include <algorithm>
#include <charconv>

namespace rpm::platform {
namespace {

namespace fs = std::filesystem;

const fs::path kCxlDevices = "sys/bus/cxl/devices";

// The kernel prints serials and sizes "%#llx" ("0x1", "0x0") and
// interleave settings "%d"; accept either base so a hand-made tree works.
std::optional<std::uint64_t> parse_number(std::string_view s) {
    int base = 10;
    if (s.starts_with("0x") || s.starts_with("0X")) {
        s.remove_prefix(2);
        base = 16;
    }
    std::uint64_t v = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
    if (s.empty() || ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
    return v;
}

template <class T>
void read_number(const fs::path& root, const fs::path& rel, T& out, std::vector<std::string>& unreadable) {
    auto text = sysfs::read_text(root, rel);
    if (!text) {
        unreadable.push_back("CXL " + rel.string() + ": " + text.error().detail());
        return;
    }
    auto v = parse_number(*text);
    if (!v) {
        unreadable.push_back("CXL " + rel.string() + ": not a number: \"" + *text + "\"");
        return;
    }
    out = static_cast<T>(*v);
}

std::vector<std::string> names_with(const fs::path& root, const fs::path& dir, std::string_view prefix,
                                    std::vector<std::string>& unreadable) {
    auto names = sysfs::list_dir(root, dir);
    if (!names) {
        // No such bus is a machine without CXL (or without nvdimm), not a failure.
        if (names.error() != errc::path_not_found)
            unreadable.push_back("CXL: " + names.error().detail());
        return {};
    }
    std::vector<std::string> out;
    for (auto& n : *names)
        if (n.starts_with(prefix)) out.push_back(std::move(n));
    std::sort(out.begin(), out.end(), numeric_name_less);
    return out;
}

// "pci0000:0c": the first pciDDDD:BB component of the memdev's real path.
std::string host_bridge_of(const fs::path& real) {
    for (const auto& part : real) {
        const std::string s = part.string();
        if (s.starts_with("pci") && s.find(':') != std::string::npos) return s;
    }
    return {};
}

CxlMemdev read_memdev(const fs::path& root, const std::string& name, std::vector<std::string>& unreadable) {
    CxlMemdev m;
    m.name = name;
    const fs::path dir = kCxlDevices / name;
    read_number(root, dir / "serial", m.serial, unreadable);
    read_number(root, dir / "pmem" / "size", m.pmem_size, unreadable);
    read_number(root, dir / "ram" / "size", m.ram_size, unreadable);
    if (auto real = sysfs::resolve(root, dir)) m.host_bridge = host_bridge_of(*real);
    return m;
}

// targetK ("decoder2.0") -> its endpoint port's uport -> the memdev name.
std::optional<std::string> memdev_of_target(const fs::path& root, const std::string& decoder,
                                            std::vector<std::string>& unreadable) {
    auto dec = sysfs::resolve(root, kCxlDevices / decoder);
    if (!dec) {
        unreadable.push_back("CXL target " + decoder + ": " + dec.error().detail());
        return std::nullopt;
    }
    auto mem = sysfs::resolve(root, dec->parent_path() / "uport");
    if (!mem) {
        unreadable.push_back("CXL target " + decoder + " endpoint uport: " + mem.error().detail());
        return std::nullopt;
    }
    return mem->filename().string();
}

void read_targets(const fs::path& root, CxlRegion& r, const std::vector<CxlMemdev>& all,
                  std::vector<std::string>& unreadable) {
    const fs::path dir = kCxlDevices / r.cxl_region;
    for (unsigned k = 0; k < r.interleave_ways; ++k) {
        auto target = sysfs::read_text(root, dir / ("target" + std::to_string(k)));
        if (!target || target->empty()) {
            unreadable.push_back("CXL " + r.cxl_region + " target" + std::to_string(k) + ": " +
                                 (target ? std::string("empty (region not fully set up)")
                                         : target.error().detail()));
            continue;
        }
        auto name = memdev_of_target(root, *target, unreadable);
        if (!name) continue;
        auto it = std::find_if(all.begin(), all.end(), [&](const CxlMemdev& m) { return m.name == *name; });
        r.memdevs.push_back(it != all.end() ? *it : read_memdev(root, *name, unreadable));
    }
    for (const auto& m : r.memdevs) {
        if (m.host_bridge.empty() || r.host_bridge.find(m.host_bridge) != std::string::npos) continue;
        r.host_bridge += (r.host_bridge.empty() ? "" : ",") + m.host_bridge;
    }
}

// Whether the nd region sits on the bus cxl_pmem registers (provider "CXL").
bool on_cxl_bus(const fs::path& root, const std::string& nd_region, std::vector<std::string>& unreadable) {
    auto real = sysfs::resolve(root, sysfs::kNdDevices / nd_region);
    if (!real) return false;  // read_nd_regions already reports an unreadable region
    auto provider = sysfs::read_text(root, real->parent_path() / "provider");
    if (!provider) {
        // Missing: a bus that does not say who made it is not cxl_pmem's,
        // which always has one; only a file that is there but unreadable
        // leaves the question open.
        if (provider.error() != errc::path_not_found)
            unreadable.push_back(nd_region + " bus provider (taken as not CXL): " + provider.error().detail());
        return false;
    }
    return *provider == "CXL";
}

// The CXL side of r.cxl_region: its interleave and the memdevs behind its
// targets. Shared by pmem regions (reached from the nd bus) and ram ones.
void read_cxl_side(const fs::path& root, CxlRegion& r, const std::vector<CxlMemdev>& all,
                   std::vector<std::string>& unreadable) {
    const fs::path dir = kCxlDevices / r.cxl_region;
    read_number(root, dir / "interleave_ways", r.interleave_ways, unreadable);
    read_number(root, dir / "interleave_granularity", r.interleave_granularity, unreadable);
    read_targets(root, r, all, unreadable);
}

CxlRegion read_region(const fs::path& root, const std::string& nd_name, const std::vector<CxlMemdev>& all,
                      std::vector<std::string>& unreadable) {
    CxlRegion r;
    r.nd_region = nd_name;
    std::vector<std::string> nd_lines;  // already in Profile::unreadable via detect()
    const NdRegion nd = read_nd_region(root, nd_name, nd_lines);
    r.domain = nd.domain;
    r.raw_domain = nd.raw_domain;
    if (!sysfs::exists(root, kCxlDevices / nd_name)) {
        unreadable.push_back(nd_name + " is on the CXL nvdimm bus but " + (kCxlDevices / nd_name).string() +
                             " does not exist: its memdevs are unknown");
        return r;
    }
    r.cxl_region = nd_name;  // same id: see the top of this file
    read_cxl_side(root, r, all, unreadable);
    return r;
}

// Whether CXL region `name` decodes volatile capacity. No `mode` file is a
// kernel before 6.3, which only makes pmem regions: not an error.
bool is_ram_region(const fs::path& root, const std::string& name, std::vector<std::string>& unreadable) {
    auto mode = sysfs::read_text(root, kCxlDevices / name / "mode");
    if (!mode) {
        if (mode.error() != errc::path_not_found)
            unreadable.push_back("CXL " + name + " mode (taken as not ram): " + mode.error().detail());
        return false;
    }
    return *mode == "ram";
}

} // namespace

CxlInventory cxl_inventory(const fs::path& root) {
    CxlInventory inv;
    for (const auto& name : names_with(root, kCxlDevices, "mem", inv.unreadable))
        inv.memdevs.push_back(read_memdev(root, name, inv.unreadable));
    inv.nvdimm_bridges = names_with(root, kCxlDevices, "nvdimm-bridge", inv.unreadable);
    std::vector<std::string> ignored;  // nd bus problems are Profile::unreadable's
    for (const auto& name : names_with(root, sysfs::kNdDevices, "region", ignored))
        if (on_cxl_bus(root, name, inv.unreadable))
            inv.regions.push_back(read_region(root, name, inv.memdevs, inv.unreadable));
    return inv;
}

CxlRamRegions cxl_ram_regions(const fs::path& root) {
    CxlRamRegions out;
    for (const auto& name : names_with(root, kCxlDevices, "region", out.unreadable)) {
        if (!is_ram_region(root, name, out.unreadable)) continue;
        CxlRegion r;
        r.cxl_region = name;
        // No memdev list to reuse: read_targets reads the few it needs.
        read_cxl_side(root, r, {}, out.unreadable);
        out.regions.push_back(CxlRamRegion{r.cxl_region, std::move(r.memdevs), r.host_bridge,
                                           r.interleave_ways, r.interleave_granularity});
    }
    return out;
}

} // namespace rpm::platform
