// read_host_facts(): what the kernel's cpu_supports_p2pdma() asks of the
// CPU, read from proc/cpuinfo under the root.
#include "p2p/topology.hpp"

#include "platform/sysfs.hpp"

#include <charconv>
#include <sstream>

namespace rpm::p2p::detail {
namespace {

// "cpu family\t: 23" -> "23"; nullopt for another key.
std::optional<std::string> value_of(const std::string& line, std::string_view key) {
    if (!line.starts_with(key)) return std::nullopt;
    const auto colon = line.find(':');
    if (colon == std::string::npos) return std::nullopt;
    if (platform::sysfs::trim(std::string_view(line).substr(0, colon)) != key) return std::nullopt;
    return std::string(platform::sysfs::trim(std::string_view(line).substr(colon + 1)));
}

int parse_int(const std::string& s) {
    int v = -1;
    std::from_chars(s.data(), s.data() + s.size(), v);
    return v;
}

} // namespace

HostFacts read_host_facts(const fs::path& root,
                          std::vector<std::pair<std::uint16_t, std::uint16_t>> extra_whitelist) {
    HostFacts facts;
    facts.extra_whitelist = std::move(extra_whitelist);
    auto text = platform::sysfs::read_text(root, "proc/cpuinfo");
    if (!text) return facts;
    // The kernel looks at the boot CPU: the first processor's lines.
    std::optional<std::string> vendor, family;
    std::istringstream in(*text);
    for (std::string line; std::getline(in, line) && !(vendor && family);) {
        if (!vendor) vendor = value_of(line, "vendor_id");
        if (!family) family = value_of(line, "cpu family");
    }
    // /proc/cpuinfo prints the family with the extended family added, in
    // decimal, which is what the kernel compares with 0x17 (Zen).
    facts.amd_zen = vendor && family && *vendor == "AuthenticAMD" && parse_int(*family) >= 0x17;
    return facts;
}

} // namespace rpm::p2p::detail
