// RDMA devices (<root>/sys/class/infiniband/<name>) and the PCIe root port
// above each, with that port's DDIO state. Capabilities (native FLUSH,
// atomic write) are filled in by detect(), which knows whether verbs may
// be asked.
#pragma once

#include <rpm/platform.hpp>

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace rpm::platform {

/// Every RDMA device, sorted by name. No infiniband class directory means
/// no RDMA devices (nothing in `unreadable`).
std::vector<RdmaDevice> read_rdma_devices(const std::filesystem::path& root,
                                          std::span<const std::uint16_t> extra_iio_ids,
                                          std::vector<std::string>& unreadable);

/// One device, by name: its PCI chain, root port and DDIO.
RdmaDevice read_rdma_device(const std::filesystem::path& root, const std::string& name,
                            std::span<const std::uint16_t> extra_iio_ids,
                            std::vector<std::string>& unreadable);

/// The DDIO reason for a device without a PCI parent: rxe and siw are
/// named, anything else is described.
std::string software_device_detail(const std::string& name);

} // namespace rpm::platform
