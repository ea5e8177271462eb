// rpm-probe --p2p as text (for people) and JSON (for scripts; fields are
// only ever added).
#include "p2p.hpp"

#include <nlohmann/json.hpp>

#include <sstream>

namespace rpm::probe {
namespace {

using nlohmann::json;

std::string mib(std::uint64_t bytes) {
    if (bytes % (1 << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
    if (bytes % (1 << 10) == 0) return std::to_string(bytes >> 10) + " KiB";
    return std::to_string(bytes) + " bytes";
}

void provider_text(std::ostringstream& o, const p2p::Provider& p) {
    o << "  " << p.bdf << ": " << p2p::to_string(p.kind) << ", " << mib(p.size);
    if (p.bar >= 0) o << " in BAR" << p.bar << " at offset " << p.bar_offset;
    o << ", " << mib(p.available) << " available, " << (p.published ? "published" : "not published");
    if (p.kind == p2p::ProviderKind::nvme_cmb)
        o << ", data writes " << (p.write_data ? "yes" : "no") << ", data reads "
          << (p.read_data ? "yes" : "no");
    o << "\n";
    if (!p.detail.empty()) o << "    " << p.detail << "\n";
}

void client_text(std::ostringstream& o, const P2pClient& c) {
    o << "  " << c.name << ": ";
    if (!c.placement) {
        o << "cannot be placed: " << c.error << "\n";
        return;
    }
    const auto& pl = *c.placement;
    o << pl.bdf << " under " << pl.host_bridge << ", upstream bridges: ";
    if (pl.upstream.empty()) o << "none (on the root bus)";
    for (std::size_t i = 0; i < pl.upstream.size(); ++i) o << (i ? " -> " : "") << pl.upstream[i];
    o << "\n";
}

void choice_text(std::ostringstream& o, const p2p::Choice& c) {
    o << "\nVerdicts (closest first):\n";
    if (c.verdicts.empty()) o << "  none (no providers)\n";
    for (const auto& v : c.verdicts) {
        o << "  " << v.provider << ": " << (v.usable ? "usable" : "not usable");
        if (v.usable) o << ", distance " << v.distance;
        if (v.through_host_bridge) o << ", through the host bridge";
        o << "\n    " << v.reason << "\n";
    }
    o << "\nChoice: "
      << (c.provider ? c.provider->bdf + " (" + std::string(p2p::to_string(c.provider->kind)) + ")"
                     : std::string("none: buffers come from host memory"))
      << "\n  " << c.explanation << "\n";
}

json provider_json(const p2p::Provider& p) {
    return {{"bdf", p.bdf},           {"kind", std::string(p2p::to_string(p.kind))},
            {"size", p.size},         {"available", p.available},
            {"published", p.published}, {"bar", p.bar},
            {"bar_offset", p.bar_offset}, {"write_data", p.write_data},
            {"read_data", p.read_data}, {"detail", p.detail}};
}

json client_json(const P2pClient& c) {
    json j{{"name", c.name}};
    if (!c.placement) {
        j["error"] = c.error;
        return j;
    }
    j["bdf"] = c.placement->bdf;
    j["upstream"] = c.placement->upstream;
    j["host_bridge"] = c.placement->host_bridge;
    return j;
}

json choice_json(const p2p::Choice& c) {
    json verdicts = json::array();
    for (const auto& v : c.verdicts)
        verdicts.push_back({{"provider", v.provider}, {"usable", v.usable},
                            {"through_host_bridge", v.through_host_bridge},
                            {"distance", v.distance}, {"reason", v.reason}});
    return {{"provider", c.provider ? json(c.provider->bdf) : json(nullptr)},
            {"kind", c.provider ? json(std::string(p2p::to_string(c.provider->kind))) : json(nullptr)},
            {"explanation", c.explanation},
            {"verdicts", verdicts}};
}

} // namespace

std::string render_p2p_text(const P2pReport& r) {
    std::ostringstream o;
    o << "rpm-probe --p2p: sysfs root " << r.root.string() << "\n\nP2P providers:\n";
    if (r.providers.empty()) o << "  none (no p2pmem/ directories, no NVMe CMB or PMR)\n";
    for (const auto& p : r.providers) provider_text(o, p);
    if (!r.clients.empty()) o << "\nClients:\n";
    for (const auto& c : r.clients) client_text(o, c);
    if (r.clients.empty()) o << "\n(name clients after --p2p to see verdicts and the choice)\n";
    if (r.choice) choice_text(o, *r.choice);
    if (!r.skipped.empty()) {
        o << "\nCould not read:\n";
        for (const auto& s : r.skipped) o << "  - " << s << "\n";
    }
    return o.str();
}

std::string render_p2p_json(const P2pReport& r) {
    json j{{"root", r.root.string()}, {"providers", json::array()}, {"clients", json::array()},
           {"choice", nullptr}, {"skipped", r.skipped}};
    for (const auto& p : r.providers) j["providers"].push_back(provider_json(p));
    for (const auto& c : r.clients) j["clients"].push_back(client_json(c));
    if (r.choice) j["choice"] = choice_json(*r.choice);
    return j.dump(2) + "\n";
}

} // namespace rpm::probe
