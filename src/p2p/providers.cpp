// discover_providers(): every device offering memory for P2P DMA, as
// sysfs shows it: p2pmem/ directories the kernel published, then NVMe
// controllers' CMB and PMR read from their registers.
#include "p2p/nvme_registers.hpp"
#include "p2p/rules.hpp"
#include "p2p/topology.hpp"

#include "platform/pci.hpp"
#include "platform/sysfs.hpp"

#include <charconv>

namespace rpm::p2p::detail {
namespace {

namespace sysfs = platform::sysfs;

constexpr std::string_view kNvmeClass = "0x010802";

Result<std::uint64_t> read_u64(const fs::path& root, const fs::path& rel) {
    auto text = sysfs::read_text(root, rel);
    if (!text) return text.error();
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
    if (ec != std::errc() || end != text->data() + text->size())
        return Error(errc::sysfs_unreadable,
                     (root / rel).string() + ": not a number: \"" + *text + "\"");
    return v;
}

// One p2pmem/ directory: size, available, published (the kernel's
// p2pmem attribute group).
std::optional<Provider> read_p2pmem(const fs::path& root, const std::string& bdf,
                                    std::vector<std::string>& skipped) {
    const fs::path dir = kPciDevices / bdf / "p2pmem";
    auto size = read_u64(root, dir / "size");
    auto available = read_u64(root, dir / "available");
    auto published = read_u64(root, dir / "published");
    for (const auto* r : {&size, &available, &published}) {
        if (*r) continue;
        skipped.push_back(bdf + ": p2pmem unreadable: " + r->error().detail());
        return std::nullopt;
    }
    Provider p;
    p.bdf = bdf;
    p.kind = ProviderKind::p2pmem;
    p.size = *size;
    p.available = *available;
    p.published = *published != 0;
    p.detail = "p2pmem: " + human_size(p.size) + ", " + human_size(p.available) + " available, " +
               (p.published ? "published" : "not published");
    return p;
}

bool has_p2pmem(const fs::path& root, const std::string& bdf) {
    return sysfs::exists(root, kPciDevices / bdf / "p2pmem");
}

bool is_nvme(const fs::path& root, const std::string& bdf) {
    auto cls = sysfs::read_text(root, kPciDevices / bdf / "class");
    return cls && *cls == kNvmeClass;
}

} // namespace

std::string human_size(std::uint64_t bytes) {
    constexpr const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (u < 4 && bytes >= 1024 && bytes % 1024 == 0) {
        bytes /= 1024;
        ++u;
    }
    return std::to_string(bytes) + " " + units[u];
}

std::vector<Provider> discover_providers(const fs::path& root, std::vector<std::string>& skipped) {
    auto names = sysfs::list_dir(root, kPciDevices);
    if (!names) {
        skipped.push_back("PCI devices: " + names.error().detail());
        return {};
    }
    std::vector<Provider> found;
    for (const auto& bdf : *names) {
        if (!has_p2pmem(root, bdf)) continue;
        if (auto p = read_p2pmem(root, bdf, skipped)) found.push_back(std::move(*p));
    }
    // A controller whose CMB the kernel registered shows it as p2pmem
    // already; reading its registers too would offer the memory twice.
    for (const auto& bdf : *names) {
        if (has_p2pmem(root, bdf) || !is_nvme(root, bdf)) continue;
        for (auto& p : nvme_providers(root, bdf, skipped)) found.push_back(std::move(p));
    }
    return found;
}

} // namespace rpm::p2p::detail
