#include "transport/rdma/mr_registrar.hpp"

namespace rpm::rdma {

RpmaRegistrar::RpmaRegistrar(const Api& api, Peer* peer, int usage, std::string device,
                             std::shared_ptr<const void> keep_alive)
    : api_(api), peer_(peer), usage_(usage), device_(std::move(device)), keep_alive_(std::move(keep_alive)) {}

Result<void*> RpmaRegistrar::register_memory(std::span<std::byte> mem) {
    LocalMr* mr = nullptr;
    if (int ret = api_.mr_reg(peer_, mem.data(), mem.size(), usage_, &mr); ret != 0)
        return call_failure(errc::rdma_unavailable, device_ + ": pool entry of " + std::to_string(mem.size()) + " bytes",
                            "mr_reg", ret);
    return static_cast<void*>(mr);
}

void RpmaRegistrar::deregister_memory(void* handle, std::span<std::byte>) noexcept {
    auto* mr = static_cast<LocalMr*>(handle);
    // ibv_dereg_mr's failure leaves nothing to do better: the verbs layer recorded it.
    if (mr != nullptr) (void)api_.mr_dereg(&mr);
}

std::string device_name(const ibv_context* ctx) {
    if (ctx == nullptr || ctx->device == nullptr || ctx->device->name[0] == '\0') return "rdma";
    return ctx->device->name;
}

} // namespace rpm::rdma
