// MrRegistrar for RDMA: mr_reg / mr_dereg with one peer (its
// protection domain), so an MrPool's entries are real MRs of one device.
#pragma once

#include "transport/rdma/api.hpp"

#include <rpm/mr_pool.hpp>

#include <memory>
#include <string>

namespace rpm::rdma {

class RpmaRegistrar final : public MrRegistrar {
public:
    /// `keep_alive` owns the peer (or is null when the caller destroys the
    /// pool before the peer): the pool deregisters its entries, from its
    /// background thread or its destructor, before the peer may go.
    RpmaRegistrar(const Api& api, Peer* peer, int usage, std::string device,
                  std::shared_ptr<const void> keep_alive = nullptr);

    /// mr_reg(peer, mem, usage). RETURN VALUE: the LocalMr*.
    /// ERRORS: errc::rdma_unavailable naming the rdma-core error.
    Result<void*> register_memory(std::span<std::byte> mem) override;
    /// mr_dereg of the handle register_memory returned.
    void deregister_memory(void* handle, std::span<std::byte> mem) noexcept override;
    /// The ibv device's name ("rxe0"), or "rdma" when it has none.
    [[nodiscard]] std::string device() const override { return device_; }

private:
    const Api& api_;
    Peer* peer_;
    int usage_;
    std::string device_;
    std::shared_ptr<const void> keep_alive_;
};

/// The device name of an ibv context, or "rdma".
std::string device_name(const ibv_context* ctx);

} // namespace rpm::rdma
