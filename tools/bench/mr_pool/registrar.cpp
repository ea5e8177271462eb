#include "registrar.hpp"

namespace rpmbench {

rpm::Result<void*> FakeRegistrar::register_memory(std::span<std::byte> mem) {
    live_.fetch_add(1, std::memory_order_relaxed);
    return static_cast<void*>(mem.data());
}

void FakeRegistrar::deregister_memory(void*, std::span<std::byte>) noexcept {
    live_.fetch_sub(1, std::memory_order_relaxed);
}

} // namespace rpmbench
