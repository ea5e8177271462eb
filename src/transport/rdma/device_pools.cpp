#include "transport/rdma/device_pools.hpp"

#include "transport/rdma/buffers.hpp"
#include "transport/rdma/mr_registrar.hpp"

#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace rpm::rdma {
namespace {

// The Api is part of the key: a test's fake context must never find a
// real device's pools (or another test's, at a reused address).
using Key = std::pair<const Api*, const ibv_context*>;

struct Registry {
    std::mutex mu;
    std::map<Key, std::weak_ptr<DevicePools>> devices;
};

Registry& registry() {
    static Registry r;
    return r;
}

Result<MrPool> make_pool(const Api& api, const std::shared_ptr<PeerHandle>& peer, const ibv_context* ctx,
                         int usage, const MrPoolOptions& opts, std::string_view what) {
    auto reg = std::make_unique<RpmaRegistrar>(api, peer->get(), usage, device_name(ctx), peer);
    auto pool = MrPool::create(std::move(reg), opts);
    if (!pool) return Error(pool.error().code(), std::string(what) + ": " + pool.error().detail());
    return pool;
}

} // namespace

DevicePools::~DevicePools() {
    // The pools deregister their entries first; then the last reference to
    // the peer (ours, or a registrar's) deletes it.
    messages_.reset();
    bounce_.reset();
}

Result<std::shared_ptr<DevicePools>> DevicePools::create(const Api& api, ibv_context* ctx, const MrPoolOptions& bounce,
                                                         const MrPoolOptions& messages, std::string_view where) {
    std::shared_ptr<DevicePools> d(new DevicePools());
    d->peer_ = std::make_shared<PeerHandle>(api);
    if (int ret = api.peer_new(ctx, d->peer_->out()); ret != 0)
        return call_failure(errc::rdma_unavailable, where, "peer_new", ret);
    auto b = make_pool(api, d->peer_, ctx, kBounceUsage, bounce, std::string(where) + ": bounce pool");
    if (!b) return b.error();
    d->bounce_.emplace(std::move(*b));
    auto m = make_pool(api, d->peer_, ctx, kMessageUsage, messages, std::string(where) + ": message pool");
    if (!m) return m.error();
    d->messages_.emplace(std::move(*m));
    return d;
}

Result<std::shared_ptr<DevicePools>> DevicePools::acquire(const Api& api, ibv_context* ctx, const MrPoolOptions& bounce,
                                                          const MrPoolOptions& messages, std::string_view where) {
    auto& r = registry();
    // Held while creating: two first connections must not make two peers.
    std::lock_guard lock(r.mu);
    std::erase_if(r.devices, [](const auto& kv) { return kv.second.expired(); });
    const Key key{&api, ctx};
    if (auto it = r.devices.find(key); it != r.devices.end())
        if (auto live = it->second.lock()) return live;
    auto d = create(api, ctx, bounce, messages, where);
    if (!d) return d.error();
    r.devices[key] = *d;
    return d;
}

std::shared_ptr<DevicePools> DevicePools::find(const Api& api, const ibv_context* ctx) {
    auto& r = registry();
    std::lock_guard lock(r.mu);
    auto it = r.devices.find(Key{&api, ctx});
    return it == r.devices.end() ? nullptr : it->second.lock();
}

} // namespace rpm::rdma
