// mr_registrar_pinned(): "registration" for the TCP transport is pinning
// the pages with mlock(2), so pinned memory is bounded and accounted the
// way MRs are on an RNIC (and RLIMIT_MEMLOCK plays the device's budget).
#include <rpm/mr_pool.hpp>

#include <sys/mman.h>
#include <sys/resource.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace rpm {
namespace {

std::string memlock_limit() {
    rlimit lim{};
    if (::getrlimit(RLIMIT_MEMLOCK, &lim) != 0) return "unknown";
    if (lim.rlim_cur == RLIM_INFINITY) return "unlimited";
    return std::to_string(lim.rlim_cur) + " bytes";
}

class PinnedRegistrar final : public MrRegistrar {
public:
    Result<void*> register_memory(std::span<std::byte> mem) override {
        if (::mlock(mem.data(), mem.size()) == 0) return static_cast<void*>(mem.data());
        const int err = errno;
        const std::string what = "mlock of " + std::to_string(mem.size()) + " bytes: ";
        if (err == EPERM || err == ENOMEM)
            return Error(errc::permission_denied,
                         what + std::strerror(err) + " (RLIMIT_MEMLOCK is " + memlock_limit() +
                             "; raise it with ulimit -l or grant CAP_IPC_LOCK)");
        return Error(errc::io_error, what + std::strerror(err));
    }

    void deregister_memory(void*, std::span<std::byte> mem) noexcept override {
        ::munlock(mem.data(), mem.size());
    }

    [[nodiscard]] std::string device() const override { return "pinned"; }
};

}  // namespace

std::unique_ptr<MrRegistrar> mr_registrar_pinned() { return std::make_unique<PinnedRegistrar>(); }

}  // namespace rpm
