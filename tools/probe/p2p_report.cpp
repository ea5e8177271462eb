// rpm-probe --p2p: what the P2P manager sees and decides, gathered once
// and rendered as text or JSON.
#include "p2p.hpp"

namespace rpm::probe {

Result<P2pReport> build_p2p_report(const std::filesystem::path& root,
                                   const std::vector<std::string>& clients) {
    p2p::ManagerOptions opts;
    opts.root = root;
    opts.map_bars = false;  // the probe looks; it never maps device memory
    auto manager = p2p::Manager::discover(opts);
    if (!manager) return manager.error();
    P2pReport r;
    r.root = root;
    r.providers = manager->providers();
    r.skipped = manager->skipped();
    bool all_placed = !clients.empty();
    for (const auto& name : clients) {
        P2pClient c{name, std::nullopt, {}};
        if (auto p = manager->place(name)) c.placement = std::move(*p);
        else {
            c.error = p.error().detail();  // the category's generic advice is about files
            all_placed = false;
        }
        r.clients.push_back(std::move(c));
    }
    if (all_placed) {
        auto choice = manager->find(clients);
        if (!choice) return choice.error();
        r.choice = std::move(*choice);
    }
    return r;
}

} // namespace rpm::probe
