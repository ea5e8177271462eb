// The walk of calc_map_type_and_dist: from the provider up, each function
// is checked for ACS redirection and looked for on the client's chain; at
// the first common one, the client's functions below it are checked too.
// So the common bridge itself counts on the provider side, and the
// functions above it do not count at all.
#include "p2p/rules.hpp"

#include <algorithm>

namespace rpm::p2p::detail {
namespace {

// The device itself, then its bridges up to the root port.
std::vector<std::string> chain_of(const Placement& p) {
    std::vector<std::string> chain{p.bdf};
    chain.insert(chain.end(), p.upstream.begin(), p.upstream.end());
    return chain;
}

// An unreadable ACS counts as a redirect on a bridge (the conservative
// reading: an unprivileged reader cannot tell, and a switch port with
// IOMMU-enabled ACS is common). On the provider or client function
// itself it is ignored: ACS there governs only a multi-function device's
// peer traffic, and counting it would refuse even the same function.
void note_acs(const fs::path& root, const std::string& bdf, bool is_bridge, Path& path) {
    Acs acs = read_acs(root, bdf);
    if (acs.state == AcsState::redirect) path.redirects.push_back(std::move(acs.text));
    if (acs.state == AcsState::unknown && is_bridge) path.unknown.push_back(std::move(acs.text));
}

} // namespace

Path walk_path(const fs::path& root, const Placement& provider, const Placement& client) {
    const auto a = chain_of(provider);
    const auto b = chain_of(client);
    Path found;
    for (std::size_t i = 0; i < a.size(); ++i) {
        note_acs(root, a[i], i > 0, found);
        const auto it = std::find(b.begin(), b.end(), a[i]);
        if (it == b.end()) continue;
        const auto j = static_cast<std::size_t>(it - b.begin());
        for (std::size_t k = 0; k < j; ++k) note_acs(root, b[k], k > 0, found);
        found.common_found = true;
        found.common = (i == 0 && j == 0) ? std::string() : a[i];
        found.distance = static_cast<int>(i + j);
        return found;
    }
    // No common bridge: the kernel still counts every hop (dist_a + dist_b)
    // and ignores the ACS bits it saw, since the traffic goes through the
    // host bridge either way.
    Path none;
    none.distance = static_cast<int>(a.size() + b.size());
    return none;
}

} // namespace rpm::p2p::detail
