// place(): where a device named by BDF or by name sits in the PCI tree
// (the kernel's find_parent_pci_dev, on sysfs paths).
#include "p2p/topology.hpp"

#include "platform/pci.hpp"
#include "platform/sysfs.hpp"

#include <array>

namespace rpm::p2p::detail {
namespace {

namespace pci = platform::pci;
namespace sysfs = platform::sysfs;


// Where names live, in the order they are tried.
constexpr std::array<const char*, 4> kNameDirs = {"sys/class/nvme", "sys/class/infiniband",
                                                  "sys/class/net", "sys/block"};

Result<fs::path> locate_bdf(const fs::path& root, const std::string& bdf) {
    auto path = sysfs::resolve(root, kPciDevices / bdf);
    if (path) return path;
    if (path.error() == errc::path_not_found)
        return Error(errc::path_not_found,
                     "no PCI device " + bdf + " under " + (root / kPciDevices).string());
    return path.error();
}

// The device's own directory; its `device` link when it has one (the
// parent: a PCI function, or a controller for a block device).
Result<fs::path> locate_name(const fs::path& root, const std::string& name) {
    for (const char* dir : kNameDirs) {
        const fs::path entry = fs::path(dir) / name;
        if (!sysfs::exists(root, entry)) continue;
        if (auto parent = sysfs::resolve(root, entry / "device")) return parent;
        return sysfs::resolve(root, entry);
    }
    return Error(errc::path_not_found,
                 "no device " + name + " under " + root.string() +
                     " (sys/class/nvme, sys/class/infiniband, sys/class/net, sys/block), "
                     "and it is not a PCI address (0000:03:00.0)");
}

std::string no_pci_reason(const std::string& name) {
    if (name.starts_with("rxe"))
        return name +
               " is a Soft-RoCE (rxe) device: it runs on a network interface and has no "
               "PCI device, so it cannot take part in P2P DMA";
    if (name.starts_with("siw"))
        return name +
               " is a Soft-iWARP (siw) device: it has no PCI device, so it cannot take part "
               "in P2P DMA";
    return name + " has no PCI parent (a virtual device): P2P DMA needs a PCI function";
}

Placement placement_of(const pci::Location& loc) {
    Placement p;
    p.bdf = loc.bdfs.back();
    p.upstream.assign(loc.bdfs.rbegin() + 1, loc.bdfs.rend());
    p.host_bridge = loc.host_bridge.filename().string();
    return p;
}

} // namespace

Result<Placement> place(const fs::path& root, const std::string& device) {
    if (device.empty() || device.find('/') != std::string::npos || device == "." || device == "..")
        return Error(errc::invalid_argument,
                     "\"" + device + "\" is not a device name or PCI address");
    auto path = pci::is_bdf(device) ? locate_bdf(root, device) : locate_name(root, device);
    if (!path) return path.error();
    const auto loc = pci::parse_location(*path);
    if (!loc) return Error(errc::invalid_argument, no_pci_reason(device));
    return placement_of(*loc);
}

} // namespace rpm::p2p::detail
