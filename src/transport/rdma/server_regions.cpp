// What a grant over RDMA carries besides Service's decision: the region's
// memory descriptor and a peer configuration derived from the method.
#include "transport/rdma/server.hpp"

#include <algorithm>

namespace rpm::rdma {

int region_usage(const server::Region& r) noexcept {
    // As detected, before overrides: what the memory is, not how it is treated.
    return r.domain_input.value == PersistenceDomain::not_pmem ? kFileRegionUsage : kRegionUsage;
}

Result<std::vector<std::uint8_t>> RegionRegistry::descriptor(server::Region& r) {
    std::lock_guard lock(mu_);
    if (auto it = entries_.find(&r); it != entries_.end()) return it->second.descriptor;
    auto e = register_region(r);
    if (!e) return e.error();
    auto desc = e->descriptor;
    entries_.emplace(&r, std::move(*e));
    return desc;
}

flush::TransportAbility RegionRegistry::native_flush(server::Region& r) {
    std::lock_guard lock(mu_);
    auto it = entries_.find(&r);
    if (it == entries_.end()) {
        auto e = register_region(r);
        if (!e) return {false, "region '" + r.report.name + "' cannot be registered: " + e.error().detail()};
        it = entries_.emplace(&r, std::move(*e)).first;
    }
    return it->second.flush;
}

flush::TransportAbility RegionRegistry::flush_ability(const server::Region& r, const LocalMr* mr) const {
    int native = 0;
    if (api_.mr_get_native_flush(mr, &native) == 0 && (native & kUsageFlushPersistent) != 0) return {true, {}};
    // Why not: the RNIC, the memory, and this build's rdma-core, as many as
    // apply; else the RNIC refused the access for this memory.
    const std::string what = "region '" + r.report.name + "'";
    std::string why;
    if (!rnic_flush_)
        why = "the RNIC reports no persistent FLUSH (IB_UVERBS_DEVICE_FLUSH_PERSISTENT)";
    else if (region_usage(r) != kRegionUsage)
        why = what + " is page cache, not PM: its memory is registered without persistent FLUSH access, and no "
                     "FLUSH can make it durable";
    if (auto build = flush::rdma_ability(); !build.native_flush)
        return {false, why.empty() ? build.why_not : why + "; and " + build.why_not};
    if (!why.empty()) return {false, why};
    return {false, "the RNIC would not register " + what + "'s memory for persistent FLUSH "
                   "(IBV_ACCESS_FLUSH_PERSISTENT); rxe takes it only where every page is persistent memory "
                   "(devdax on an NVDIMM, not memmap= PM)"};
}

void RegionRegistry::revoke(server::Region& r) {
    std::lock_guard lock(mu_);
    auto it = entries_.find(&r);
    if (it == entries_.end()) return;  // never registered: no rkey to kill
    auto fresh = register_region(r);
    // Replacing (or erasing) the entry deregisters the old memory region.
    if (fresh) it->second = std::move(*fresh);
    else entries_.erase(it);  // the next grant registers again, or says why it cannot
}

Result<RegionRegistry::Entry> RegionRegistry::register_region(server::Region& r) {
    const std::string what = "region '" + r.report.name + "'";
    std::byte* base = r.served ? r.served->base() : nullptr;
    if (base == nullptr || r.served->size() == 0)
        return Error(errc::unsupported, what + " has no memory an RNIC can register");
    // Registered once per region, on first use: a region nobody opens over
    // RDMA is never pinned, and a failure (fsdax on rxe, pmem/rpma#1197)
    // names the region rather than failing the whole listener.
    MrHandle mr(api_);
    if (int ret = api_.mr_reg(peer_, base, r.served->size(), region_usage(r), mr.out()); ret != 0)
        return call_failure(errc::unsupported,
                            what + " (" + std::to_string(r.served->size()) +
                                " bytes): the RNIC cannot register this memory (Soft-RoCE and RNICs without "
                                "on-demand paging cannot pin file-system DAX pages, pmem/rpma#1197: serve it "
                                "from a devdax device)",
                            "mr_reg", ret);
    std::size_t n = 0;
    if (int ret = api_.mr_get_descriptor_size(mr.get(), &n); ret != 0)
        return call_failure(errc::rdma_unavailable, what, "mr_get_descriptor_size", ret);
    std::vector<std::uint8_t> desc(n);
    if (int ret = api_.mr_get_descriptor(mr.get(), desc.data()); ret != 0)
        return call_failure(errc::rdma_unavailable, what, "mr_get_descriptor", ret);
    auto ability = flush_ability(r, mr.get());
    return Entry{std::move(mr), std::move(desc), std::move(ability)};
}

void RegionRegistry::clear() {
    std::lock_guard lock(mu_);
    entries_.clear();
}

Result<std::vector<std::uint8_t>> peer_cfg_descriptor(const Api& api, flush::Method m) {
    PeerCfgHandle cfg(api);
    if (int ret = api.peer_cfg_new(cfg.out()); ret != 0)
        return call_failure(errc::rdma_unavailable, "peer configuration", "peer_cfg_new", ret);
    // Derived from the grant's method, itself derived from the detected
    // platform by flush::decide() (or forced by the client, who was told when
    // that is unsafe): never declared by hand, unlike in librpma's examples.
    const bool direct = m == flush::Method::read_after_write;
    if (int ret = api.peer_cfg_set_direct_write_to_pmem(cfg.get(), direct); ret != 0)
        return call_failure(errc::rdma_unavailable, "peer configuration", "peer_cfg_set_direct_write_to_pmem", ret);
    std::size_t n = 0;
    if (int ret = api.peer_cfg_get_descriptor_size(cfg.get(), &n); ret != 0)
        return call_failure(errc::rdma_unavailable, "peer configuration", "peer_cfg_get_descriptor_size", ret);
    std::vector<std::uint8_t> desc(n);
    if (int ret = api.peer_cfg_get_descriptor(cfg.get(), desc.data()); ret != 0)
        return call_failure(errc::rdma_unavailable, "peer configuration", "peer_cfg_get_descriptor", ret);
    return desc;
}

Result<void> complete_grant(const Api& api, RegionRegistry& regs, server::Region& r, proto::RegionGrant& g) {
    // Whatever decided native_flush (the RNIC's report, a client's forced
    // method, an override of native_flush), a FLUSH the registration does
    // not admit would fail on the wire: refused here, with the reason.
    if (g.method == flush::Method::native_flush) {
        if (auto a = regs.native_flush(r); !a.native_flush)
            return Error(errc::unsupported, "region '" + r.report.name + "': native_flush cannot be honored over "
                                            "rdma://: " + a.why_not + "; set RPM_NATIVE_FLUSH=no on the server, or "
                                            "force another method, to use the platform table instead");
    }
    auto mr = regs.descriptor(r);
    if (!mr) return mr.error();
    auto cfg = peer_cfg_descriptor(api, g.method);
    if (!cfg) return cfg.error();
    g.rdma_mr = std::move(*mr);
    g.rdma_peer_cfg = std::move(*cfg);
    return {};
}

// The device as the server detected it at start-up, with the configured
// IIO root-port ids (so DDIO overrides and extra ids apply here too).
std::optional<platform::RdmaDevice> find_device(const server::Service& service, const ibv_context* ctx) {
    if (ctx == nullptr || ctx->device == nullptr) return std::nullopt;
    const auto* dev = service.rdma_device(ctx->device->name);
    if (dev == nullptr) return std::nullopt;
    return *dev;
}

} // namespace rpm::rdma
