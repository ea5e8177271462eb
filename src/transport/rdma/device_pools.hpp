// What the client connections on one RDMA device share: one peer (the
// protection domain every MR of the device belongs to, since an MR is only
// usable with its own PD), the bounce pool and the message-slot pool.
//
// Process-wide, keyed by the device's ibv_context (rdma_cm opens each
// device once per process and hands every connection the same context).
// The registry holds weak references: the connections on a device keep its
// pools alive, and the last one to go deregisters every entry and deletes
// the peer.
#pragma once

#include "transport/rdma/handles.hpp"

#include <rpm/mr_pool.hpp>

#include <memory>
#include <optional>
#include <string_view>

namespace rpm::rdma {

class DevicePools {
public:
    /// The pools of the device `ctx`, or new ones: peer_new, then each
    /// pool's initial registrations. The options are used only when the pools
    /// are created (by the device's first connection in this process).
    /// ERRORS: errc::rdma_unavailable (peer_new, a registration failed),
    /// errc::invalid_argument (pool options out of range).
    static Result<std::shared_ptr<DevicePools>> acquire(const Api& api, ibv_context* ctx, const MrPoolOptions& bounce,
                                                        const MrPoolOptions& messages, std::string_view where);
    /// The live pools of `ctx`, or null (tests look at them).
    static std::shared_ptr<DevicePools> find(const Api& api, const ibv_context* ctx);

    DevicePools(const DevicePools&) = delete;
    DevicePools& operator=(const DevicePools&) = delete;
    ~DevicePools();

    [[nodiscard]] Peer* peer() const noexcept { return peer_->get(); }
    [[nodiscard]] MrPool& bounce() noexcept { return *bounce_; }
    [[nodiscard]] MrPool& messages() noexcept { return *messages_; }

private:
    DevicePools() = default;
    static Result<std::shared_ptr<DevicePools>> create(const Api& api, ibv_context* ctx, const MrPoolOptions& bounce,
                                                       const MrPoolOptions& messages, std::string_view where);

    // Shared with the pools' registrars, so the peer outlives every MR.
    std::shared_ptr<PeerHandle> peer_;
    std::optional<MrPool> bounce_;
    std::optional<MrPool> messages_;
};

} // namespace rpm::rdma
