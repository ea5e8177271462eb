// MrPoolUser: the L1 fast path. get() and put() that stay in L1 touch only
// this user's memory and the entry: no lock, no atomic read-modify-write.
#include "mr_pool/pool_state.hpp"
#include "mr_pool/user_cache.hpp"

namespace rpm {

using detail::Level;
using detail::MrEntry;
using detail::MrPoolState;

MrPoolUser::MrPoolUser(std::unique_ptr<State> s) noexcept : s_(std::move(s)) {}
MrPoolUser::MrPoolUser(MrPoolUser&&) noexcept = default;

MrPoolUser& MrPoolUser::operator=(MrPoolUser&& other) noexcept {
    if (this != &other) {
        if (s_) s_->pool->detach(*s_);
        s_ = std::move(other.s_);
    }
    return *this;
}

MrPoolUser::~MrPoolUser() {
    if (s_) s_->pool->detach(*s_);
}

MrBuffer* MrPoolUser::get() noexcept {
    State& u = *s_;
    MrEntry* e = nullptr;
    while (u.l1_count != 0) {
        MrEntry* top = u.l1[--u.l1_count];
        // remove() marked it while it sat here: it must not be handed out.
        if (!top->retiring.load(std::memory_order_relaxed)) [[likely]] {
            top->origin = Level::l1;
            detail::bump(u.counters.l1_hits);
            e = top;
            break;
        }
        --u.owned;
        u.pool->drop(top);
    }
    if (e == nullptr) e = u.pool->get_shared(u);
    if (e == nullptr) return nullptr;
    if (e->background) [[unlikely]] {
        e->background = false;
        detail::bump(u.counters.stalls_avoided);
    }
    return &e->buffer;
}

// The seed's rules: an entry taken from L1 goes back to L1; another one
// joins the L1 only while the user holds fewer L1 entries than its size
// (L1 short after a pool that was empty at create_user) and the pool is
// not short; the rest go to the user's L2 bucket or the global pool.
void MrPoolUser::put(MrBuffer* b) noexcept {
    if (b == nullptr) return;
    State& u = *s_;
    MrEntry* e = MrPoolState::entry_of(b);
    detail::bump(u.counters.puts);
    const bool mine = e->origin == Level::l1;
    if (e->retiring.load(std::memory_order_relaxed)) [[unlikely]] {
        if (mine) --u.owned;
        u.pool->drop(e);
        return;
    }
    const bool short_now = u.give_back.load(std::memory_order_relaxed);
    if (mine && u.l1_count < u.l1_size) [[likely]] {
        u.l1[u.l1_count++] = e;
    } else if (!mine && !short_now && u.owned < u.l1_size) {
        e->origin = Level::l1;
        ++u.owned;
        u.l1[u.l1_count++] = e;
    } else {
        if (mine) --u.owned;
        u.pool->put_shared(u, e);
    }
    if (short_now) [[unlikely]] u.pool->give_back(u);
}

void MrPoolUser::trim() noexcept { s_->pool->trim(*s_); }
std::uint32_t MrPoolUser::bucket() const noexcept { return s_->bucket; }
std::uint32_t MrPoolUser::l1_size() const noexcept { return s_->l1_size; }
std::uint32_t MrPoolUser::l1_free() const noexcept { return s_->l1_count; }

}  // namespace rpm
