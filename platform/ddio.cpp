#include "platform/ddio.hpp"

#include "platform/pci.hpp"
#include "platform/sysfs.hpp"
#include "platform/xeon_iio.hpp"

#include <cstdio>

namespace rpm::platform {
namespace {

constexpr const char* kOverrideHint = "set RPM_DDIO";

std::string hex_byte(std::uint8_t v) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "0x%02x", static_cast<unsigned>(v));
    return buf;
}

std::string hex_id(std::uint16_t v) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "0x%04x", static_cast<unsigned>(v));
    return buf;
}

std::string short_config_detail(const RootPort& port, std::size_t size) {
    return "config space of " + port.bdf + " is " + std::to_string(size) +
           " bytes; offset 0x180 needs root (run as root or " + kOverrideHint + ")";
}

} // namespace

DdioReading ddio_unknown(std::string reason) {
    DdioReading r;
    r.detail = std::move(reason);
    return r;
}

DdioReading decode_perfctrlsts(std::uint8_t value) {
    DdioReading r;
    r.perfctrlsts_0 = value;
    r.use_allocating_flow_wr = (value & kUseAllocatingFlowWr) != 0;
    r.no_snoop_op_wr_en = (value & kNoSnoopOpWrEn) != 0;
    r.state = *r.use_allocating_flow_wr ? Ddio::on : Ddio::off;
    r.detail = "perfctrlsts_0 (0x180) = " + hex_byte(value) +
               ": use_allocating_flow_wr=" + (*r.use_allocating_flow_wr ? "1" : "0") +
               ", NoSnoopOpWrEn=" + (*r.no_snoop_op_wr_en ? "1" : "0");
    return r;
}

std::optional<DdioReading> ddio_identity_check(const RootPort& port) {
    const std::string ids = pci::id_pair(port.vendor, port.device);
    if (port.vendor == 0)
        return ddio_unknown("root port " + port.bdf + ": vendor ID unreadable: DDIO cannot be read (" +
                            kOverrideHint + ")");
    if (port.vendor != kIntelVendorId)
        return ddio_unknown("root port " + ids + " is not Intel: DDIO cannot be read (" +
                            kOverrideHint + ")");
    if (!port.xeon_iio)
        return ddio_unknown("root port " + ids + " (" + port.bdf +
                            ") is not a known Intel Xeon IIO root port: if it is one, add " +
                            hex_id(port.device) + " to RPM_IIO_ROOT_PORT_IDS (or \"iio_root_port_ids\" "
                            "in the configuration), or " + kOverrideHint);
    return std::nullopt;
}

DdioReading ddio_from_config(const RootPort& port, std::span<const std::uint8_t> config) {
    if (auto unknown = ddio_identity_check(port)) return *unknown;
    if (config.size() <= kPerfCtrlStsOffset)
        return ddio_unknown(short_config_detail(port, config.size()));
    return decode_perfctrlsts(config[kPerfCtrlStsOffset]);
}

DdioReading read_ddio(const std::filesystem::path& root, const std::filesystem::path& port_dir,
                      const RootPort& port, std::vector<std::string>& unreadable) {
    if (auto unknown = ddio_identity_check(port)) return *unknown;
    auto config = sysfs::read_bytes(root, port_dir / "config");
    if (!config) {
        unreadable.push_back("DDIO of root port " + port.bdf + ": " + config.error().detail());
        return ddio_unknown("config space of " + port.bdf + " unreadable: " +
                            config.error().detail() + " (run as root or " + kOverrideHint + ")");
    }
    DdioReading r = ddio_from_config(port, *config);
    if (!r.perfctrlsts_0) unreadable.push_back("DDIO of root port " + port.bdf + ": " + r.detail);
    return r;
}

} // namespace rpm::platform
