// nd_region_of: which nd region holds a block or character device.
//
// sysfs links every device number to its device directory
// (/sys/dev/block/259:0 -> ../../devices/.../ndbus0/region0/namespace0.0/
// block/pmem0), so the region is the nearest "regionN" ancestor of that
// directory whose parent is an "ndbusN". The parent check matters since
// Linux 6.3: a volatile CXL region's dax device sits below the *CXL*
// region (.../root0/decoder0.0/region0/dax_region0/dax0.0), also named
// "regionN" but under a root decoder. The parent is used rather than the
// `subsystem` link because every nd region is created on its bus device
// (region_devs.c), and fixture trees need not carry subsystem links. The link is resolved inside `root` (sysfs::resolve), so a
// fixture tree cannot send the lookup into the host's /sys.
#include <rpm/platform.hpp>

#include "platform/sysfs.hpp"

#include <algorithm>
#include <cctype>
#include <string>

namespace rpm::platform {
namespace {

namespace fs = std::filesystem;

// PREFIX followed by one or more digits only ("region0", "ndbus12").
bool is_numbered(const std::string& name, std::string_view prefix) {
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return false;
    return std::all_of(name.begin() + static_cast<std::ptrdiff_t>(prefix.size()), name.end(),
                       [](unsigned char c) { return std::isdigit(c) != 0; });
}

}  // namespace

std::optional<std::string> nd_region_of(const fs::path& root, unsigned major, unsigned minor,
                                        bool char_device) {
    const fs::path link = fs::path("sys/dev") / (char_device ? "char" : "block") /
                          (std::to_string(major) + ":" + std::to_string(minor));
    // A missing link, a loop or a link climbing above the root all mean
    // "not in a region we can see".
    const auto device_dir = sysfs::resolve(root, link);
    if (!device_dir) return std::nullopt;
    // The region nearest the leaf holds the device (a partition sits below
    // its disk, which sits below the region), so keep the last match.
    std::optional<std::string> found;
    std::string parent;
    for (const auto& part : *device_dir) {
        std::string name = part.string();
        if (is_numbered(name, "region") && is_numbered(parent, "ndbus")) found = name;
        parent = std::move(name);
    }
    return found;
}

}  // namespace rpm::platform
