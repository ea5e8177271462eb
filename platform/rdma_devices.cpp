#include "platform/rdma_devices.hpp"

#include "platform/ddio.hpp"
#include "platform/nd_regions.hpp"
#include "platform/pci.hpp"
#include "platform/sysfs.hpp"

#include <algorithm>

namespace rpm::platform {
namespace {

namespace fs = std::filesystem;

const fs::path kInfiniband = "sys/class/infiniband";

// The PCI part of a device: its chain, and its root port with DDIO when it
// has one.
void read_pci_parent(const fs::path& root, const pci::Location& loc,
                     std::span<const std::uint16_t> extra, RdmaDevice& dev,
                     std::vector<std::string>& unreadable) {
    dev.pci_path = loc.bdfs;
    dev.pci_bdf = loc.bdfs.back();
    const auto port_bdf = pci::root_port_bdf(loc);
    if (!port_bdf) {
        dev.ddio = ddio_unknown(dev.pci_bdf + " sits on the root complex with no root port above "
                                              "it (integrated or virtual function?): DDIO cannot "
                                              "be read (set RPM_DDIO)");
        return;
    }
    const fs::path port_dir = pci::dir_of(loc, 0);
    dev.root_port = pci::read_root_port(root, port_dir, *port_bdf, extra, unreadable);
    dev.ddio = read_ddio(root, port_dir, *dev.root_port, unreadable);
}

} // namespace

std::string software_device_detail(const std::string& name) {
    for (const char* kind : {"rxe", "siw"})
        if (name.starts_with(kind))
            return std::string("software RDMA device (") + kind + "): no PCIe root port";
    return "RDMA device " + name + " has no PCI parent: no PCIe root port";
}

RdmaDevice read_rdma_device(const fs::path& root, const std::string& name,
                            std::span<const std::uint16_t> extra_iio_ids,
                            std::vector<std::string>& unreadable) {
    RdmaDevice dev;
    dev.name = name;
    // A software device has no `device` link at all, or one to a virtual
    // parent (its net device); neither has a PCI chain.
    auto parent = sysfs::resolve(root, kInfiniband / name / "device");
    if (!parent && parent.error() != errc::path_not_found) {
        unreadable.push_back(name + " device link: " + parent.error().detail());
        dev.ddio = ddio_unknown("device link unreadable: " + parent.error().detail());
        return dev;
    }
    const auto loc = parent ? pci::parse_location(*parent) : std::nullopt;
    if (loc)
        read_pci_parent(root, *loc, extra_iio_ids, dev, unreadable);
    else
        dev.ddio = ddio_unknown(software_device_detail(name));
    return dev;
}

std::vector<RdmaDevice> read_rdma_devices(const fs::path& root,
                                          std::span<const std::uint16_t> extra_iio_ids,
                                          std::vector<std::string>& unreadable) {
    auto names = sysfs::list_dir(root, kInfiniband);
    if (!names) {
        // No infiniband class: no RDMA driver loaded, not a failure.
        if (names.error() != errc::path_not_found)
            unreadable.push_back("RDMA devices: " + names.error().detail());
        return {};
    }
    std::sort(names->begin(), names->end(), numeric_name_less);
    std::vector<RdmaDevice> devices;
    for (const auto& name : *names)
        devices.push_back(read_rdma_device(root, name, extra_iio_ids, unreadable));
    return devices;
}

} // namespace rpm::platform
