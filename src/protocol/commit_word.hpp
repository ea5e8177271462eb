// The commit-word rule, stated once for every transport and the server.
//
// A persist names slices: a log record's body and, beside it, its commit
// word (docs/replication.md). The word must reach the region whole: a
// reader, or recovery after a crash, sees it old or new, never torn. So a
// slice that is one aligned 8-byte word is a commit word, and whoever
// stores it stores it as one 8-byte store (the server: ServedRegion::store8;
// tcp:// splitting a large persist: an AtomicWrite; rdma://: a native
// atomic write where the device has one), as an AtomicWrite would; any
// other slice is plain bytes.
#pragma once

#include "protocol/protocol.hpp"

#include <cstdint>
#include <cstring>

namespace rpm::proto {

/// A commit word's size and alignment, in bytes.
inline constexpr std::size_t kCommitWordSize = 8;

/// Whether the persist slice `s` is a commit word: one aligned 8-byte word.
[[nodiscard]] inline bool is_commit_word(const Slice& s) noexcept {
    return s.data.size() == kCommitWordSize && s.offset % kCommitWordSize == 0;
}

/// The value of the commit word `s` (is_commit_word(s) must hold), as its
/// bytes lie in memory: stored whole, it leaves the same bytes.
[[nodiscard]] inline std::uint64_t commit_word_value(const Slice& s) noexcept {
    std::uint64_t word = 0;
    std::memcpy(&word, s.data.data(), kCommitWordSize);
    return word;
}

} // namespace rpm::proto
