// ACS redirection from a function's config space (the kernel's
// pci_bridge_has_acs_redir, read from the sysfs `config` file).
#include "p2p/rules.hpp"

#include "platform/sysfs.hpp"

#include <cstdio>

namespace rpm::p2p::detail {
namespace {

namespace sysfs = platform::sysfs;

constexpr std::size_t kExtStart = 0x100;
constexpr std::size_t kConfigSize = 4096;
// (4096 - 256) / 8, the kernel's bound on the list walk: a looping or
// corrupt list ends here instead of spinning.
constexpr int kMaxCaps = (kConfigSize - kExtStart) / 8;

std::uint32_t u32_at(std::span<const std::uint8_t> b, std::size_t at) {
    return static_cast<std::uint32_t>(b[at]) | static_cast<std::uint32_t>(b[at + 1]) << 8 |
           static_cast<std::uint32_t>(b[at + 2]) << 16 |
           static_cast<std::uint32_t>(b[at + 3]) << 24;
}

std::string redirect_bits(std::uint16_t control) {
    std::string bits;
    if (control & 0x0004) bits += " RR";
    if (control & 0x0008) bits += " CR";
    if (control & 0x0020) bits += " EC";
    return bits.empty() ? bits : bits.substr(1);
}

Acs unknown(const std::string& bdf, const std::string& why) {
    return Acs{AcsState::unknown, 0, bdf + " (ACS unknown: " + why + ")"};
}

} // namespace

std::optional<std::uint16_t> find_ext_capability(std::span<const std::uint8_t> config,
                                                 std::uint16_t id) {
    std::size_t pos = kExtStart;
    for (int n = 0; n < kMaxCaps && pos >= kExtStart && pos + 4 <= config.size(); ++n) {
        const std::uint32_t header = u32_at(config, pos);
        // An all-zero header ends the list (no extended capabilities);
        // all-ones is what a missing function reads back.
        if (header == 0 || header == 0xffffffffU) return std::nullopt;
        if ((header & 0xffff) == id) return static_cast<std::uint16_t>(pos);
        pos = (header >> 20) & 0xffc;
    }
    return std::nullopt;
}

Acs read_acs(const fs::path& root, const std::string& bdf) {
    auto config =
        sysfs::read_bytes(root, fs::path("sys/bus/pci/devices") / bdf / "config", kConfigSize);
    if (!config) return unknown(bdf, config.error().detail());
    if (config->size() < kExtStart) {
        return unknown(bdf, "config space is " + std::to_string(config->size()) +
                                " bytes: the extended capabilities need root to read");
    }
    const auto cap = find_ext_capability(*config, kExtCapAcs);
    if (!cap) return Acs{};
    const std::size_t at = *cap + kAcsControlOffset;
    if (at + 2 > config->size()) return unknown(bdf, "ACS capability cut short");
    const auto control = static_cast<std::uint16_t>((*config)[at] | (*config)[at + 1] << 8);
    if ((control & kAcsRedirectBits) == 0) return Acs{AcsState::none, control, {}};
    char text[64];
    std::snprintf(text, sizeof text, " (ACS Control 0x%04x: %s)", static_cast<unsigned>(control),
                  redirect_bits(control).c_str());
    return Acs{AcsState::redirect, control, bdf + text};
}

} // namespace rpm::p2p::detail
