// choose(): every provider judged, the closest usable one picked (the
// kernel's pci_p2pmem_find_many, with ties broken by free space rather
// than at random, so the choice is repeatable), and the why in words.
#include "p2p/rules.hpp"
#include "p2p/topology.hpp"

#include <algorithm>

namespace rpm::p2p::detail {
namespace {

struct Ranked {
    const Provider* provider;
    Verdict verdict;
};

Verdict unpublished(const Provider& p) {
    Verdict v;
    v.provider = p.bdf;
    v.reason = p.kind == ProviderKind::p2pmem
                   ? "not published (p2pmem/published is 0: its driver keeps the memory for itself)"
                   : "not published for P2P use: " + p.detail;
    return v;
}

Verdict verdict_for(const fs::path& root, const HostFacts& facts, const Provider& p,
                    std::span<const Placement> clients) {
    if (!p.published) return unpublished(p);
    auto where = place(root, p.bdf);
    if (!where) {
        Verdict v;
        v.provider = p.bdf;
        v.reason = "cannot be placed in the PCI tree: " + where.error().detail();
        return v;
    }
    return judge(root, facts, *where, clients);
}

bool closer(const Ranked& a, const Ranked& b) {
    if (a.verdict.distance != b.verdict.distance) return a.verdict.distance < b.verdict.distance;
    if (a.provider->available != b.provider->available)
        return a.provider->available > b.provider->available;
    return a.provider->bdf < b.provider->bdf;
}

std::string label(const Provider& p) {
    std::string s = p.bdf + " (" + std::string(to_string(p.kind)) + ", " + human_size(p.size);
    if (p.bar >= 0) s += " in BAR" + std::to_string(p.bar);
    return s + ", " + human_size(p.available) + " free)";
}

std::string client_list(std::span<const Placement> clients) {
    std::string s;
    for (const auto& c : clients) s += (s.empty() ? "" : ", ") + c.bdf;
    return s.empty() ? "no clients" : "clients " + s;
}

std::string brief(const Ranked& r) {
    if (!r.verdict.usable) return r.provider->bdf + ": " + r.verdict.reason;
    return r.provider->bdf + " " + std::string(to_string(r.provider->kind)) + " (distance " +
           std::to_string(r.verdict.distance) + ", " + human_size(r.provider->available) + " free)";
}

std::string others(const std::vector<Ranked>& ranked, bool usable, std::size_t skip) {
    std::string s;
    for (std::size_t i = skip; i < ranked.size(); ++i)
        if (ranked[i].verdict.usable == usable) s += (s.empty() ? "" : "; ") + brief(ranked[i]);
    return s;
}

std::string explain(const std::vector<Ranked>& ranked, std::span<const Placement> clients) {
    if (ranked.empty())
        return "No P2P provider was found (no p2pmem, NVMe CMB or PMR): buffers for " +
               client_list(clients) + " come from host memory.";
    std::string s;
    const bool chosen = ranked.front().verdict.usable;
    if (chosen) {
        const Ranked& c = ranked.front();
        s = "Chose " + label(*c.provider) + " for " + client_list(clients) + " (distance " +
            std::to_string(c.verdict.distance) + "): " + c.verdict.reason + ".";
        if (auto more = others(ranked, true, 1); !more.empty()) s += " Also usable: " + more + ".";
    } else {
        s = "No P2P provider suits " + client_list(clients) + "; buffers come from host memory.";
    }
    if (auto refused = others(ranked, false, 0); !refused.empty())
        s += " Refused: " + refused + ".";
    return s;
}

} // namespace

Choice choose(const fs::path& root, const HostFacts& facts, std::span<const Provider> providers,
              std::span<const Placement> clients) {
    std::vector<Ranked> ranked;
    for (const Provider& p : providers)
        ranked.push_back({&p, verdict_for(root, facts, p, clients)});
    // Usable first, closest first; the refused keep discovery order.
    std::stable_sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) {
        if (a.verdict.usable != b.verdict.usable) return a.verdict.usable;
        return a.verdict.usable && closer(a, b);
    });
    Choice choice;
    if (!ranked.empty() && ranked.front().verdict.usable)
        choice.provider = *ranked.front().provider;
    choice.explanation = explain(ranked, clients);
    for (auto& r : ranked) choice.verdicts.push_back(std::move(r.verdict));
    return choice;
}

} // namespace rpm::p2p::detail
