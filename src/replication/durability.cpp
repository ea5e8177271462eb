// Durability policies and the names of the module's enums.
#include <rpm/replication.hpp>

#include "replication/quorum.hpp"

#include <algorithm>
#include <charconv>
#include <functional>

namespace rpm {

std::string to_string(const Durability& d) {
    std::string s = d.kind == Durability::Kind::all        ? "all"
                    : d.kind == Durability::Kind::majority ? "majority"
                                                           : std::to_string(d.k) + "-of-n";
    return s + (d.include_local ? "+local" : "-local");
}

Result<Durability> parse_durability(std::string_view s) {
    const std::string whole(s);
    Durability d;
    for (std::string_view suffix : {"+local", "-local"}) {
        if (s.size() > suffix.size() && s.substr(s.size() - suffix.size()) == suffix) {
            d.include_local = suffix[0] == '+';
            s.remove_suffix(suffix.size());
            break;
        }
    }
    if (s == "all") return (d.kind = Durability::Kind::all, d);
    if (s == "majority") return (d.kind = Durability::Kind::majority, d);
    if (s.size() > 5 && s.substr(s.size() - 5) == "-of-n") s.remove_suffix(5);
    unsigned k = 0;
    const auto* end = s.data() + s.size();
    auto [p, ec] = std::from_chars(s.data(), end, k);
    if (ec != std::errc{} || p != end || k == 0)
        return Error(errc::invalid_argument, "durability '" + whole +
                                                 "': use all, majority or a count K, optionally +local or -local");
    d.kind = Durability::Kind::k_of_n;
    d.k = k;
    return d;
}

std::string_view to_string(Frontier f) noexcept {
    switch (f) {
    case Frontier::local: return "local";
    case Frontier::quorum: return "quorum";
    case Frontier::all: return "all";
    }
    return "?";
}

std::string_view to_string(ReplicaState s) noexcept {
    switch (s) {
    case ReplicaState::syncing: return "syncing";
    case ReplicaState::live: return "live";
    case ReplicaState::failed: return "failed";
    }
    return "?";
}

std::string_view to_string(ReplicaEvent::Kind k) noexcept {
    switch (k) {
    case ReplicaEvent::Kind::joined: return "joined";
    case ReplicaEvent::Kind::left: return "left";
    case ReplicaEvent::Kind::catching_up: return "catching_up";
    case ReplicaEvent::Kind::rejoined: return "rejoined";
    case ReplicaEvent::Kind::degraded: return "degraded";
    case ReplicaEvent::Kind::healthy: return "healthy";
    }
    return "?";
}

Result<unsigned> needed_members(const Durability& d, unsigned members) {
    if (members == 0) return Error(errc::invalid_argument, "no replicas and the local copy does not count");
    switch (d.kind) {
    case Durability::Kind::all: return members;
    case Durability::Kind::majority: return members / 2 + 1;
    case Durability::Kind::k_of_n:
        if (d.k >= 1 && d.k <= members) return d.k;
        return Error(errc::invalid_argument, "durability " + to_string(d) + " needs " + std::to_string(d.k) +
                                                 " members but there are " + std::to_string(members));
    }
    return Error(errc::invalid_argument, "unknown durability kind");
}

} // namespace rpm

namespace rpm::replication {

Lsn kth_frontier(std::vector<Lsn> frontiers, unsigned needed) {
    if (needed == 0 || frontiers.size() < needed) return 0;
    std::nth_element(frontiers.begin(), frontiers.begin() + (needed - 1), frontiers.end(), std::greater<>());
    return frontiers[needed - 1];
}

unsigned read_quorum(unsigned members, unsigned needed) noexcept { return members - needed + 1; }

} // namespace rpm::replication
