#include "platform/nd_regions.hpp"

#include "platform/sysfs.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace rpm::platform {
namespace {

namespace fs = std::filesystem;


bool is_digits(std::string_view s) noexcept {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c)) != 0;
    });
}

// "dax0.1": a device-dax instance (not dax_region, not the nd "dax" seed).
bool is_dax_name(std::string_view s) noexcept {
    if (!s.starts_with("dax")) return false;
    s.remove_prefix(3);
    const auto dot = s.find('.');
    return dot != std::string_view::npos && is_digits(s.substr(0, dot)) &&
           is_digits(s.substr(dot + 1));
}

std::vector<std::string> names_in(const fs::path& root, const fs::path& dir) {
    auto names = sysfs::list_dir(root, dir);
    return names ? std::move(*names) : std::vector<std::string>{};
}

void append_dax(const fs::path& root, const fs::path& dir, std::vector<std::string>& out) {
    for (auto& name : names_in(root, dir))
        if (is_dax_name(name)) out.push_back(std::move(name));
}

bool is_domain_text(PersistenceDomain d) noexcept {
    // not_pmem is rpm's word for page cache; the kernel never prints it.
    return d != PersistenceDomain::not_pmem;
}

void read_domain(const fs::path& root, const fs::path& dir, NdRegion& r,
                 std::vector<std::string>& unreadable) {
    auto text = sysfs::read_text(root, dir / "persistence_domain");
    if (!text) {
        unreadable.push_back(r.name + " persistence_domain: " + text.error().detail());
        return;
    }
    r.raw_domain = *text;
    r.domain_readable = true;
    const auto d = parse_persistence_domain(*text);
    if (d && is_domain_text(*d))
        r.domain = *d;
    else
        unreadable.push_back(r.name + " persistence_domain: unrecognized value \"" + *text +
                             "\", taken as unknown");
}

void read_size(const fs::path& root, const fs::path& dir, NdRegion& r,
               std::vector<std::string>& unreadable) {
    auto text = sysfs::read_text(root, dir / "size");
    if (!text) {
        unreadable.push_back(r.name + " size: " + text.error().detail());
        return;
    }
    const char* end = text->data() + text->size();
    const auto [ptr, ec] = std::from_chars(text->data(), end, r.size);
    if (ec != std::errc() || ptr != end) {
        r.size = 0;
        unreadable.push_back(r.name + " size: not a number: \"" + *text + "\"");
    }
}

} // namespace

bool numeric_name_less(std::string_view a, std::string_view b) noexcept {
    auto split = [](std::string_view s) {
        std::size_t i = s.size();
        while (i > 0 && std::isdigit(static_cast<unsigned char>(s[i - 1]))) --i;
        std::string_view digits = s.substr(i);
        while (digits.size() > 1 && digits.front() == '0') digits.remove_prefix(1);
        return std::pair{s.substr(0, i), digits};
    };
    const auto [pa, na] = split(a);
    const auto [pb, nb] = split(b);
    if (pa != pb) return pa < pb;
    if (na.size() != nb.size()) return na.size() < nb.size();
    if (na != nb) return na < nb;
    return a < b;
}

std::vector<std::string> region_devices(const fs::path& root, const fs::path& region_dir) {
    std::vector<std::string> devs;
    for (const auto& child : names_in(root, region_dir)) {
        // Block devices hang off the namespace (raw), pfn (fsdax) or btt
        // (sector) device that claimed the namespace.
        for (const char* kind : {"namespace", "pfn", "btt"})
            if (child.starts_with(kind))
                for (auto& blk : names_in(root, region_dir / child / "block"))
                    devs.push_back(std::move(blk));
        if (child.starts_with("dax")) {
            append_dax(root, region_dir / child, devs);          // regionN/daxN.M/daxN.M
            append_dax(root, region_dir / child / "dax", devs);  // older: regionN/daxN.M/dax/daxN.M
        }
    }
    std::sort(devs.begin(), devs.end(), numeric_name_less);
    devs.erase(std::unique(devs.begin(), devs.end()), devs.end());
    return devs;
}

NdRegion read_nd_region(const fs::path& root, const std::string& name,
                        std::vector<std::string>& unreadable) {
    NdRegion r;
    r.name = name;
    const fs::path dir = sysfs::kNdDevices / name;
    read_domain(root, dir, r, unreadable);
    read_size(root, dir, r, unreadable);
    r.devices = region_devices(root, dir);
    return r;
}

std::vector<NdRegion> read_nd_regions(const fs::path& root, std::vector<std::string>& unreadable) {
    auto names = sysfs::list_dir(root, sysfs::kNdDevices);
    if (!names) {
        // No nd bus is a machine without persistent memory, not a failure.
        if (names.error() != errc::path_not_found)
            unreadable.push_back("nd regions: " + names.error().detail() +
                                 " (taken as no persistent memory regions)");
        return {};
    }
    std::sort(names->begin(), names->end(), numeric_name_less);
    std::vector<NdRegion> regions;
    for (const auto& name : *names)
        if (name.starts_with("region")) regions.push_back(read_nd_region(root, name, unreadable));
    return regions;
}

} // namespace rpm::platform
