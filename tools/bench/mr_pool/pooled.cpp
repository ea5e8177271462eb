// The pool scheme: one real rpm::MrPool for the device, one MrPoolUser per
// connection, get/put exactly as a transport would call them.
#include "registrar.hpp"
#include "sim.hpp"

#include <vector>

namespace rpmbench {
namespace {

class PoolScheme final : public MrScheme {
public:
    explicit PoolScheme(rpm::MrPool pool, std::uint32_t l1) : pool_(std::move(pool)), l1_(l1) {}
    ~PoolScheme() override { users_.clear(); }  // users first: they return their L1s to the pool

    std::string_view name() const noexcept override { return "pool"; }

    bool admit() override {
        auto u = pool_.create_user(l1_);
        if (!u) return false;
        users_.push_back(std::move(*u));
        return true;
    }

    std::uintptr_t get(std::uint32_t c) noexcept override {
        return reinterpret_cast<std::uintptr_t>(users_[c].get());
    }

    void put(std::uint32_t c, std::uintptr_t mr) noexcept override {
        users_[c].put(reinterpret_cast<rpm::MrBuffer*>(mr));
    }

    std::uint32_t registered() const noexcept override { return pool_.stats().registered; }
    std::optional<rpm::MrPoolStats> stats() const override { return pool_.stats(); }

private:
    rpm::MrPool pool_;
    std::uint32_t l1_;
    std::vector<rpm::MrPoolUser> users_;
};

} // namespace

// Everything is registered at create(): virtual time runs far ahead of the
// pool's background thread (real time), so growing the pool during a run
// would measure that mismatch, not the pool. What is measured is sharing:
// the same MRs as the static scheme, handed out by the pool. For the same
// reason the real-time idle steps are off (no idle deregistration, no idle
// L2 -> global moves), so a seed gives the same run every time; the
// background thread still reacts to misses (L1 give-back).
rpm::MrPoolOptions pool_options(const MrpModel& m) {
    rpm::MrPoolOptions o;
    o.buffer_size = 4096;  // the size is irrelevant to the count; keep the run light
    o.budget = m.budget;
    o.initial = m.budget;
    o.floor = m.budget;  // no idle deregistration mid-run
    o.l1_entries = m.l1;
    o.l2_buckets = 4;
    o.l2_entries = 32;
    o.idle_time = std::chrono::hours(1);
    return o;
}

rpm::Result<std::unique_ptr<MrScheme>> make_pool_scheme(const MrpModel& m) {
    auto pool = rpm::MrPool::create(std::make_unique<FakeRegistrar>(), pool_options(m));
    if (!pool) return pool.error();
    return std::unique_ptr<MrScheme>(std::make_unique<PoolScheme>(std::move(*pool), m.l1));
}

} // namespace rpmbench
