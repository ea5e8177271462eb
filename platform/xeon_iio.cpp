// The one table of Intel Xeon IIO root-port device IDs. These are the
// ports whose config space holds perfctrlsts_0 at 0x180 (DDIO's
// use_allocating_flow_wr in bit 7). Names are pci.ids' (vendor 8086).
// A newer CPU's ports are added through DetectOptions::extra_iio_device_ids
// (configuration) until they are listed here.
#include "platform/xeon_iio.hpp"

#include <algorithm>

namespace rpm::platform {
namespace {

struct IdRange {
    std::uint16_t first;
    std::uint16_t last;
};

constexpr IdRange kXeonIioRootPorts[] = {
    // Haswell-EP: "Xeon E7 v3/Xeon E5 v3/Core i7 PCI Express Root Port 1".."3"
    {0x2f02, 0x2f0b},
    // Broadwell-EP: "Xeon E7 v4/Xeon E5 v4/Xeon E3 v4/Xeon D PCI Express Root Port 1".."3"
    {0x6f02, 0x6f0b},
    // Skylake-SP and Cascade Lake-SP: "Sky Lake-E PCI Express Root Port A".."D"
    {0x2030, 0x2033},
};

} // namespace

bool is_xeon_iio(std::uint16_t vendor, std::uint16_t device,
                 std::span<const std::uint16_t> extra) noexcept {
    if (vendor != kIntelVendorId) return false;
    const bool listed = std::any_of(std::begin(kXeonIioRootPorts), std::end(kXeonIioRootPorts),
                                    [device](IdRange r) { return device >= r.first && device <= r.last; });
    return listed || std::find(extra.begin(), extra.end(), device) != extra.end();
}

} // namespace rpm::platform
