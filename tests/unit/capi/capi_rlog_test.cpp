// The replicated log through the C API, on a healthy group (ReplicaGroup):
// appends come back in order with their payloads and indexes, durable
// appends reach the quorum frontier, foreach stops when told, reset empties
// it, a reopen finds the records, and the refusals.
#include "capi_replicator_helpers.hpp"

#include <string>
#include <utility>

namespace capi {
namespace {

using CapiRlog = ReplicaGroup;

constexpr std::uint64_t kLogOffset = 128 * 1024;
constexpr std::uint64_t kLogLength = 64 * 1024;

using Records = std::vector<std::pair<std::uint64_t, std::string>>;

int collect(void* ctx, std::uint64_t index, const void* payload, std::size_t len) {
    static_cast<Records*>(ctx)->emplace_back(index, std::string(static_cast<const char*>(payload), len));
    return 0;
}

Records records_of(const rpm_rlog* log) {
    Records r;
    EXPECT_EQ(rpm_rlog_foreach(log, collect, &r), 0) << rpm_errormsg();
    return r;
}

TEST_F(CapiRlog, AppendsComeBackInOrder) {
    Rlog log;
    CAPI_ASSERT_OK(rpm_rlog_open(rep, kLogOffset, kLogLength, log.out()));
    std::uint64_t n = 99;
    CAPI_ASSERT_OK(rpm_rlog_get_records(log, &n));
    EXPECT_EQ(n, 0u);
    rpm_rlog_append_info i1{}, i2{}, i3{};
    CAPI_ASSERT_OK(rpm_rlog_append(log, "one", 3, &i1));
    CAPI_ASSERT_OK(rpm_rlog_append(log, "two!", 4, &i2));
    CAPI_ASSERT_OK(rpm_rlog_append(log, "three", 5, nullptr));  // info may be NULL
    CAPI_ASSERT_OK(rpm_rlog_append_durable(log, "four", 4, &i3));
    EXPECT_EQ(i1.index, 1u);
    EXPECT_EQ(i2.index, 2u);
    EXPECT_EQ(i3.index, 4u);
    EXPECT_LT(i1.position, i2.position);
    EXPECT_LT(i1.lsn, i2.lsn);
    EXPECT_LT(i2.lsn, i3.lsn);
    std::uint64_t quorum = 0;
    CAPI_ASSERT_OK(rpm_replicator_get_frontier(rep, RPM_FRONTIER_QUORUM, &quorum));
    EXPECT_GE(quorum, i3.lsn);  // durable on the quorum when append_durable returned
    const Records want = {{1, "one"}, {2, "two!"}, {3, "three"}, {4, "four"}};
    EXPECT_EQ(records_of(log), want);
    CAPI_ASSERT_OK(rpm_rlog_get_records(log, &n));
    EXPECT_EQ(n, 4u);
    std::uint64_t used = 0, capacity = 0;
    CAPI_ASSERT_OK(rpm_rlog_get_used(log, &used, &capacity));
    EXPECT_EQ(capacity, kLogLength);
    EXPECT_GE(used, 64u + 4 * 16 + 16);  // header, four records' overhead and payloads
    EXPECT_LT(used, 64u + 4 * 24 + 16);
}

TEST_F(CapiRlog, ForeachStopsWhenTold) {
    Rlog log;
    CAPI_ASSERT_OK(rpm_rlog_open(rep, kLogOffset, kLogLength, log.out()));
    for (const char* p : {"a", "b", "c"}) CAPI_ASSERT_OK(rpm_rlog_append(log, p, 1, nullptr));
    int calls = 0;
    CAPI_ASSERT_OK(rpm_rlog_foreach(
        log, [](void* ctx, std::uint64_t, const void*, std::size_t) -> int { return ++*static_cast<int*>(ctx) == 2; },
        &calls));
    EXPECT_EQ(calls, 2);
}

TEST_F(CapiRlog, ResetEmptiesAndReopenFindsRecords) {
    Rlog log;
    CAPI_ASSERT_OK(rpm_rlog_open(rep, kLogOffset, kLogLength, log.out()));
    CAPI_ASSERT_OK(rpm_rlog_append_durable(log, "kept", 4, nullptr));
    CAPI_ASSERT_OK(log.reset());
    EXPECT_EQ(log.get(), nullptr);
    CAPI_ASSERT_OK(rpm_rlog_open(rep, kLogOffset, kLogLength, log.out()));
    EXPECT_EQ(records_of(log), (Records{{1, "kept"}}));
    std::uint64_t before = 0, lsn = 0;
    CAPI_ASSERT_OK(rpm_replicator_get_last_lsn(rep, &before));
    CAPI_ASSERT_OK(rpm_rlog_reset(log, &lsn));
    EXPECT_GT(lsn, before);
    EXPECT_TRUE(records_of(log).empty());
    std::uint64_t n = 9;
    CAPI_ASSERT_OK(rpm_rlog_get_records(log, &n));
    EXPECT_EQ(n, 0u);
    rpm_rlog_append_info info{};
    CAPI_ASSERT_OK(rpm_rlog_append(log, "fresh", 5, &info));
    EXPECT_EQ(info.index, 1u);
    EXPECT_EQ(records_of(log), (Records{{1, "fresh"}}));
}

TEST_F(CapiRlog, RefusesBadArguments) {
    rpm_rlog* l = nullptr;
    EXPECT_EQ(rpm_rlog_open(nullptr, kLogOffset, kLogLength, &l), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_rlog_open(rep, kLogOffset, kLogLength, nullptr), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_rlog_open(rep, kLogOffset + 3, kLogLength, &l), RPM_E_INVALID_ARGUMENT);  // not 8-aligned
    EXPECT_EQ(rpm_rlog_open(rep, kLogOffset, 16, &l), RPM_E_INVALID_ARGUMENT);              // too small
    EXPECT_EQ(rpm_rlog_open(rep, kDataSize - 1024, kLogLength, &l), RPM_E_INVALID_ARGUMENT);  // past the end
    EXPECT_EQ(l, nullptr);
    Rlog log;
    CAPI_ASSERT_OK(rpm_rlog_open(rep, kLogOffset, 4096, log.out()));
    EXPECT_EQ(rpm_rlog_append(nullptr, "x", 1, nullptr), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_rlog_append(log, nullptr, 1, nullptr), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_rlog_append_durable(nullptr, "x", 1, nullptr), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_rlog_append_durable(log, nullptr, 1, nullptr), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_rlog_foreach(log, nullptr, nullptr), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_rlog_foreach(nullptr, collect, nullptr), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_rlog_reset(nullptr, nullptr), RPM_E_INVALID_ARGUMENT);
    std::uint64_t v = 0;
    EXPECT_EQ(rpm_rlog_get_records(nullptr, &v), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_rlog_get_records(log, nullptr), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_rlog_get_used(log, nullptr, &v), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_rlog_get_used(log, &v, nullptr), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_rlog_close(nullptr), RPM_E_INVALID_ARGUMENT);
    // A full log: bad size, and nothing appended.
    const std::vector<char> big(5000, 'z');
    EXPECT_EQ(rpm_rlog_append(log, big.data(), big.size(), nullptr), RPM_E_BAD_SIZE);
    EXPECT_TRUE(records_of(log).empty());
    rpm_rlog* p = log.p;
    log.p = nullptr;
    CAPI_EXPECT_OK(rpm_rlog_close(&p));
    EXPECT_EQ(p, nullptr);
    CAPI_EXPECT_OK(rpm_rlog_close(&p));
}

}  // namespace
}  // namespace capi
