// BlockCacheAllocator: an allocator that keeps a few freed blocks of the
// last size it handed out, for a container that allocates and frees the
// same size over and over (std::deque's blocks, as a queue moves along).
//
// A std::deque whose elements are a few hundred bytes holds only two per
// block: a queue with one operation in flight allocated a block on every
// other push and freed it on the pop after (rdma::OpQueue, one malloc and
// one free per read). With the cache the steady state allocates nothing.
// The cache belongs to the container's owner and must outlive it.
#pragma once

#include <cstddef>
#include <memory>
#include <new>

namespace rpm {

/// Up to kKeep freed blocks of one size, reused before operator new.
class BlockCache {
public:
    static constexpr std::size_t kKeep = 4;

    BlockCache() = default;
    BlockCache(const BlockCache&) = delete;
    BlockCache& operator=(const BlockCache&) = delete;
    ~BlockCache() {
        for (std::size_t i = 0; i < kept_; ++i) ::operator delete(blocks_[i], bytes_);
    }

    [[nodiscard]] void* take(std::size_t bytes) {
        if (kept_ > 0 && bytes == bytes_) return blocks_[--kept_];
        ++fresh_;
        return ::operator new(bytes);
    }
    void give(void* p, std::size_t bytes) noexcept {
        // Only one size is kept: the first one given back, or again once
        // the cache has run empty (a container's blocks are all one size).
        if (kept_ == 0) bytes_ = bytes;
        if (bytes == bytes_ && kept_ < kKeep) {
            blocks_[kept_++] = p;
            return;
        }
        ::operator delete(p, bytes);
    }

    /// Blocks that came from operator new (for tests and counters).
    [[nodiscard]] std::size_t fresh() const noexcept { return fresh_; }

private:
    void* blocks_[kKeep] = {};
    std::size_t fresh_ = 0;
    std::size_t kept_ = 0;
    std::size_t bytes_ = 0;
};

/// A std allocator over a BlockCache (not thread-safe: one container, used
/// under its owner's lock). Rebound copies share the cache.
template <class T>
class BlockCacheAllocator {
public:
    using value_type = T;

    explicit BlockCacheAllocator(BlockCache& cache) noexcept : cache_(&cache) {}
    template <class U>
    BlockCacheAllocator(const BlockCacheAllocator<U>& other) noexcept : cache_(other.cache()) {}

    [[nodiscard]] T* allocate(std::size_t n) { return static_cast<T*>(cache_->take(n * sizeof(T))); }
    void deallocate(T* p, std::size_t n) noexcept { cache_->give(p, n * sizeof(T)); }

    [[nodiscard]] BlockCache* cache() const noexcept { return cache_; }
    template <class U>
    bool operator==(const BlockCacheAllocator<U>& other) const noexcept {
        return cache_ == other.cache();
    }

private:
    BlockCache* cache_;
};

} // namespace rpm
