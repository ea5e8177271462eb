// ClientConn::open_region: ask for a region, then take the grant's RDMA
// descriptors into use (mr_remote_from_descriptor, and for
// read_after_write the server's peer configuration) and choose the
// region's flusher.
#include "transport/rdma/client.hpp"
#include "transport/rdma/frames.hpp"

#include <rpm/flush_plan.hpp>

#include <future>

namespace rpm::rdma {
namespace {

// Set once, on the I/O thread; waited for on the caller's.
struct GrantBox {
    std::promise<Result<proto::RegionGrant>> promise;
    bool set = false;
    bool native_refused = false;  // a native_flush the server chose and this side cannot post
    void put(Result<proto::RegionGrant> r) {
        if (set) return;
        set = true;
        promise.set_value(std::move(r));
    }
};

Result<proto::RegionGrant> grant_reply(const proto::Header& h, std::span<const std::byte> body) {
    if (h.type != proto::Type::region) return unexpected_reply(h, body, "Region");
    return proto::decode_region(body);
}

} // namespace

Result<proto::RegionGrant> ClientConn::open_region(const proto::OpenRegion& req) {
    auto g = request_grant(req);
    if (g.grant || !g.native_refused || req.force_method) return std::move(g.grant);
    // The server decided native_flush from its own RNIC; it cannot know
    // that this side's cannot post a FLUSH (the protocol does not say).
    // send_flush is safe on every platform: ask for it instead, and the
    // grant's reason says it was forced and what the decision was.
    proto::OpenRegion again = req;
    again.force_method = flush::Method::send_flush;
    return std::move(request_grant(again).grant);
}

ClientConn::GrantReply ClientConn::request_grant(const proto::OpenRegion& req) {
    auto box = std::make_shared<GrantBox>();
    auto f = box->promise.get_future();
    std::vector<std::byte> frame;
    const auto rid = requests_.next_id();
    proto::encode(frame, rid, req);
    auto on_reply = [this, box](const proto::Header& h, std::span<const std::byte> b) -> std::error_code {
        auto g = grant_reply(h, b);
        if (g) {
            box->native_refused = g->method == flush::Method::native_flush && !link_.native_flush();
            if (auto applied = apply_grant_locked(*g); !applied) g = applied.error();
        }
        const std::error_code ec = g ? std::error_code{} : g.error().code();
        box->put(std::move(g));
        return ec;
    };
    auto done = [box](Result<void> r) {
        if (!r) box->put(Error(r.error().code(), "open_region: " + r.error().detail()));
    };
    {
        std::lock_guard lock(mu_);
        submit_locked(request_op(std::move(frame), rid, std::move(on_reply), std::move(done), link_.layout().slot_size()));
    }
    if (f.wait_for(opts_.timeout) != std::future_status::ready) {
        close();
        return {Error(errc::io_error, link_.where() + ": open_region timed out; the connection was closed"), false};
    }
    auto g = f.get();
    const bool refused = !g && box->native_refused;
    return {std::move(g), refused};
}

Result<void> ClientConn::apply_grant_locked(const proto::RegionGrant& g) {
    const Flusher* flusher = Flusher::of(g.method);
    if (flusher == nullptr) return Error(errc::io_error, link_.where() + ": the grant names no flush method");
    if (g.rdma_mr.empty()) return Error(errc::io_error, link_.where() + ": the grant carries no memory descriptor");
    RemoteMrHandle mr(api_);
    if (int ret = api_.mr_remote_from_descriptor(g.rdma_mr.data(), g.rdma_mr.size(), mr.out()); ret != 0)
        return call_failure(errc::io_error, link_.where() + ": the grant's memory descriptor", "mr_remote_from_descriptor", ret);
    std::size_t size = 0;
    if (int ret = api_.mr_remote_get_size(mr.get(), &size); ret != 0 || size < g.size)
        return Error(errc::io_error, link_.where() + ": the server registered " + std::to_string(size) +
                                         " bytes for a region of " + std::to_string(g.size));
    if (g.method == flush::Method::read_after_write) {
        if (auto r = apply_peer_cfg_locked(g, mr.get()); !r) return r;
    }
    if (g.method == flush::Method::native_flush) {
        if (auto r = check_native_flush_locked(mr.get()); !r) return r;
    }
    regions_.add(g.id, RemoteRegion{std::move(mr), flusher, g.size});
    return {};
}

Result<void> ClientConn::check_native_flush_locked(RemoteMr* mr) const {
    // This side posts the FLUSH: its queue pair must take one (its RNIC's
    // FLUSH, this build's rdma-core), whatever the server decided.
    if (!link_.native_flush()) {
        auto build = flush::rdma_ability();
        return Error(errc::unsupported,
                     link_.where() + ": the server granted native_flush, but " +
                         (build.native_flush ? std::string("this client's RNIC has no native FLUSH (its queue pair "
                                                           "takes none)")
                                             : build.why_not) +
                         "; open with another method forced (send_flush is always safe), or set "
                         "RPM_NATIVE_FLUSH=no on the server");
    }
    int flush_type = 0;
    if (int ret = api_.mr_remote_get_flush_type(mr, &flush_type); ret != 0 || (flush_type & kUsageFlushPersistent) == 0)
        return Error(errc::unsupported, link_.where() + ": native_flush needs persistent memory, and the server registered "
                                                  "this region without persistent flush (it is not PM: a page-cache "
                                                  "file or tmpfs)");
    return {};
}

Result<void> ClientConn::apply_peer_cfg_locked(const proto::RegionGrant& g, RemoteMr* mr) {
    // The peer configuration belongs to the connection, not the region. Only
    // read_after_write grants apply it, and only one that declares direct
    // write to PMem: a later send_flush grant's "false" must not switch off
    // flush for a region that needs it. Regions of other methods never
    // call flush, so the connection-wide "true" cannot reach them.
    PeerCfgHandle cfg(api_);
    const auto& d = g.rdma_peer_cfg;
    if (int ret = api_.peer_cfg_from_descriptor(d.data(), d.size(), cfg.out()); ret != 0)
        return call_failure(errc::io_error, link_.where() + ": the grant's peer configuration", "peer_cfg_from_descriptor", ret);
    bool direct = false;
    if (int ret = api_.peer_cfg_get_direct_write_to_pmem(cfg.get(), &direct); ret != 0 || !direct)
        return Error(errc::io_error, link_.where() + ": the server granted read_after_write but its peer configuration "
                                              "does not declare direct write to PMem");
    int flush_type = 0;
    if (int ret = api_.mr_remote_get_flush_type(mr, &flush_type);
        ret != 0 || (flush_type & kUsageFlushPersistent) == 0)
        return Error(errc::unsupported, link_.where() + ": read_after_write needs persistent memory, and the server "
                                                  "registered this region without persistent flush (it is not PM: "
                                                  "a page-cache file or tmpfs)");
    if (int ret = api_.conn_apply_remote_peer_cfg(link_.conn(), cfg.get()); ret != 0)
        return call_failure(errc::io_error, link_.where(), "conn_apply_remote_peer_cfg", ret);
    return {};
}

} // namespace rpm::rdma
