// The ranges a native flush names on the wire: one FLUSH per range, after
// joining those that overlap or touch (a log record and its commit word)
// and dropping empty ones. Shared by the client's native flusher
// (flusher.cpp) and the persistence model's native cell
// (tests/support/pm_model_crash.cpp), which must flush what the wire does.
#pragma once

#include "protocol/protocol.hpp"

#include <span>

namespace rpm::rdma {

/// `in`'s non-empty ranges, sorted by offset, overlapping and adjacent ones
/// joined, written into `out` (at least as long as `in`).
/// RETURN VALUE: the part of `out` used (empty when every range is empty).
std::span<proto::Range> merge_flush_ranges(std::span<const proto::Range> in, std::span<proto::Range> out) noexcept;

} // namespace rpm::rdma
