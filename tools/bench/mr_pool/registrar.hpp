// A registrar that registers nothing: plain memory stands in for MRs, so
// rpm-bench --mr-pool and rpm-microbench measure the pool's own logic
// (registration is never on the get/put path).
#pragma once

#include <rpm/mr_pool.hpp>

#include <atomic>
#include <cstdint>

namespace rpmbench {

class FakeRegistrar final : public rpm::MrRegistrar {
public:
    /// RETURN VALUE: mem's address as the handle (never null). ERRORS: none.
    rpm::Result<void*> register_memory(std::span<std::byte> mem) override;
    void deregister_memory(void* handle, std::span<std::byte> mem) noexcept override;
    [[nodiscard]] std::string device() const override { return "fake"; }

    /// Registered now (registrations minus deregistrations).
    [[nodiscard]] std::int64_t live() const noexcept { return live_.load(std::memory_order_relaxed); }

private:
    std::atomic<std::int64_t> live_{0};
};

} // namespace rpmbench
