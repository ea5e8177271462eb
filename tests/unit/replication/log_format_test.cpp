// The log format: a record is seen whole or not at all. Each test builds a
// slice by hand, the way append() lays it out, then damages it.
#include "replication/log_format.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

namespace rpm::replication::log {
namespace {

constexpr std::uint64_t kGen = 0xfeedface12345678ull;

class LogSlice {
public:
    explicit LogSlice(std::size_t size = 4096) : bytes_(size) {
        auto h = encode_header({kGen, size});
        std::memcpy(bytes_.data(), h.data(), h.size());
    }
    /// Append as ReplicatedLog::append does: body first, commit word last.
    std::uint64_t append(const std::string& payload, bool commit = true) {
        const std::uint64_t at = tail_;
        const std::uint64_t index = ++records_;
        std::memcpy(bytes_.data() + at + 8, &index, 8);
        std::memcpy(bytes_.data() + at + 16, payload.data(), payload.size());
        auto p = std::as_bytes(std::span(payload.data(), payload.size()));
        const auto word = commit_word(crc(kGen, index, p), static_cast<std::uint32_t>(payload.size()));
        if (commit) std::memcpy(bytes_.data() + at, &word, 8);
        tail_ += record_size(payload.size());
        return at;
    }
    std::span<const std::byte> span() const { return bytes_; }
    std::vector<std::byte>& raw() { return bytes_; }

private:
    std::vector<std::byte> bytes_;
    std::uint64_t tail_ = ReplicatedLog::kHeaderSize;
    std::uint64_t records_ = 0;
};

std::vector<std::string> payloads(std::span<const std::byte> s) {
    std::vector<std::string> out;
    for (const auto& r : ReplicatedLog::scan(s)) out.emplace_back(reinterpret_cast<const char*>(r.payload.data()), r.payload.size());
    return out;
}

TEST(LogFormat, WholeRecordsAreFoundInOrder) {
    LogSlice s;
    s.append("one");
    s.append("");
    s.append("three, a little longer than eight");
    EXPECT_EQ(payloads(s.span()), (std::vector<std::string>{"one", "", "three, a little longer than eight"}));
    EXPECT_EQ(ReplicatedLog::rank(s.span()), 64 + record_size(3) + record_size(0) + record_size(33));
}

TEST(LogFormat, ARecordWithoutItsCommitWordEndsTheLog) {
    LogSlice s;
    s.append("one");
    s.append("two", false);  // crashed before the commit word
    s.append("three");       // cannot count: it follows a missing record
    EXPECT_EQ(payloads(s.span()), (std::vector<std::string>{"one"}));
}

TEST(LogFormat, ATornBodyFailsItsCrc) {
    LogSlice s;
    s.append("one");
    const auto at = s.append("two: the body did not fully reach PM");
    s.raw()[at + 16 + 20] ^= std::byte{0x40};
    EXPECT_EQ(payloads(s.span()), (std::vector<std::string>{"one"}));
}

TEST(LogFormat, WrongIndexOrGenerationIsNotARecord) {
    LogSlice s;
    const auto at = s.append("one");
    std::uint64_t other = 2;
    auto copy = s.raw();
    std::memcpy(s.raw().data() + at + 8, &other, 8);  // an index out of sequence
    EXPECT_TRUE(payloads(s.span()).empty());
    // The same record bytes under another generation (a reused region).
    auto h = encode_header({kGen + 1, copy.size()});
    std::memcpy(copy.data(), h.data(), h.size());
    EXPECT_TRUE(payloads(copy).empty());
}

TEST(LogFormat, LengthsPastTheSliceAndMissingHeaderAreRejected) {
    LogSlice s(256);
    const auto at = s.append("fits");
    std::uint64_t word = commit_word(0, 1000);  // claims more than the slice
    std::memcpy(s.raw().data() + at, &word, 8);
    EXPECT_TRUE(payloads(s.span()).empty());
    std::vector<std::byte> blank(256);
    EXPECT_TRUE(payloads(blank).empty());
    EXPECT_EQ(ReplicatedLog::rank(blank), 0u);
}

TEST(LogFormat, RecordAtFindsWholeRecordsOnly) {
    LogSlice s;
    const auto one = s.append("one");
    const auto two = s.append("two: torn below");
    const auto three = s.append("three", false);
    auto r = ReplicatedLog::record_at(s.span(), one);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->index, 1u);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(r->payload.data()), r->payload.size()), "one");
    s.raw()[two + 16 + 3] ^= std::byte{1};
    EXPECT_FALSE(ReplicatedLog::record_at(s.span(), two));    // CRC
    EXPECT_FALSE(ReplicatedLog::record_at(s.span(), three));  // no commit word
    EXPECT_FALSE(ReplicatedLog::record_at(s.span(), one + 8));  // not a record's start
    EXPECT_FALSE(ReplicatedLog::record_at(s.span(), 1u << 20)); // past the slice
    EXPECT_FALSE(ReplicatedLog::record_at(std::vector<std::byte>(4096), 64));  // no log
}

// Regions written before keep verifying only if the CRC a record carries
// never changes: these values are what the Boost.CRC table code computed
// (generation, index and length as 8, 8 and 4 little-endian bytes, then the
// payload), and a bit-at-a-time CRC32C agrees; any new CRC code must
// reproduce them.
TEST(LogFormat, RecordCrcIsPinned) {
    const std::string text = "rpm replicated log record";
    const auto payload = std::as_bytes(std::span(text.data(), text.size()));
    EXPECT_EQ(crc(kGen, 1, payload), 0x00D2BA4Eu);
    EXPECT_EQ(crc(kGen, 42, {}), 0x6745FFD8u);
    EXPECT_EQ(crc(1, 0x0102030405060708ull, payload.first(9)), 0xDFEA404Au);
}

TEST(LogFormat, CommitWordCarriesFlagLengthAndCrc) {
    const auto w = commit_word(0xabcdef01u, 17);
    EXPECT_EQ(w >> 32, 0xabcdef01u);
    EXPECT_EQ(w & (kCommitFlag - 1), 17u);
    EXPECT_NE(w & kCommitFlag, 0u);
    EXPECT_EQ(record_size(0), 16u);
    EXPECT_EQ(record_size(1), 24u);
    EXPECT_EQ(record_size(8), 24u);
}

} // namespace
} // namespace rpm::replication::log
