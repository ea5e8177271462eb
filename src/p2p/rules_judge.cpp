// judge(): the kernel's verdict (pci_p2pdma_distance_many) on one provider
// for a set of clients, with the reason in words.
#include "p2p/rules.hpp"

namespace rpm::p2p::detail {
namespace {

struct ClientVerdict {
    bool usable = false;
    bool through_host_bridge = false;
    int distance = 0;
    std::string reason;
};

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
    std::string out;
    for (const auto& p : parts) out += (out.empty() ? "" : sep) + p;
    return out;
}

std::string device_of(const std::string& bdf) {
    return bdf.substr(0, bdf.size() - 2);
}

// The direct path in the words of the kernel's comment: same function,
// functions of one device, or a common switch / root port.
std::string direct_kind(const Placement& p, const Placement& c, const Path& path) {
    if (path.common.empty()) return "same function as client " + c.bdf;
    if (path.distance == 2 && device_of(p.bdf) == device_of(c.bdf))
        return "same device as client " + c.bdf + " (functions of " + device_of(p.bdf) + ")";
    const bool root_port = !p.upstream.empty() && p.upstream.back() == path.common;
    return std::string(root_port ? "common root port " : "common switch ") + path.common +
           " with client " + c.bdf;
}

// Why the traffic would cross the host bridge.
std::string host_bridge_cause(const Placement& p, const Placement& c, const Path& path) {
    std::vector<std::string> causes;
    if (!path.redirects.empty()) causes.push_back("ACS redirect at " + join(path.redirects, ", "));
    if (!path.unknown.empty())
        causes.push_back("ACS counted as a redirect at " + join(path.unknown, ", "));
    if (!path.common_found) {
        std::string where = "different root ports under " + p.host_bridge;
        if (p.host_bridge != c.host_bridge)
            where = "different host bridges " + p.host_bridge + " and " + c.host_bridge;
        else if (p.upstream.empty() || c.upstream.empty())
            where = "a device on the root bus of " + p.host_bridge;
        causes.push_back("no common upstream bridge (" + where + ")");
    }
    return join(causes, "; ");
}

ClientVerdict judge_one(const fs::path& root, const HostFacts& facts, const Placement& p,
                        const Placement& c) {
    const Path path = walk_path(root, p, c);
    const std::string dist = ", distance " + std::to_string(path.distance);
    if (path.common_found && path.redirects.empty() && path.unknown.empty())
        return {true, false, path.distance, direct_kind(p, c, path) + dist};
    const std::string cause = host_bridge_cause(p, c, path);
    const HostBridgeVerdict hb = host_bridge_verdict(root, facts, p, c);
    if (!hb.allowed)
        return {
            false, true, -1,
            "client " + c.bdf + ": " + cause + ", so through the host bridge: refused, " + hb.why};
    return {true, true, path.distance,
            "through the host bridge to client " + c.bdf + " (" + cause + "), allowed: " + hb.why +
                dist};
}

} // namespace

Verdict judge(const fs::path& root, const HostFacts& facts, const Placement& provider,
              std::span<const Placement> clients) {
    Verdict v;
    v.provider = provider.bdf;
    if (clients.empty()) {
        v.reason = "no clients to judge against";
        return v;
    }
    std::vector<std::string> good, bad;
    int total = 0;
    for (const Placement& c : clients) {
        const ClientVerdict cv = judge_one(root, facts, provider, c);
        v.through_host_bridge = v.through_host_bridge || cv.through_host_bridge;
        (cv.usable ? good : bad).push_back(cv.reason);
        if (cv.usable) total += cv.distance;
    }
    v.usable = bad.empty();
    v.distance = v.usable ? total : -1;
    v.reason = join(v.usable ? good : bad, "; ");
    return v;
}

} // namespace rpm::p2p::detail
