// rpm::ReplicatedLog: records written through the replicator, each made
// visible by an 8-byte atomic commit word written after its body.
#include "replication/log_format.hpp"

#include <openssl/rand.h>

#include <cstring>

namespace rpm {

namespace fmt = replication::log;

Result<ReplicatedLog> ReplicatedLog::open(Replicator& r, std::uint64_t offset, std::uint64_t length) {
    if (offset % 8 != 0 || length % 8 != 0 || offset > r.size() || length > r.size() - offset)
        return Error(errc::invalid_argument, "log slice [" + std::to_string(offset) + ", +" + std::to_string(length) +
                                                 ") must be 8-byte aligned and inside the data area (" +
                                                 std::to_string(r.size()) + " bytes)");
    if (length < kHeaderSize + kRecordOverhead + 8)
        return Error(errc::invalid_argument, "log slice of " + std::to_string(length) + " bytes is too small");
    ReplicatedLog log(r, offset, length);
    auto slice = r.data().subspan(offset, length);
    auto h = fmt::read_header(slice);
    if (h && h->capacity != length)
        return Error(errc::bad_size, "the log there was formatted with " + std::to_string(h->capacity) +
                                         " bytes, not " + std::to_string(length));
    if (!h) {
        if (auto f = log.format(); !f) return f.error();
        h = fmt::LogHeader{log.generation_, length};
    }
    log.generation_ = h->generation;
    const auto end = fmt::walk(slice, nullptr);
    log.tail_ = end.position;
    log.records_ = end.records;
    return log;
}

// A new random generation in a header written and committed through the
// replicator: records of any earlier log there no longer validate (their
// CRCs include the generation) and the first commit word is zero.
Result<Lsn> ReplicatedLog::format() {
    fmt::LogHeader fresh{0, length_};
    while (fresh.generation == 0 || fresh.generation == generation_)
        if (RAND_bytes(reinterpret_cast<unsigned char*>(&fresh.generation), 8) != 1) std::abort();
    const auto raw = fmt::encode_header(fresh);
    // The first record's commit word is zeroed with the header: a reused
    // region must not show a record there.
    std::array<std::byte, kHeaderSize + 8> first{};
    std::memcpy(first.data(), raw.data(), raw.size());
    if (auto w = r_.write(offset_, first); !w) return w.error();
    generation_ = fresh.generation;  // the local copy holds it from here
    return r_.commit();
}

Result<Lsn> ReplicatedLog::reset() {
    const auto before = generation_;
    auto f = format();
    if (generation_ != before) {
        tail_ = kHeaderSize;
        records_ = 0;
    }
    return f;
}

// A record's bytes: the body (index, payload, padding, then the next
// record's zero commit word: all of it lands before this record's commit
// word) and the commit word.
struct ReplicatedLog::Encoded {
    std::vector<std::byte> body;
    std::uint64_t word = 0;
    std::uint64_t size = 0;
    std::uint64_t index = 0;
};

Result<ReplicatedLog::Encoded> ReplicatedLog::encode(std::span<const std::byte> payload) const {
    if (payload.size() > kMaxPayload) return Error(errc::bad_size, "record of " + std::to_string(payload.size()) + " bytes");
    Encoded e;
    e.size = fmt::record_size(payload.size());
    // Room for the record and the zero word that ends the chain after it.
    if (tail_ + e.size + 8 > length_)
        return Error(errc::bad_size, "the log is full: " + std::to_string(length_ - tail_) + " bytes left, the record needs " +
                                         std::to_string(e.size + 8));
    e.index = records_ + 1;
    e.body.assign(e.size - 8 + 8, std::byte{0});
    std::memcpy(e.body.data(), &e.index, 8);
    std::memcpy(e.body.data() + 8, payload.data(), payload.size());
    e.word = fmt::commit_word(fmt::crc(generation_, e.index, payload), static_cast<std::uint32_t>(payload.size()));
    return e;
}

LogAppend ReplicatedLog::advance(const Encoded& e, Lsn lsn) {
    LogAppend a{e.index, tail_, lsn};
    tail_ += e.size;
    records_ = e.index;
    return a;
}

Result<LogAppend> ReplicatedLog::append(std::span<const std::byte> payload) {
    auto e = encode(payload);
    if (!e) return e.error();
    if (auto w = r_.write(offset_ + tail_ + 8, e->body); !w) return w.error();
    auto lsn = r_.atomic_write(offset_ + tail_, e->word);
    if (!lsn) return lsn.error();
    return advance(*e, *lsn);
}

// The body and its commit word as one vectored persist: one request per
// member, not a write, an atomic write and a flush.
Result<LogAppend> ReplicatedLog::append_durable(std::span<const std::byte> payload) {
    auto e = encode(payload);
    if (!e) return e.error();
    std::byte word[8];
    std::memcpy(word, &e->word, 8);
    const WriteSlice slices[2] = {{offset_ + tail_ + 8, e->body}, {offset_ + tail_, word}};
    auto lsn = r_.persist(slices);
    if (!lsn) {
        // The record stays appended if the local copy holds it, as a failed
        // commit after append() leaves it. It may not: a replicator that
        // already knew it was fenced refused before writing anything (the
        // slices are inside the log, checked at open and by encode, so no
        // other refusal comes before the local write).
        std::uint64_t local = 0;
        std::memcpy(&local, r_.data().data() + offset_ + tail_, 8);
        if (local == e->word) advance(*e, r_.last_lsn());
        return lsn.error();
    }
    return advance(*e, *lsn);
}

void ReplicatedLog::for_each(const std::function<bool(const LogRecord&)>& fn) const {
    fmt::walk(r_.data().subspan(offset_, length_), fn);
}

std::uint64_t ReplicatedLog::records() const noexcept { return records_; }
std::uint64_t ReplicatedLog::used() const noexcept { return tail_; }
std::uint64_t ReplicatedLog::capacity() const noexcept { return length_; }
std::uint64_t ReplicatedLog::generation() const noexcept { return generation_; }

std::uint64_t ReplicatedLog::rank(std::span<const std::byte> slice) noexcept {
    return fmt::walk(slice, nullptr).position;
}

std::uint64_t ReplicatedLog::rank(std::span<const std::byte> data_area, std::uint64_t offset,
                                  std::uint64_t length) noexcept {
    if (offset >= data_area.size()) return 0;
    return rank(data_area.subspan(offset, std::min<std::uint64_t>(length, data_area.size() - offset)));
}

std::optional<LogRecord> ReplicatedLog::record_at(std::span<const std::byte> slice, std::uint64_t position) noexcept {
    const auto h = fmt::read_header(slice);
    if (!h || position % 8 != 0 || position < kHeaderSize || position + kRecordOverhead > slice.size()) return std::nullopt;
    std::uint64_t index = 0;
    std::memcpy(&index, slice.data() + position + 8, 8);
    return fmt::record_at(slice.first(std::min<std::uint64_t>(slice.size(), h->capacity)), h->generation, position, index);
}

std::vector<LogRecord> ReplicatedLog::scan(std::span<const std::byte> slice) {
    std::vector<LogRecord> out;
    fmt::walk(slice, [&](const LogRecord& r) {
        out.push_back(r);
        return true;
    });
    return out;
}

} // namespace rpm
