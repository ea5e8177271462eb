// Service::open_region: which method and persist step a session gets for a
// region, and the refusal of a forced method that would lose data.
#include "server/service.hpp"

#include <rpm/flush_plan.hpp>

#include <algorithm>
#include <limits>
#include <mutex>
#include <shared_mutex>

namespace rpm::server {
namespace {

struct Choice {
    flush::Method method;
    flush::ServerPersist step;
    std::string reason;
};

// TCP: the server stores the bytes with the CPU, so they sit in the cache
// like DDIO-on NIC writes; the step is what the domain needs for CPU stores.
Choice tcp_choice(const Region& r) {
    const auto step = r.report.tcp_persist;
    return {flush::Method::send_flush, step,
            "tcp: the server stores the bytes itself, then runs " + std::string(flush::to_string(step)) +
                " for domain " + std::string(to_string(r.report.rdma_decision.effective_domain))};
}

// What rdma:// can do for native FLUSH on region `r`: the build's ability,
// then, where the RNIC reports FLUSH, whether the region's memory admits it.
flush::TransportAbility rdma_ability_for(Region& r, bool reported, const TransportCaps& caps, RdmaMemory* mem) {
    if (!caps.rdma_native_flush) {
        // The build's reason where it is the build; none where a caller
        // (a test) switched it off.
        auto build = flush::rdma_ability();
        return {false, build.native_flush ? std::string() : std::move(build.why_not)};
    }
    if (reported && mem) return mem->native_flush(r);
    return {true, {}};
}

Choice rdma_choice(Region& r, const platform::RdmaDevice* dev, const rpm::Overrides& ov,
                   const flush::TransportAbility& ability) {
    flush::Inputs in = dev ? flush::device_inputs(*dev) : flush::Inputs{};
    if (!dev) in.ddio.origin = "RNIC not identified";
    in = flush::limit_to(in, ability);
    in.domain = r.domain_input;
    if (r.granularity) in.granularity = {r.granularity, flush::Source::detected, "libpmem2"};
    auto d = flush::decide(in, ov.for_decision(r.report.name, dev ? dev->name : ""));
    return {d.method, d.server_persist, d.reason};
}

// The step a forced method implies: the server's own persist step for a
// send, nothing for the one-sided methods.
flush::ServerPersist forced_step(flush::Method m, PersistenceDomain effective) {
    return m == flush::Method::send_flush ? flush::server_persist_for(effective) : flush::ServerPersist::none;
}

Result<Choice> apply_force(Choice c, const proto::OpenRegion& req, const Region& r, TransportKind kind,
                           const platform::RdmaDevice* dev, const flush::TransportAbility& ability) {
    const auto m = *req.force_method;
    const auto effective = r.report.rdma_decision.effective_domain;
    if (kind == TransportKind::tcp && m == flush::Method::native_flush)
        return Error(errc::unsupported, "native_flush is an RDMA operation; tcp:// cannot do it");
    // CPU stores behave like DDIO-on writes; an unknown RNIC counts as DDIO on.
    const Ddio ddio = (kind == TransportKind::rdma && dev) ? dev->ddio.state : Ddio::on;
    const bool native = kind == TransportKind::rdma && dev && dev->native_flush == platform::Tri::yes &&
                        ability.native_flush;
    if (!flush::is_safe(m, effective, ddio, native) && !req.unsafe)
        return Error(errc::invalid_argument,
                     "forcing " + std::string(flush::to_string(m)) + " is unsafe for region '" + req.name +
                         "' (" + c.reason + "); set unsafe to allow it");
    c.method = m;
    c.step = forced_step(m, effective);
    c.reason = "forced by the client" + std::string(req.unsafe ? " (unsafe allowed)" : "") + "; decision was: " + c.reason;
    return c;
}

// One answer for "no such region" and "not yours": names do not leak.
Result<Region*> find_granted(std::vector<std::unique_ptr<Region>>& regions, const Session& s,
                             const std::string& name) {
    auto it = std::find_if(regions.begin(), regions.end(),
                           [&](const auto& r) { return r->report.name == name; });
    if (it == regions.end() || (!(*it)->clients.empty() && !(*it)->clients.count(s.client_id)))
        return Error(errc::invalid_argument, "no region named '" + name + "' is granted to this client");
    return it->get();
}

proto::RegionGrant grant_message(std::uint32_t id, const Region& r, Choice c, bool forced) {
    proto::RegionGrant g;
    g.id = id;
    g.size = r.served->size();
    g.method = c.method;
    g.server_persist = c.step;
    g.domain = r.report.rdma_decision.effective_domain;
    g.forced = forced;
    g.reason = std::move(c.reason);
    return g;
}

// Who may present a term at all: checked before the term is looked at, so
// a client that may not fence learns that rather than how the term compares.
Result<void> may_fence(const ServerOptions& o, const Session& s, const Region& r, std::uint64_t term) {
    if (term == 0 || !o.fencers || o.fencers->count(s.client_id)) return {};
    return Error(errc::permission_denied,
                 "client '" + s.client_id + "' may not open region '" + r.report.name + "' with a fencing term (" +
                     std::to_string(term) + "): only the clients in ServerOptions::fencers may; allow it there "
                     "(rpm-server --fencer " + s.client_id + "), or open with term 0");
}

// The largest term a region at `current` accepts: current + step, saturated
// at 2^64-1 (a large current term must not wrap round to a small bound).
std::uint64_t term_limit(std::uint64_t current, std::uint64_t step) {
    constexpr auto max = std::numeric_limits<std::uint64_t>::max();
    return current > max - step ? max : current + step;
}

Error too_far(const Region& r, std::uint64_t term, std::uint64_t current, std::uint64_t step) {
    return Error(errc::invalid_argument,
                 "region '" + r.report.name + "': term " + std::to_string(term) + " is more than " +
                     std::to_string(step) + " above its current term " + std::to_string(current) +
                     " (the largest it takes now is " + std::to_string(term_limit(current, step)) +
                     "); terms grow by small steps, so this one looks like a client's bug. If it is meant, raise "
                     "ServerOptions::max_fencing_term_step (rpm-server --max-fencing-term-step)");
}

} // namespace

void decide_region(Region& r, const rpm::Overrides& ov) {
    flush::Inputs in;
    in.domain = {r.report.domain, flush::Source::detected, r.report.path};
    in.granularity = {r.granularity, flush::Source::detected, "libpmem2"};
    in.ddio.origin = "RNIC not identified";
    r.domain_input = in.domain;
    r.report.rdma_decision = flush::decide(in, ov.for_decision(r.report.name, ""));
    r.report.tcp_persist = flush::server_persist_for(r.report.rdma_decision.effective_domain);
}

Result<proto::RegionGrant> Service::open_region(Session& s, const proto::OpenRegion& req, TransportKind kind,
                                             const platform::RdmaDevice* dev, RdmaMemory* memory) {
    if (!s.authenticated) return Error(errc::permission_denied, "open_region before authentication");
    if (s.grants.size() >= kMaxGrantsPerSession)
        return Error(errc::bad_size, "this connection has opened regions " + std::to_string(kMaxGrantsPerSession) +
                                         " times, the most one connection may; open a new connection");
    auto found = find_granted(regions_, s, req.name);
    if (!found) return found.error();
    Region& r = **found;
    const bool reported = dev && dev->native_flush == platform::Tri::yes;
    const auto ability = kind == TransportKind::rdma ? rdma_ability_for(r, reported, caps_, memory)
                                                     : flush::TransportAbility{};
    Choice c = kind == TransportKind::tcp ? tcp_choice(r) : rdma_choice(r, dev, overrides_, ability);
    if (req.force_method) {
        auto forced = apply_force(std::move(c), req, r, kind, dev, ability);
        if (!forced) return forced.error();
        c = std::move(*forced);
    }
    if (auto allowed = may_fence(opts_, s, r, req.fencing_term); !allowed) return allowed.error();
    if (auto admitted = admit_term(r, req.fencing_term); !admitted) return admitted.error();
    const auto id = static_cast<std::uint32_t>(s.grants.size());
    s.grants.push_back(Grant{id, &r, c.method, c.step, req.fencing_term});
    return grant_message(id, r, std::move(c), req.force_method.has_value());
}

void Service::add_fence_hook(FenceHook* h) {
    std::lock_guard lock(hooks_mu_);
    hooks_.push_back(h);
}

void Service::remove_fence_hook(FenceHook* h) {
    std::lock_guard lock(hooks_mu_);
    std::erase(hooks_, h);
}

// Decided under the fence's lock: shared for the usual case (the same
// term), exclusive to move to a newer one, which is kept durably before any
// session learns of it, so a restarted server never accepts an older term.
// A newer term too far ahead is refused before anything is kept: kept, it
// would lock out every later primary (docs/replication.md, "Fencing").
Result<void> Service::admit_term(Region& r, std::uint64_t term) {
    const auto older = [&](std::uint64_t have) {
        return Error(errc::fenced, "region '" + r.report.name + "' belongs to primary term " + std::to_string(have) +
                                       "; this open's term " + std::to_string(term) + " is older");
    };
    {
        std::shared_lock lock(r.fence.mu);
        if (term == r.fence.term) return {};
        if (fenced(r.fence.term, term)) return older(r.fence.term);
    }
    std::unique_lock lock(r.fence.mu);
    if (term == r.fence.term) return {};
    if (fenced(r.fence.term, term)) return older(r.fence.term);
    if (term > term_limit(r.fence.term, opts_.max_fencing_term_step))
        return too_far(r, term, r.fence.term, opts_.max_fencing_term_step);
    if (!r.fence.file)
        return Error(errc::unsupported, "region '" + r.report.name +
                                            "' has no fence file to keep a primary term in (a device region: "
                                            "set ServerOptions::fence_dir, rpm-server --fence-dir)");
    if (auto kept = store_term(*r.fence.file, term); !kept) return kept;
    r.fence.term = term;
    std::lock_guard hooks(hooks_mu_);
    for (FenceHook* h : hooks_) h->region_fenced(r, term);
    return {};
}

} // namespace rpm::server
