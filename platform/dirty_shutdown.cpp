// Dirty shutdown counts of nvdimms (nd nmemN): CXL's cxl/dirty_shutdown
// (Linux 6.15, drivers/cxl/pmem.c) and the older ACPI NFIT
// nfit/dirty_shutdown (drivers/acpi/nfit/core.c).
//
// The kernel only reports the count; whether it "moved" needs the value
// from before, which only the application has (stored with its data), so
// nothing here compares.
#include <rpm/platform.hpp>

#include "platform/nd_regions.hpp"
#include "platform/sysfs.hpp"

#include <algorithm>
#include <charconv>

namespace rpm::platform {
namespace {

namespace fs = std::filesystem;

const fs::path kCxlBus = "sys/bus/cxl/devices";

std::vector<std::string> nmem_names(const fs::path& root, std::vector<std::string>& unreadable) {
    auto names = sysfs::list_dir(root, sysfs::kNdDevices);
    if (!names) {
        // No nd bus is a machine without nvdimms, not a failure.
        if (names.error() != errc::path_not_found) unreadable.push_back("nd bus: " + names.error().detail());
        return {};
    }
    std::vector<std::string> out;
    for (auto& n : *names)
        if (n.starts_with("nmem")) out.push_back(std::move(n));
    std::sort(out.begin(), out.end(), numeric_name_less);
    return out;
}

// cxl/provider names the cxl_nvdimm ("pmem0"), whose parent is the memdev.
// Before 6.2 there is no cxl/ group: the memdev stays unknown, silently.
std::string memdev_of(const fs::path& root, const std::string& nmem, std::vector<std::string>& unreadable) {
    auto provider = sysfs::read_text(root, sysfs::kNdDevices / nmem / "cxl" / "provider");
    if (!provider) {
        if (provider.error() != errc::path_not_found)
            unreadable.push_back(nmem + " cxl/provider: " + provider.error().detail());
        return {};
    }
    auto real = sysfs::resolve(root, kCxlBus / *provider);
    if (!real) {
        unreadable.push_back(nmem + " cxl/provider " + *provider + ": " + real.error().detail());
        return {};
    }
    return real->parent_path().filename().string();
}

// Decimal only: the kernel prints "%llu" (CXL) and "%d" (NFIT).
std::optional<std::uint64_t> parse_count(std::string_view s) {
    std::uint64_t v = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
    return v;
}

// The first of cxl/ and nfit/ that has the file; a missing file is the
// kernel saying "not tracked", not a failure.
void read_count(const fs::path& root, DirtyShutdown& d, std::vector<std::string>& unreadable) {
    for (const char* group : {"cxl", "nfit"}) {
        const fs::path rel = sysfs::kNdDevices / d.nmem / group / "dirty_shutdown";
        auto text = sysfs::read_text(root, rel);
        if (!text && text.error() == errc::path_not_found) continue;
        d.source = rel.string();
        if (!text) {
            unreadable.push_back(rel.string() + ": " + text.error().detail());
            return;
        }
        d.count = parse_count(*text);
        if (!d.count) unreadable.push_back(rel.string() + ": not a count: \"" + *text + "\"");
        return;
    }
}

} // namespace

DirtyShutdownCounts dirty_shutdown_counts(const fs::path& root) {
    DirtyShutdownCounts out;
    for (const auto& name : nmem_names(root, out.unreadable)) {
        DirtyShutdown d;
        d.nmem = name;
        d.memdev = memdev_of(root, name, out.unreadable);
        read_count(root, d, out.unreadable);
        out.nmems.push_back(std::move(d));
    }
    return out;
}

} // namespace rpm::platform
