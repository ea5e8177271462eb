#include "platform/pci.hpp"

#include "platform/sysfs.hpp"
#include "platform/xeon_iio.hpp"

#include <cctype>
#include <charconv>
#include <cstdio>

namespace rpm::platform::pci {
namespace {

bool all_hex(std::string_view s) noexcept {
    for (char c : s)
        if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
    return !s.empty();
}

// One of the root port's ID files; 0 (and a line in `unreadable`) when it
// cannot be read or parsed, since 0 is no vendor's ID.
std::uint16_t read_id(const fs::path& root, const fs::path& file,
                      std::vector<std::string>& unreadable) {
    auto text = sysfs::read_text(root, file);
    if (!text) {
        unreadable.push_back("root port ID: " + text.error().detail());
        return 0;
    }
    if (auto id = parse_hex_u16(*text)) return *id;
    unreadable.push_back("root port ID: " + (root / file).string() + ": not a hex ID: \"" +
                         *text + "\"");
    return 0;
}

} // namespace

bool is_bdf(std::string_view s) noexcept {
    // domain ":" bus(2) ":" device(2) "." function(1)
    const std::size_t n = s.size();
    if (n < 12 || s[n - 2] != '.' || s[n - 5] != ':' || s[n - 8] != ':') return false;
    return all_hex(s.substr(0, n - 8)) && all_hex(s.substr(n - 7, 2)) &&
           all_hex(s.substr(n - 4, 2)) && all_hex(s.substr(n - 1));
}

bool is_host_bridge(std::string_view s) noexcept {
    if (!s.starts_with("pci")) return false;
    const std::string_view rest = s.substr(3);
    const auto colon = rest.find(':');
    return colon != std::string_view::npos && all_hex(rest.substr(0, colon)) &&
           all_hex(rest.substr(colon + 1));
}

std::optional<Location> parse_location(const fs::path& device_path) {
    // The last host bridge counts: a VMD domain (pci10000:00) nests a
    // second hierarchy below a port of the first. The chain is the run of
    // BDFs right below it; anything after (infiniband/mlx5_0) ends it.
    std::optional<Location> loc;
    bool in_chain = false;
    fs::path prefix;
    for (const auto& part : device_path) {
        const std::string name = part.string();
        prefix /= part;
        if (is_host_bridge(name)) {
            loc = Location{prefix, {}};
            in_chain = true;
        } else if (in_chain && is_bdf(name)) {
            loc->bdfs.push_back(name);
        } else {
            in_chain = false;
        }
    }
    if (!loc || loc->bdfs.empty()) return std::nullopt;
    return loc;
}

std::optional<std::string> root_port_bdf(const Location& loc) {
    if (loc.bdfs.size() < 2) return std::nullopt;
    return loc.bdfs.front();
}

fs::path dir_of(const Location& loc, std::size_t index) {
    fs::path p = loc.host_bridge;
    for (std::size_t i = 0; i <= index && i < loc.bdfs.size(); ++i) p /= loc.bdfs[i];
    return p;
}

std::optional<std::uint16_t> parse_hex_u16(std::string_view s) noexcept {
    if (s.starts_with("0x") || s.starts_with("0X")) s.remove_prefix(2);
    if (s.empty() || s.size() > 4 || !all_hex(s)) return std::nullopt;
    std::uint16_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
    if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
    return v;
}

std::string id_pair(std::uint16_t vendor, std::uint16_t device) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%04x:%04x", static_cast<unsigned>(vendor),
                  static_cast<unsigned>(device));
    return buf;
}

RootPort read_root_port(const fs::path& root, const fs::path& port_dir, std::string bdf,
                        std::span<const std::uint16_t> extra_iio_ids,
                        std::vector<std::string>& unreadable) {
    RootPort port;
    port.bdf = std::move(bdf);
    port.vendor = read_id(root, port_dir / "vendor", unreadable);
    port.device = read_id(root, port_dir / "device", unreadable);
    port.xeon_iio = is_xeon_iio(port.vendor, port.device, extra_iio_ids);
    return port;
}

} // namespace rpm::platform::pci
