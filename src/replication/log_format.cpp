// The log format: CRC32C (Castagnoli, as iSCSI and ext4 use),
// little-endian words at 8-byte aligned positions.
#include "replication/log_format.hpp"

#include "core/crc32c.hpp"

#include <array>
#include <cstring>

namespace rpm::replication::log {
namespace {

std::uint64_t load64(std::span<const std::byte> s, std::uint64_t off) noexcept {
    std::uint64_t v;
    std::memcpy(&v, s.data() + off, 8);
    return v;
}

} // namespace

std::optional<LogHeader> read_header(std::span<const std::byte> slice) noexcept {
    if (slice.size() < ReplicatedLog::kHeaderSize || load64(slice, 0) != kMagic) return std::nullopt;
    LogHeader h{load64(slice, 8), load64(slice, 16)};
    if (h.generation == 0) return std::nullopt;
    return h;
}

std::array<std::byte, ReplicatedLog::kHeaderSize> encode_header(const LogHeader& h) noexcept {
    std::array<std::byte, ReplicatedLog::kHeaderSize> out{};
    std::memcpy(out.data(), &kMagic, 8);
    std::memcpy(out.data() + 8, &h.generation, 8);
    std::memcpy(out.data() + 16, &h.capacity, 8);
    return out;
}

std::uint32_t crc(std::uint64_t generation, std::uint64_t index, std::span<const std::byte> payload) noexcept {
    // In host byte order, as the first logs were written: regions already
    // on PM must keep verifying (log_format_test pins the values).
    std::array<std::byte, 20> fields;
    const auto length = static_cast<std::uint32_t>(payload.size());
    std::memcpy(fields.data(), &generation, 8);
    std::memcpy(fields.data() + 8, &index, 8);
    std::memcpy(fields.data() + 16, &length, 4);
    return rpm::detail::crc32c_extend(rpm::detail::crc32c(fields), payload);
}

std::uint64_t commit_word(std::uint32_t crc, std::uint32_t length) noexcept {
    return (static_cast<std::uint64_t>(crc) << 32) | kCommitFlag | length;
}

std::uint64_t record_size(std::uint64_t length) noexcept {
    return ReplicatedLog::kRecordOverhead + (length + 7) / 8 * 8;
}

std::optional<LogRecord> record_at(std::span<const std::byte> slice, std::uint64_t generation,
                                   std::uint64_t position, std::uint64_t index) noexcept {
    if (position + ReplicatedLog::kRecordOverhead > slice.size()) return std::nullopt;
    const std::uint64_t word = load64(slice, position);
    if ((word & kCommitFlag) == 0) return std::nullopt;
    const std::uint64_t length = word & (kCommitFlag - 1);
    if (record_size(length) > slice.size() - position) return std::nullopt;
    if (load64(slice, position + 8) != index) return std::nullopt;
    auto payload = slice.subspan(position + ReplicatedLog::kRecordOverhead, length);
    if (crc(generation, index, payload) != static_cast<std::uint32_t>(word >> 32)) return std::nullopt;
    return LogRecord{index, position, payload};
}

ChainEnd walk(std::span<const std::byte> slice, const std::function<bool(const LogRecord&)>& fn) {
    auto h = read_header(slice);
    if (!h) return {};
    slice = slice.first(std::min<std::uint64_t>(slice.size(), h->capacity));
    ChainEnd end{ReplicatedLog::kHeaderSize, 0};
    while (auto r = record_at(slice, h->generation, end.position, end.records + 1)) {
        end.position += record_size(r->payload.size());
        ++end.records;
        if (fn && !fn(*r)) break;
    }
    return end;
}

} // namespace rpm::replication::log
