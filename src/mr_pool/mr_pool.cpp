// MrPool: option checks and the public face of MrPoolState.
#include "mr_pool/pool_state.hpp"
#include "mr_pool/user_cache.hpp"

#include <algorithm>
#include <string>

namespace rpm {
namespace {

using detail::MrPoolState;

Error bad_option(const char* name, const std::string& why) {
    return Error(errc::invalid_argument, std::string("MrPoolOptions::") + name + " " + why);
}

Result<void> check(const MrPoolOptions& o) {
    if (o.buffer_size == 0) return bad_option("buffer_size", "is 0");
    if (o.buffer_size > (std::size_t{1} << 40)) return bad_option("buffer_size", "is above 1 TiB");
    if (o.l2_buckets < 4 || o.l2_buckets > detail::kMaxBuckets)
        return bad_option("l2_buckets", "is " + std::to_string(o.l2_buckets) + ", not 4 to 8");
    if (o.budget == 0) return bad_option("budget", "is 0");
    if (o.initial > o.budget)
        return bad_option("initial", std::to_string(o.initial) + " is above the budget");
    if (o.floor > o.budget) return bad_option("floor", std::to_string(o.floor) + " is above the budget");
    if (o.l1_entries == 0) return bad_option("l1_entries", "is 0");
    if (o.l2_entries == 0) return bad_option("l2_entries", "is 0");
    if (o.monitor_interval.count() <= 0) return bad_option("monitor_interval", "is not positive");
    if (o.idle_time.count() < 0) return bad_option("idle_time", "is negative");
    return {};
}

}  // namespace

Result<MrPool> MrPool::create(std::unique_ptr<MrRegistrar> registrar, MrPoolOptions opts) {
    if (!registrar) return Error(errc::invalid_argument, "MrPool::create: no registrar");
    if (auto r = check(opts); !r) return r.error();
    opts.buffer_size = (opts.buffer_size + detail::kPageSize - 1) / detail::kPageSize * detail::kPageSize;
    auto state = MrPoolState::create(std::move(registrar), opts);
    if (!state) return state.error();
    return MrPool(std::move(*state));
}

MrPool::MrPool(std::shared_ptr<detail::MrPoolState> state) noexcept : state_(std::move(state)) {}
MrPool::MrPool(MrPool&&) noexcept = default;
MrPool& MrPool::operator=(MrPool&&) noexcept = default;
MrPool::~MrPool() = default;

Result<MrPoolUser> MrPool::create_user(std::uint32_t l1_entries) {
    if (l1_entries > state_->options().budget)
        return Error(errc::invalid_argument, "MrPool::create_user: " + std::to_string(l1_entries) +
                                                 " L1 entries is above the budget");
    // The default is held to the budget too (an L1 larger than the pool
    // could never fill): clamped, since the default suits most budgets.
    if (l1_entries == 0) l1_entries = std::min(state_->options().l1_entries, state_->options().budget);
    auto state = std::make_unique<MrPoolUser::State>(state_, l1_entries);
    state_->attach(*state);
    return MrPoolUser(std::move(state));
}

Result<void> MrPool::grow(std::uint32_t n) { return state_->grow(n); }
Result<std::uint32_t> MrPool::add(std::span<std::byte> memory) { return state_->add(memory); }
Result<void> MrPool::remove(std::uint32_t id) { return state_->remove(id); }
MrPoolStats MrPool::stats() const { return state_->stats(); }
const MrPoolOptions& MrPool::options() const noexcept { return state_->options(); }

}  // namespace rpm
