// rpm-kvstore's Redis command table (examples/kvstore/redis_commands.hpp):
// where each command's keys are, which the service prefetches before a
// read's commands run.
#include "redis_commands.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using Args = std::vector<std::string>;

void expect_keys(const Args& a, std::size_t first, std::size_t last, std::size_t step) {
    const auto k = kvnode::key_positions(a);
    EXPECT_EQ(k.first, first) << a[0];
    EXPECT_EQ(k.last, last) << a[0];
    EXPECT_EQ(k.step, step) << a[0];
}

TEST(KeyPositions, AsRedisCommandGivesThem) {
    expect_keys({"SET", "k", "v"}, 1, 1, 1);
    expect_keys({"set", "k", "v"}, 1, 1, 1);  // any case, as execute takes it
    expect_keys({"GET", "k"}, 1, 1, 1);
    expect_keys({"DEL", "a", "b", "c"}, 1, 3, 1);
    expect_keys({"EXISTS", "a"}, 1, 1, 1);
    expect_keys({"MGET", "a", "b"}, 1, 2, 1);
    expect_keys({"MSET", "a", "1", "b", "2"}, 1, 3, 2);
}

TEST(KeyPositions, NoneForOtherCommandsUnknownOnesAndTheWrongArity) {
    for (const Args& a : {Args{"PING", "x"}, Args{"DBSIZE"}, Args{"CONFIG", "GET", "save"}, Args{"NOPE", "k"},
                          Args{"GET"}, Args{"GET", "a", "b"}, Args{"SET", "k"}, Args{}})
        EXPECT_EQ(kvnode::key_positions(a).step, 0u) << (a.empty() ? "(none)" : a[0]);
}

} // namespace
