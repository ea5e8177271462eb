// MrPoolState: the levels past L1, users joining and leaving, and the
// MrPool operations (see pool_state.hpp).
#include "mr_pool/pool_state.hpp"

#include <algorithm>
#include <string>

namespace rpm::detail {

Result<std::shared_ptr<MrPoolState>> MrPoolState::create(std::unique_ptr<MrRegistrar> registrar,
                                                       const MrPoolOptions& opts) {
    auto state = std::make_shared<MrPoolState>(std::move(registrar), opts);
    if (auto r = state->grow(opts.initial); !r) return r.error();
    state->monitor_.start();
    return state;
}

MrPoolState::MrPoolState(std::unique_ptr<MrRegistrar> registrar, const MrPoolOptions& opts)
    : registrar_(std::move(registrar)),
      opts_(opts),
      device_(registrar_->device()),
      registry_(*registrar_, opts.buffer_size, opts.budget) {
    global_.init(kGlobalHome, 0, std::min<std::size_t>(opts.budget, 4096));
    for (std::uint32_t i = 0; i < opts.l2_buckets; ++i)
        buckets_[i].init(static_cast<std::uint8_t>(i), opts.l2_entries,
                         std::min<std::size_t>(opts.l2_entries, 4096));
}

MrPoolState::~MrPoolState() {
    monitor_.stop();
    registry_.deregister_all();
}

// Pops past retiring entries (MrPool::remove marked them while they were
// on their way here): found now, so deregistered now.
template <class Stack>
MrEntry* MrPoolState::pop_live(Stack& s) noexcept {
    while (MrEntry* e = s.pop()) {
        if (!e->retiring.load(std::memory_order_relaxed)) return e;
        drop(e);
    }
    return nullptr;
}

MrEntry* MrPoolState::get_shared(UserCache& u) noexcept {
    if (MrEntry* e = pop_live(buckets_[u.bucket])) {
        e->origin = Level::l2;
        bump(u.counters.l2_hits);
        return e;
    }
    if (MrEntry* e = pop_live(global_)) {
        e->origin = Level::global;
        bump(u.counters.global_hits);
        if (global_.size() < opts_.low_water) monitor_.poke();  // replenish
        return e;
    }
    // Before calling it a miss (a stall for the caller), look in the other
    // buckets: entries parked there by other connections' bursts are free,
    // and the idle reclaim would only move them to the global pool later.
    if (MrEntry* e = steal(u.bucket)) {
        e->origin = Level::l2;
        bump(u.counters.l2_hits);
        return e;
    }
    bump(u.counters.none_now);
    monitor_.note_miss();
    return nullptr;
}

MrEntry* MrPoolState::steal(std::uint32_t own) noexcept {
    for (std::uint32_t i = 1; i < opts_.l2_buckets; ++i)
        if (MrEntry* e = pop_live(buckets_[(own + i) % opts_.l2_buckets])) return e;
    return nullptr;
}

void MrPoolState::to_global(MrEntry* e, std::optional<Clock::time_point> stamp) noexcept {
    if (global_.push(e, stamp) == Pushed::retiring) drop(e);
    else monitor_.poke();
}

void MrPoolState::put_shared(UserCache& u, MrEntry* e) noexcept {
    const auto now = monitor_.stamp_time();
    switch (buckets_[u.bucket].push(e, now)) {
    case Pushed::ok: monitor_.poke(); return;
    case Pushed::retiring: drop(e); return;
    case Pushed::full: to_global(e, now); return;
    }
}

// Entries l1[from, to) go to the global pool; the rest of L1 closes up.
void MrPoolState::l1_to_global(UserCache& u, std::uint32_t from, std::uint32_t to) noexcept {
    const auto now = monitor_.stamp_time();
    for (std::uint32_t i = from; i < to; ++i) to_global(u.l1[i], now);
    std::copy(u.l1.get() + to, u.l1.get() + u.l1_count, u.l1.get() + from);
    u.l1_count -= to - from;
    u.owned -= to - from;
}

// The pool ran short: keep half of L1 (the connection's minimum set of
// outstanding I/Os) and give the longest unused rest to the global pool.
void MrPoolState::give_back(UserCache& u) noexcept {
    u.give_back.store(false, std::memory_order_relaxed);
    const std::uint32_t keep = u.l1_size / 2;
    if (u.l1_count <= keep) return;
    const std::uint32_t surplus = u.l1_count - keep;
    l1_to_global(u, 0, surplus);
    bump(u.counters.l1_trims, surplus);
}

void MrPoolState::trim(UserCache& u) noexcept {
    l1_to_global(u, 0, u.l1_count);
}

std::uint32_t MrPoolState::pick_bucket() const noexcept {
    std::uint32_t best = 0;
    for (std::uint32_t i = 1; i < opts_.l2_buckets; ++i)
        if (bucket_users_[i] < bucket_users_[best]) best = i;
    return best;
}

void MrPoolState::attach(UserCache& u) {
    {
        std::lock_guard guard(users_mu_);
        u.bucket = pick_bucket();
        ++bucket_users_[u.bucket];
        users_.push_back(&u);
    }
    while (u.l1_count < u.l1_size) {
        MrEntry* e = pop_live(global_);
        if (e == nullptr) break;
        e->origin = Level::l1;
        u.l1[u.l1_count++] = e;
        ++u.owned;
    }
}

void MrPoolState::detach(UserCache& u) noexcept {
    trim(u);
    std::lock_guard guard(users_mu_);
    dead_ += u.counters.load();
    --bucket_users_[u.bucket];
    users_.erase(std::find(users_.begin(), users_.end(), &u));
}

void MrPoolState::request_give_back() noexcept {
    std::lock_guard guard(users_mu_);
    for (UserCache* u : users_) u->give_back.store(true, std::memory_order_relaxed);
}

Result<void> MrPoolState::grow(std::uint32_t n) {
    std::vector<MrEntry*> made;
    if (auto r = registry_.register_new(n, false, false, made); !r) return r;
    const auto now = Clock::now();
    for (MrEntry* e : made) to_global(e, now);
    return {};
}

Result<std::uint32_t> MrPoolState::add(std::span<std::byte> memory) {
    if (reinterpret_cast<std::uintptr_t>(memory.data()) % kPageSize != 0)
        return Error(errc::invalid_argument, "MrPool::add: memory is not page-aligned");
    if (memory.size() < opts_.buffer_size)
        return Error(errc::invalid_argument, "MrPool::add: " + std::to_string(memory.size()) +
                                                 " bytes is less than one entry of " +
                                                 std::to_string(opts_.buffer_size));
    std::vector<MrEntry*> made;
    auto first = registry_.register_external(memory, made);
    const auto now = Clock::now();
    for (MrEntry* e : made) to_global(e, now);
    return first;
}

bool MrPoolState::take_free(MrEntry* e) noexcept {
    if (global_.take(e)) return true;
    const std::uint8_t home = e->home.load(std::memory_order_relaxed);
    return home < opts_.l2_buckets && buckets_[home].take(e);
}

// Marked first, then looked for in the shared stacks under their locks: a
// stack that receives it later refuses it (EntryStack::push), and a holder
// (L1 or out) or the background thread deregisters it when it finds it,
// which may be before this call returns.
Result<void> MrPoolState::remove(std::uint32_t id) {
    MrEntry* e = registry_.find(id);
    if (e == nullptr)
        return Error(errc::invalid_argument, "MrPool::remove: no entry " + std::to_string(id));
    if (e->home.load(std::memory_order_relaxed) == kDead || e->retiring.exchange(true))
        return Error(errc::invalid_argument,
                     "MrPool::remove: entry " + std::to_string(id) + " is already deregistered");
    if (take_free(e)) drop(e);
    return {};
}

MrPoolStats MrPoolState::stats() const {
    MrPoolStats s;
    UserTotals t;
    {
        std::lock_guard guard(users_mu_);
        t = dead_;
        for (const UserCache* u : users_) t += u->counters.load();
        s.users = static_cast<std::uint32_t>(users_.size());
    }
    s.l1_hits = t.l1_hits;
    s.l2_hits = t.l2_hits;
    s.global_hits = t.global_hits;
    s.none_now = t.none_now;
    s.stalls_avoided = t.stalls_avoided;
    s.l1_trims = t.l1_trims;
    const std::uint64_t gets = t.l1_hits + t.l2_hits + t.global_hits;
    s.in_use = gets > t.puts ? static_cast<std::uint32_t>(gets - t.puts) : 0;
    s.registrations = registry_.registrations();
    s.registration_failures = registry_.failures();
    s.deregistrations = registry_.deregistrations();
    // The thread's counts first (acquire): the levels read after them
    // include what they counted.
    s.l2_reclaims = l2_reclaims_.load(std::memory_order_acquire);
    s.idle_deregistered = idle_deregistered_.load(std::memory_order_acquire);
    s.monitor_rounds = monitor_.rounds();
    s.registered = registry_.registered();
    s.free_global = global_.size();
    for (std::uint32_t i = 0; i < opts_.l2_buckets; ++i) s.free_l2 += buckets_[i].size();
    s.budget = opts_.budget;
    s.buffer_size = opts_.buffer_size;
    s.device = device_;
    return s;
}

}  // namespace rpm::detail
