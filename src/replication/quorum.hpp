// The arithmetic of durability: pure functions, unit-tested on their own.
#pragma once

#include <rpm/replication.hpp>

#include <vector>

namespace rpm::replication {

// needed_members is public (replication.hpp).
using rpm::needed_members;

/// The highest LSN that at least `needed` of `frontiers` have reached
/// (the needed-th largest); 0 when there are fewer than `needed`.
Lsn kth_frontier(std::vector<Lsn> frontiers, unsigned needed);

/// Members that must be reachable at open so that every committed write is
/// on one of them: a read quorum, members - needed + 1.
unsigned read_quorum(unsigned members, unsigned needed) noexcept;

} // namespace rpm::replication
