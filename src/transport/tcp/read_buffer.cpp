#include "transport/tcp/read_buffer.hpp"

#include <rpm/client.hpp>

#include <mutex>

namespace rpm::tcp {
namespace {

struct ReadPool {
    std::once_flag once;
    std::optional<MrPool> pool;
};

ReadPool& read_pool_state() {
    // Lives until exit: tcp:// connections come and go, and a pool per
    // connection burst would register and deregister every time.
    static ReadPool p;
    return p;
}

std::optional<MrPool> make_read_pool() {
    const MrPoolOptions o = read_pool_options();
    if (auto pool = MrPool::create(mr_registrar_pinned(), o)) return std::move(*pool);
    // mlock refused up front (RLIMIT_MEMLOCK): start empty; the pool's
    // thread keeps trying and connections read into heap buffers meanwhile.
    MrPoolOptions empty = o;
    empty.initial = 0;
    empty.floor = 0;
    if (auto pool = MrPool::create(mr_registrar_pinned(), empty)) return std::move(*pool);
    return std::nullopt;
}

} // namespace

MrPoolOptions read_pool_options() {
    MrPoolOptions o;
    o.buffer_size = kReadBufferSize;
    o.budget = 64;
    o.initial = 4;
    o.floor = 4;
    o.low_water = 2;
    o.replenish_batch = 4;
    o.l1_entries = 1;
    o.l2_buckets = 4;
    o.l2_entries = 4;
    o.idle_time = std::chrono::milliseconds(1000);
    // Nothing waits on this pool (a miss falls back to the heap): a slow
    // tick costs a process that uses tcp:// nothing.
    o.monitor_interval = std::chrono::milliseconds(10);
    return o;
}

MrPool* read_pool() {
    auto& p = read_pool_state();
    std::call_once(p.once, [&p] { p.pool = make_read_pool(); });
    return p.pool ? &*p.pool : nullptr;
}

ReadBuffer::ReadBuffer() {
    if (MrPool* pool = read_pool()) {
        if (auto user = pool->create_user(1)) {
            user_.emplace(std::move(*user));
            entry_ = user_->get();
        }
    }
    if (entry_ != nullptr) {
        data_ = entry_->data();
        return;
    }
    heap_ = std::make_unique_for_overwrite<std::byte[]>(kReadBufferSize);
    data_ = heap_.get();
}

ReadBuffer::~ReadBuffer() {
    if (entry_ != nullptr) user_->put(entry_);
}

} // namespace rpm::tcp

namespace rpm {

std::optional<MrPoolStats> tcp_buffer_pool_stats() {
    MrPool* pool = tcp::read_pool();
    if (pool == nullptr) return std::nullopt;
    return pool->stats();
}

} // namespace rpm
