// rpm::ReplicatedLog: an append-only log of records in a slice of a
// Replicator's data area, so every record lands on the replicas too.
//
// Format (docs/replication.md): a 64-byte log header (magic, generation,
// capacity), then records, each 8-byte aligned:
//   [commit word: u64][index: u64][payload][padding to 8]
// The commit word is (crc32c << 32) | (length | 1 << 31), the CRC taken over
// the generation, the index and the payload. append() writes the index and
// payload first and the commit word after, with an 8-byte atomic write, so a
// reader finds either no record or a whole one: a crash that persisted the
// commit word but not the body (stores may reach PM out of order) is caught
// by the CRC, and the scan ends there. The generation is random per format,
// so a reused region never shows an old log's records.
#pragma once

#include <rpm/export.hpp>
#include <rpm/replication.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <span>

RPM_API_BEGIN

namespace rpm {

struct LogRecord {
    std::uint64_t index = 0;     ///< 1, 2, 3, ... in append order
    std::uint64_t position = 0;  ///< byte offset of the record in the log slice
    std::span<const std::byte> payload;
};

struct LogAppend {
    std::uint64_t index = 0;
    std::uint64_t position = 0;
    Lsn lsn = 0;  ///< durable on the quorum once frontier(quorum) >= lsn
};

class ReplicatedLog {
public:
    static constexpr std::size_t kHeaderSize = 64;
    static constexpr std::size_t kRecordOverhead = 16;
    static constexpr std::uint32_t kMaxPayload = (1u << 31) - 1;

    /// Open the log in [offset, offset + length) of `r`'s data area, or
    /// format it there (through the replicator, committed) when that slice
    /// holds no log. The log shares `r`'s state, as a RemoteRegion shares
    /// its connection: it keeps working when `r` is moved or destroyed, and
    /// the replicator's connections and threads last until both are gone
    /// (replicator() reaches it).
    /// The slice is read from the local copy (as recovery left it): a slice
    /// without the log magic, or with generation 0, is formatted anew.
    /// RETURN VALUE: the log, its tail after the last valid record.
    /// ERRORS: errc::invalid_argument (slice outside the data area, not
    /// 8-byte aligned, or smaller than a header and one record); errc::bad_size
    /// (a log formatted with another length); the errors of commit().
    /// "Smaller than a header and one record": under 88 bytes (the header,
    /// an empty record and the zero word after it). Formatting writes and
    /// commits through the replicator: errc::fenced (Replicator::write or
    /// commit), errc::quorum_lost (commit; the header stays in the local
    /// copy, so a later open finds the log there and does not commit it
    /// again: the next successful commit covers it).
    static Result<ReplicatedLog> open(Replicator& r, std::uint64_t offset, std::uint64_t length);

    /// Append a record; durable once a commit covers its LSN.
    /// The log is not thread-safe: one append at a time per log.
    /// RETURN VALUE: the record's index, position and LSN.
    /// ERRORS: errc::bad_size (payload over kMaxPayload, or the log is full:
    /// detail gives the space left); the errors of Replicator::write.
    /// That is errc::fenced (Replicator::write or atomic_write; the range is
    /// always inside the data area); nothing is appended then. A payload
    /// over about 1 MiB fails tcp:// replicas, as Replicator::write says.
    Result<LogAppend> append(std::span<const std::byte> payload);
    /// append + Replicator::commit: returns once the record is durable per
    /// the replicator's policy. Sent as one vectored Replicator::persist
    /// (the body and its commit word in one request per member).
    /// RETURN VALUE: the record's index, position and LSN, durable per the
    /// policy.
    /// ERRORS: errc::bad_size, as append (nothing is written); the errors of
    /// Replicator::persist: errc::quorum_lost (the record is in the local
    /// copy and stays appended; it may be durable on some members);
    /// errc::fenced. On either of these the log moves its tail past the
    /// record, also when Replicator::persist refused before writing it
    /// (errc::fenced).
    Result<LogAppend> append_durable(std::span<const std::byte> payload);

    /// Empty the log: format its slice anew (a new generation, committed),
    /// so no member shows its records any more, and the space is reused
    /// from the start. For a log whose contents are no longer needed (a
    /// file it mirrored was deleted).
    /// RETURN VALUE: the LSN of the commit that made the empty log durable
    /// per the replicator's policy.
    /// ERRORS: the errors of Replicator::write and commit: errc::fenced
    /// (nothing changed), errc::quorum_lost (the local copy holds the empty
    /// log and this object is empty; some members may still show the old
    /// records until a later commit covers the write).
    Result<Lsn> reset();

    /// Records in order from the local copy, stopping at the first that is
    /// missing or fails its CRC. fn returns false to stop early.
    /// RETURN VALUE: none. ERRORS: none.
    void for_each(const std::function<bool(const LogRecord&)>& fn) const;
    /// RETURN VALUE: the records found at open plus those appended since
    /// (failed append_durable calls included). ERRORS: none.
    [[nodiscard]] std::uint64_t records() const noexcept;  ///< appended (valid) records
    /// RETURN VALUE: the position of the next record. ERRORS: none.
    [[nodiscard]] std::uint64_t used() const noexcept;     ///< bytes, header included
    /// RETURN VALUE: the slice's length, as open was given it. ERRORS: none.
    [[nodiscard]] std::uint64_t capacity() const noexcept;
    /// RETURN VALUE: the log's random generation (never 0), from its
    /// header. ERRORS: none.
    [[nodiscard]] std::uint64_t generation() const noexcept;
    /// RETURN VALUE: a handle to the replicator open was given (the same
    /// state: its status, commits and waits). ERRORS: none.
    [[nodiscard]] Replicator& replicator() noexcept { return r_; }

    /// For ReplicatorOptions::recovery_rank: the end of the valid record
    /// chain in `slice` (a log slice of some member's data area); 0 when it
    /// holds no log. Longer valid chain = more advanced member.
    /// RETURN VALUE: that position (kHeaderSize for a log without records).
    /// ERRORS: none.
    static std::uint64_t rank(std::span<const std::byte> slice) noexcept;
    /// The same for a log at [offset, offset + length) of `data_area`,
    /// which may be cut short (recovery_rank gets the data area up to the
    /// high-water mark): ranks what is there.
    /// RETURN VALUE: as rank(slice); 0 when offset is at or past the end of
    /// `data_area`. ERRORS: none.
    static std::uint64_t rank(std::span<const std::byte> data_area, std::uint64_t offset, std::uint64_t length) noexcept;
    /// The record at `position` of a log slice (as LogAppend::position or
    /// LogRecord::position gave it), validated like a scan validates it
    /// (commit word, index, CRC); nullopt when there is none.
    /// RETURN VALUE: the record, its payload a view into `slice`; nullopt
    /// also for no log header, a position that is unaligned, inside the
    /// header or past the end. ERRORS: none.
    static std::optional<LogRecord> record_at(std::span<const std::byte> slice, std::uint64_t position) noexcept;
    /// Every valid record of a log slice (e.g. a replica's region opened
    /// after the primary was lost). An empty vector when no log is there.
    /// RETURN VALUE: the records in order, payloads viewing `slice`.
    /// ERRORS: none.
    static std::vector<LogRecord> scan(std::span<const std::byte> slice);

private:
    ReplicatedLog(const Replicator& r, std::uint64_t offset, std::uint64_t length) noexcept
        : r_(Replicator(r.impl_)), offset_(offset), length_(length) {}
    struct RPM_INTERNAL Encoded;
    /// A fresh header with a new generation, written and committed.
    Result<Lsn> format();
    /// The next record's bytes, or errc::bad_size.
    [[nodiscard]] Result<Encoded> encode(std::span<const std::byte> payload) const;
    /// The record is in the local copy: move the tail past it.
    LogAppend advance(const Encoded& e, Lsn lsn);
    Replicator r_;  ///< shares the state of the one open was given
    std::uint64_t offset_ = 0;
    std::uint64_t length_ = 0;
    std::uint64_t generation_ = 0;
    std::uint64_t tail_ = 0;     ///< position of the next record
    std::uint64_t records_ = 0;
};

} // namespace rpm

RPM_API_END
