// BlockCache and its allocator: blocks given back are handed out again,
// only one size and at most kKeep are kept, and a deque over it works.
#include "core/block_cache.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <string>

namespace {

using rpm::BlockCache;
using rpm::BlockCacheAllocator;

TEST(BlockCache, AGivenBackBlockIsHandedOutAgain) {
    BlockCache cache;
    void* a = cache.take(512);
    cache.give(a, 512);
    EXPECT_EQ(cache.take(512), a);  // no operator new: the same block
    cache.give(a, 512);
}

TEST(BlockCache, OnlyTheKeptSizeIsReused) {
    BlockCache cache;
    void* a = cache.take(512);
    cache.give(a, 512);
    void* b = cache.take(64);  // another size: from operator new
    EXPECT_NE(b, a);
    cache.give(b, 64);  // not kept: the cache holds 512-byte blocks
    EXPECT_EQ(cache.take(512), a);
    cache.give(a, 512);
}

TEST(BlockCache, KeepsAtMostKKeepBlocks) {
    BlockCache cache;
    void* blocks[BlockCache::kKeep + 2];
    for (auto& p : blocks) p = cache.take(256);
    for (auto& p : blocks) cache.give(p, 256);  // the last two go back to the heap
    // The kept ones come back last in, first out; then fresh ones.
    for (std::size_t i = 0; i < BlockCache::kKeep; ++i) EXPECT_EQ(cache.take(256), blocks[BlockCache::kKeep - 1 - i]);
    void* fresh = cache.take(256);
    for (std::size_t i = 0; i < BlockCache::kKeep; ++i) cache.give(blocks[i], 256);
    cache.give(fresh, 256);  // over kKeep: deleted (ASan's leak check sees the rest freed by the destructor)
}

TEST(BlockCache, ADequeMovingAlongReusesItsBlocks) {
    struct Big {
        char bytes[200];  // two a block, as rdma::Op
        int n;
    };
    BlockCache cache;
    std::deque<Big, BlockCacheAllocator<Big>> q{BlockCacheAllocator<Big>(cache)};
    for (int i = 0; i < 1000; ++i) {
        q.push_back(Big{{}, i});
        ASSERT_EQ(q.front().n, i);
        q.pop_front();
    }
    EXPECT_TRUE(q.empty());
    // The map and a block or two; without the cache, a block every other push.
    EXPECT_LE(cache.fresh(), 4U);
    // Rebound copies share the cache; allocators over one cache are equal.
    BlockCacheAllocator<std::string> other(q.get_allocator());
    EXPECT_TRUE(other == q.get_allocator());
    BlockCache second;
    EXPECT_FALSE(BlockCacheAllocator<Big>(second) == q.get_allocator());
}

} // namespace
