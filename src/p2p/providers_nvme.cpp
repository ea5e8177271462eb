// An NVMe controller's CMB and PMR from its registers (NVMe base
// specification: CAP.CMBS/PMRS, CMBLOC, CMBSZ, PMRCAP, PMRCTL), checked
// against the BAR sizes in sysfs `resource`.
#include "p2p/nvme_registers.hpp"
#include "p2p/rules.hpp"

#include "platform/sysfs.hpp"

#include <array>
#include <cstdio>

namespace rpm::p2p::detail {
namespace {

namespace sysfs = platform::sysfs;

bool bit(std::uint64_t v, int n) {
    return ((v >> n) & 1) != 0;
}

std::string hex(std::uint64_t v) {
    char b[24];
    std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
    return b;
}

// BIR: 0 and 2-5 name a BAR; 1 is reserved (BAR0/1 is one 64-bit BAR).
bool valid_bir(unsigned bir) {
    return bir == 0 || (bir >= 2 && bir <= 5);
}

std::string cmb_flags(std::uint32_t cmbsz) {
    static constexpr std::array<std::pair<int, const char*>, 5> names{
        {{4, "WDS"}, {3, "RDS"}, {2, "LISTS"}, {1, "CQS"}, {0, "SQS"}}};
    std::string s;
    for (const auto& [b, n] : names)
        if (bit(cmbsz, b)) s += std::string(" ") + n;
    return s;
}

struct Region {
    unsigned bir = 0;
    std::uint64_t offset = 0, size = 0;
};

// The region must lie in its BAR; a CMB larger than the BAR is cut to
// fit, as the kernel's nvme_map_cmb does (a bridge window can be smaller
// than the controller's CMBSZ).
std::optional<std::string> fit_in_bar(const NvmeView& v, const char* what, Region& r,
                                      std::string& note) {
    if (v.resource_table.empty())
        return std::string(what) + " in BAR" + std::to_string(r.bir) +
               ": the BAR sizes are unknown (`resource` unreadable)";
    const auto bar = bar_size(v.resource_table, static_cast<int>(r.bir));
    if (!bar)
        return std::string(what) + " in BAR" + std::to_string(r.bir) +
               ", which `resource` shows unused";
    if (r.offset >= *bar)
        return std::string(what) + " offset " + hex(r.offset) + " is beyond BAR" +
               std::to_string(r.bir) + " (" + human_size(*bar) + ")";
    if (r.size == 0) r.size = *bar - r.offset;
    if (r.offset + r.size > *bar) {
        note = ", cut from " + human_size(r.size) + " to fit BAR" + std::to_string(r.bir);
        r.size = *bar - r.offset;
    }
    return std::nullopt;
}

std::optional<Provider> decode_cmb(const NvmeView& v, std::vector<std::string>& skipped) {
    const std::string who = v.bdf + ": NVMe CMB ";
    if (v.cmbsz == 0) {
        if (bit(v.cap, nvme_reg::cap_cmbs_bit))
            skipped.push_back(who +
                              "present but disabled: CAP.CMBS is set and CMBSZ reads 0, so "
                              "CMBMSC.CRE is off (no driver enabled it; rpm does not write "
                              "controller registers)");
        return std::nullopt;
    }
    const unsigned szu = (v.cmbsz >> 8) & 0xf;
    Region r{v.cmbloc & 0x7, 0, 0};
    if (szu > 6 || !valid_bir(r.bir)) {
        skipped.push_back(who + "has reserved values: CMBLOC " + hex(v.cmbloc) + ", CMBSZ " +
                          hex(v.cmbsz));
        return std::nullopt;
    }
    const std::uint64_t unit = std::uint64_t{4096} << (4 * szu);
    r.offset = static_cast<std::uint64_t>(v.cmbloc >> 12) * unit;
    r.size = static_cast<std::uint64_t>(v.cmbsz >> 12) * unit;
    if (r.size == 0) {
        skipped.push_back(who + "has size 0 (CMBSZ " + hex(v.cmbsz) + ")");
        return std::nullopt;
    }
    std::string note;
    if (auto bad = fit_in_bar(v, "CMB", r, note)) {
        skipped.push_back(v.bdf + ": NVMe " + *bad);
        return std::nullopt;
    }
    Provider p;
    p.bdf = v.bdf;
    p.kind = ProviderKind::nvme_cmb;
    p.size = p.available = r.size;
    p.bar = static_cast<int>(r.bir);
    p.bar_offset = r.offset;
    p.write_data = bit(v.cmbsz, 4);
    p.read_data = bit(v.cmbsz, 3);
    // The kernel publishes a CMB only when it takes both read and write data.
    p.published = p.write_data && p.read_data;
    p.detail = "CMB in BAR" + std::to_string(p.bar) + " at " + hex(r.offset) + ", " +
               human_size(r.size) + note + ", SZU " + human_size(unit) + "," + cmb_flags(v.cmbsz) +
               (p.published ? "" : "; lacks WDS or RDS, so not published");
    return p;
}

std::optional<Provider> decode_pmr(const NvmeView& v, std::vector<std::string>& skipped) {
    if (!bit(v.cap, nvme_reg::cap_pmrs_bit) || !v.pmrcap) return std::nullopt;
    const std::uint32_t cap = *v.pmrcap;
    Region r{(cap >> 5) & 0x7, 0, 0};  // the PMR is the whole BAR
    std::string note;
    if (!valid_bir(r.bir) || r.bir == 0) {
        skipped.push_back(v.bdf + ": NVMe PMR has a reserved BIR: PMRCAP " + hex(cap));
        return std::nullopt;
    }
    if (auto bad = fit_in_bar(v, "PMR", r, note)) {
        skipped.push_back(v.bdf + ": NVMe " + *bad);
        return std::nullopt;
    }
    Provider p;
    p.bdf = v.bdf;
    p.kind = ProviderKind::nvme_pmr;
    p.size = p.available = r.size;
    p.bar = static_cast<int>(r.bir);
    p.write_data = bit(cap, 4);
    p.read_data = bit(cap, 3);
    const bool enabled = v.pmrctl && (*v.pmrctl & 1) != 0;
    p.published = p.write_data && p.read_data && enabled;
    p.detail = "PMR in BAR" + std::to_string(p.bar) + " (the whole BAR), " + human_size(r.size) +
               (p.write_data ? ", WDS" : "") + (p.read_data ? ", RDS" : "") +
               (enabled ? ", enabled" : ", disabled (PMRCTL.EN 0; rpm does not enable it)") +
               (p.write_data && p.read_data ? "" : "; lacks WDS or RDS, so not published");
    return p;
}

Result<NvmeView> read_view(const fs::path& root, const std::string& bdf) {
    const fs::path dir = fs::path("sys/bus/pci/devices") / bdf;
    auto real = sysfs::resolve(root, dir / "resource0");
    if (!real) return real.error();
    NvmeView v;
    v.bdf = bdf;
    using namespace nvme_reg;
    constexpr std::array<std::uint32_t, 4> base{cap_lo, cap_hi, cmbloc, cmbsz};
    auto regs = read_registers(root / *real, base);
    if (!regs) return regs.error();
    v.cap = (*regs)[0] | static_cast<std::uint64_t>((*regs)[1]) << 32;
    v.cmbloc = (*regs)[2];
    v.cmbsz = (*regs)[3];
    if (bit(v.cap, cap_pmrs_bit)) {
        constexpr std::array<std::uint32_t, 2> pmr{pmrcap, pmrctl};
        auto more = read_registers(root / *real, pmr);
        if (!more) return more.error();
        v.pmrcap = (*more)[0];
        v.pmrctl = (*more)[1];
    }
    auto table = sysfs::read_text(root, dir / "resource");
    if (table) v.resource_table = *table;
    return v;
}

} // namespace

std::vector<Provider> decode_nvme(const NvmeView& v, std::vector<std::string>& skipped) {
    std::vector<Provider> out;
    if (auto cmb = decode_cmb(v, skipped)) out.push_back(std::move(*cmb));
    if (auto pmr = decode_pmr(v, skipped)) out.push_back(std::move(*pmr));
    return out;
}

std::vector<Provider> nvme_providers(const fs::path& root, const std::string& bdf,
                                     std::vector<std::string>& skipped) {
    auto view = read_view(root, bdf);
    if (!view) {
        skipped.push_back(bdf + ": NVMe registers unreadable: " + view.error().message());
        return {};
    }
    return decode_nvme(*view, skipped);
}

} // namespace rpm::p2p::detail
