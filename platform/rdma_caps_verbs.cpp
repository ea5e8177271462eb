// The libibverbs side of capability detection: find the device by name,
// open it, ask for its extended attributes.
#include "platform/rdma_caps.hpp"

#include <infiniband/verbs.h>

#include <cerrno>
#include <memory>
#include <system_error>

namespace rpm::platform {
namespace {

struct DeviceListFree {
    void operator()(ibv_device** list) const noexcept { ibv_free_device_list(list); }
};
struct ContextClose {
    void operator()(ibv_context* ctx) const noexcept { ibv_close_device(ctx); }
};
using DeviceList = std::unique_ptr<ibv_device*, DeviceListFree>;
using Context = std::unique_ptr<ibv_context, ContextClose>;

Error verbs_error(const std::string& what, int err) {
    return Error(errc::rdma_unavailable, what + ": " + std::generic_category().message(err));
}

ibv_device* find_device(ibv_device** list, int count, const std::string& name) {
    for (int i = 0; i < count; ++i) {
        const char* dev_name = ibv_get_device_name(list[i]);
        if (dev_name != nullptr && name == dev_name) return list[i];
    }
    return nullptr;
}

} // namespace

Result<std::uint64_t> query_device_cap_flags_ex(const std::string& name) {
    int count = 0;
    DeviceList list(ibv_get_device_list(&count));
    if (!list) return verbs_error(name + ": ibv_get_device_list", errno);
    ibv_device* dev = find_device(list.get(), count, name);
    if (dev == nullptr)
        return Error(errc::rdma_unavailable, name + ": not among the " + std::to_string(count) +
                                                 " devices libibverbs lists");
    Context ctx(ibv_open_device(dev));
    if (!ctx) return verbs_error(name + ": ibv_open_device", errno);
    ibv_device_attr_ex attr{};
    // ibv_query_device_ex returns an errno value rather than setting errno
    // (some providers negate it).
    if (const int rc = ibv_query_device_ex(ctx.get(), nullptr, &attr); rc != 0)
        return verbs_error(name + ": ibv_query_device_ex", rc < 0 ? -rc : rc);
    return static_cast<std::uint64_t>(attr.device_cap_flags_ex);
}

} // namespace rpm::platform
