// The replicated log's on-region format (see replicated_log.hpp): pure
// functions over byte spans, shared by the log, recovery and tests.
#pragma once

#include <rpm/replicated_log.hpp>

#include <cstdint>
#include <optional>
#include <span>

namespace rpm::replication::log {

inline constexpr std::uint64_t kMagic = 0x31304C4F474D5052ull;  // "RPMLOG01"
inline constexpr std::uint64_t kCommitFlag = 1ull << 31;

struct LogHeader {
    std::uint64_t generation = 0;
    std::uint64_t capacity = 0;
};

std::optional<LogHeader> read_header(std::span<const std::byte> slice) noexcept;
std::array<std::byte, ReplicatedLog::kHeaderSize> encode_header(const LogHeader& h) noexcept;

std::uint32_t crc(std::uint64_t generation, std::uint64_t index, std::span<const std::byte> payload) noexcept;
std::uint64_t commit_word(std::uint32_t crc, std::uint32_t length) noexcept;
/// Bytes a record of `length` takes, commit word and padding included.
std::uint64_t record_size(std::uint64_t length) noexcept;

/// The record at `position` if it is whole and has the expected index.
std::optional<LogRecord> record_at(std::span<const std::byte> slice, std::uint64_t generation,
                                   std::uint64_t position, std::uint64_t index) noexcept;

/// Walk the valid chain; fn returns false to stop. Returns the position
/// after the last valid record and how many there were.
struct ChainEnd {
    std::uint64_t position = 0;
    std::uint64_t records = 0;
};
ChainEnd walk(std::span<const std::byte> slice, const std::function<bool(const LogRecord&)>& fn);

} // namespace rpm::replication::log
