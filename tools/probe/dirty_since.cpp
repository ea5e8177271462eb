// rpm-probe --dirty-shutdown-since: read the baseline (an earlier
// rpm-probe --json), match its nvdimms with this probe's, compare counts.
#include "dirty_since.hpp"

#include "report.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace rpm::probe {
namespace {

using nlohmann::json;

// Every message starts with the option and the file, so that an operator
// who passed the wrong file sees which one and what is wrong with it.
Error bad_baseline(const std::filesystem::path& file, const std::string& why) {
    return Error(errc::invalid_argument, "--dirty-shutdown-since " + file.string() + ": " + why);
}

Result<json> read_json(const std::filesystem::path& file) {
    std::ifstream in(file);
    if (!in)
        return Error(errc::io_error,
                     "--dirty-shutdown-since " + file.string() + ": cannot read: " + std::strerror(errno));
    std::stringstream text;
    text << in.rdbuf();
    try {
        return json::parse(text.str());
    } catch (const json::parse_error& e) {
        return bad_baseline(file, std::string("not JSON (") + e.what() + "), not rpm-probe --json output");
    }
}

// A JSON count: the kernel's counts are unsigned; null is "not reported".
bool is_count(const json& v) { return v.is_null() || v.is_number_unsigned(); }

std::optional<std::uint64_t> count_of(const json& v) {
    return v.is_null() ? std::nullopt : std::optional<std::uint64_t>(v.get<std::uint64_t>());
}

// The baseline's memdev serials by name, from cxl.memdevs (every memdev).
std::map<std::string, std::uint64_t> baseline_serials(const json& doc) {
    std::map<std::string, std::uint64_t> out;
    if (!doc.contains("cxl") || !doc["cxl"].is_object() || !doc["cxl"].contains("memdevs")) return out;
    for (const auto& m : doc["cxl"]["memdevs"])
        if (m.is_object() && m.value("name", json()).is_string() && m.value("serial", json()).is_number_unsigned())
            out[m["name"].get<std::string>()] = m["serial"].get<std::uint64_t>();
    return out;
}

Result<DirtyEntry> baseline_entry(const std::filesystem::path& file, const json& n, std::size_t i,
                                  const std::map<std::string, std::uint64_t>& serials) {
    const std::string where = "nvdimms[" + std::to_string(i) + "]";
    if (!n.is_object() || !n.value("nmem", json()).is_string())
        return bad_baseline(file, where + " has no \"nmem\" name");
    const json memdev = n.value("memdev", json());
    const json count = n.value("dirty_shutdown", json());
    if (!memdev.is_null() && !memdev.is_string()) return bad_baseline(file, where + ".memdev is not a name");
    if (!is_count(count)) return bad_baseline(file, where + ".dirty_shutdown is not a count: " + count.dump());
    DirtyEntry e{n["nmem"].get<std::string>(), memdev.is_null() ? "" : memdev.get<std::string>(), {},
                 count_of(count)};
    if (auto s = serials.find(e.memdev); !e.memdev.empty() && s != serials.end()) e.serial = s->second;
    return e;
}

// rpm-probe --json always has sysfs_root, regions and decisions; --p2p's
// JSON, a config file or a log does not. A baseline without nvdimms comes
// from an rpm-probe before dirty shutdown counts: it has no counts.
Result<std::vector<DirtyEntry>> read_baseline(const std::filesystem::path& file) {
    auto doc = read_json(file);
    if (!doc) return doc.error();
    if (!doc->is_object() || !doc->contains("sysfs_root") || !doc->contains("regions") || !doc->contains("decisions"))
        return bad_baseline(file, "not rpm-probe --json output (no \"sysfs_root\", \"regions\" and \"decisions\")");
    std::vector<DirtyEntry> out;
    if (!doc->contains("nvdimms")) return out;
    const json& nvdimms = (*doc)["nvdimms"];
    if (!nvdimms.is_array()) return bad_baseline(file, "\"nvdimms\" is not a list");
    const auto serials = baseline_serials(*doc);
    for (std::size_t i = 0; i < nvdimms.size(); ++i) {
        auto e = baseline_entry(file, nvdimms[i], i, serials);
        if (!e) return e.error();
        out.push_back(std::move(*e));
    }
    return out;
}

std::vector<DirtyEntry> current_entries(const Report& r) {
    std::vector<DirtyEntry> out;
    for (const auto& d : r.dirty_shutdown.nmems) {
        DirtyEntry e{d.nmem, d.memdev, {}, d.count};
        for (const auto& m : r.cxl.memdevs)
            if (!d.memdev.empty() && m.name == d.memdev) e.serial = m.serial;
        out.push_back(std::move(e));
    }
    return out;
}

// Serials that cannot tell devices apart: 0 (the kernel's value when the
// device has no serial number) and any serial two devices on one side share.
std::set<std::uint64_t> unusable_serials(const std::vector<DirtyEntry>& a, const std::vector<DirtyEntry>& b) {
    std::set<std::uint64_t> out{0};
    for (const auto* side : {&a, &b}) {
        std::set<std::uint64_t> seen;
        for (const auto& e : *side)
            if (e.serial && !seen.insert(*e.serial).second) out.insert(*e.serial);
    }
    return out;
}

// CXL memdev names follow probe order and can change across boots; a
// serial does not. NFIT nvdimms have no serial here and keep their nmem
// names (the NFIT handle orders them).
std::string key_of(const DirtyEntry& e, const std::set<std::uint64_t>& unusable) {
    if (e.serial && !unusable.contains(*e.serial)) return "serial " + std::to_string(*e.serial);
    return "nmem " + e.nmem;
}

// Any difference is a move: the kernel's count wraps to 0 on overflow, so
// a smaller count is a larger one that wrapped, not a count gone back.
DirtyStatus status_of(const DirtyChange& c) {
    if (!c.before || !c.before->count) return DirtyStatus::no_baseline;
    if (!c.now) return DirtyStatus::gone;
    if (!c.now->count) return DirtyStatus::no_count;
    return *c.now->count != *c.before->count ? DirtyStatus::moved : DirtyStatus::unchanged;
}

std::vector<DirtyChange> match(const std::vector<DirtyEntry>& before, const std::vector<DirtyEntry>& now) {
    const auto unusable = unusable_serials(before, now);
    std::vector<bool> matched(before.size(), false);
    std::vector<DirtyChange> out;
    for (const auto& n : now) {
        DirtyChange c{std::nullopt, n};
        for (std::size_t i = 0; i < before.size() && !c.before; ++i)
            if (!matched[i] && key_of(before[i], unusable) == key_of(n, unusable)) {
                c.before = before[i];
                matched[i] = true;
            }
        c.status = status_of(c);
        // A count on neither side says nothing about this device.
        if (n.count || (c.before && c.before->count)) out.push_back(std::move(c));
    }
    for (std::size_t i = 0; i < before.size(); ++i)
        if (!matched[i] && before[i].count) out.push_back(DirtyChange{before[i], std::nullopt, DirtyStatus::gone});
    return out;
}

} // namespace

std::string_view to_string(DirtyStatus s) {
    switch (s) {
    case DirtyStatus::unchanged: return "unchanged";
    case DirtyStatus::moved: return "moved";
    case DirtyStatus::gone: return "gone";
    case DirtyStatus::no_count: return "no_count";
    case DirtyStatus::no_baseline: return "no_baseline";
    }
    return "unknown";
}

bool DirtySince::any_moved() const {
    return std::any_of(devices.begin(), devices.end(),
                       [](const DirtyChange& c) { return c.status == DirtyStatus::moved; });
}

Result<DirtySince> dirty_shutdown_since(const Report& now, const std::filesystem::path& file) {
    auto before = read_baseline(file);
    if (!before) return before.error();
    return DirtySince{file.string(), match(*before, current_entries(now))};
}

} // namespace rpm::probe
