// A region through the C API, synchronously: the grant's decision for a
// tmpfs file, write/flush/read/persist/persistv/atomic_write checked by
// content (also in the server's file), and each call's refusals: NULL
// handles and buffers, ranges past the end (the region unchanged),
// misaligned atomic writes, forced methods and fencing terms.
#include "capi_helpers.hpp"

#include <cstring>
#include <fstream>
#include <string>

namespace capi {
namespace {

using CapiRegion = CapiFixture;

/// `n` bytes of the server's file for region `name`, at `offset`.
std::vector<unsigned char> file_bytes(const TempDir& dir, const std::string& name, std::size_t offset,
                                      std::size_t n) {
    std::ifstream f(dir.path(name), std::ios::binary);
    f.seekg(static_cast<std::streamoff>(offset));
    std::vector<unsigned char> v(n);
    f.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(n));
    if (!f) v.clear();
    return v;
}

TEST_F(CapiRegion, TmpfsGrantIsSendFlushNotPmem) {
    std::uint64_t size = 0;
    int method = -1, persist = -1, domain = -1;
    const char* reason = nullptr;
    CAPI_ASSERT_OK(rpm_region_get_size(region, &size));
    CAPI_ASSERT_OK(rpm_region_get_method(region, &method));
    CAPI_ASSERT_OK(rpm_region_get_server_persist(region, &persist));
    CAPI_ASSERT_OK(rpm_region_get_domain(region, &domain));
    CAPI_ASSERT_OK(rpm_region_get_reason(region, &reason));
    EXPECT_EQ(size, kRegionSize);
    EXPECT_EQ(method, RPM_METHOD_SEND_FLUSH);
    EXPECT_EQ(persist, RPM_SERVER_PERSIST_MSYNC);
    EXPECT_EQ(domain, RPM_DOMAIN_NOT_PMEM);
    ASSERT_NE(reason, nullptr);
    EXPECT_NE(std::string(reason), "");
}

TEST_F(CapiRegion, GettersRefuseNullPointers) {
    std::uint64_t size = 0;
    int v = 0;
    const char* s = nullptr;
    EXPECT_EQ(rpm_region_get_size(nullptr, &size), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_region_get_size(region, nullptr), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_region_get_method(nullptr, &v), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_region_get_method(region, nullptr), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_region_get_server_persist(nullptr, &v), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_region_get_server_persist(region, nullptr), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_region_get_domain(nullptr, &v), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_region_get_domain(region, nullptr), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_region_get_reason(nullptr, &s), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_region_get_reason(region, nullptr), RPM_E_INVALID_ARGUMENT);
}

TEST_F(CapiRegion, PersistReadsBackAndReachesTheFile) {
    const auto bytes = pattern(5000, 1);
    CAPI_ASSERT_OK(rpm_region_persist(region, 12345, bytes.data(), bytes.size()));
    std::vector<unsigned char> back(bytes.size());
    CAPI_ASSERT_OK(rpm_region_read(region, 12345, back.data(), back.size()));
    EXPECT_EQ(back, bytes);
    EXPECT_EQ(file_bytes(dir, "r0", 12345, bytes.size()), bytes);
}

TEST_F(CapiRegion, WriteThenFlushReadsBack) {
    const auto bytes = pattern(300, 2);
    CAPI_ASSERT_OK(rpm_region_write(region, 4096, bytes.data(), bytes.size()));
    CAPI_ASSERT_OK(rpm_region_flush(region, 4096, bytes.size()));
    std::vector<unsigned char> back(bytes.size());
    CAPI_ASSERT_OK(rpm_region_read(region, 4096, back.data(), back.size()));
    EXPECT_EQ(back, bytes);
    EXPECT_EQ(file_bytes(dir, "r0", 4096, bytes.size()), bytes);
    // The last byte of the region, and zero-length calls at its end.
    const unsigned char last = 0xab;
    CAPI_ASSERT_OK(rpm_region_persist(region, kRegionSize - 1, &last, 1));
    unsigned char got = 0;
    CAPI_ASSERT_OK(rpm_region_read(region, kRegionSize - 1, &got, 1));
    EXPECT_EQ(got, last);
    CAPI_EXPECT_OK(rpm_region_flush(region, kRegionSize, 0));
}

TEST_F(CapiRegion, AtomicWriteStoresTheWord) {
    const std::uint64_t value = 0x1122334455667788ull;
    CAPI_ASSERT_OK(rpm_region_atomic_write(region, 8 * 100, value));
    CAPI_ASSERT_OK(rpm_region_flush(region, 8 * 100, 8));
    std::uint64_t back = 0;
    CAPI_ASSERT_OK(rpm_region_read(region, 8 * 100, &back, sizeof back));
    EXPECT_EQ(back, value);
    const auto f = file_bytes(dir, "r0", 800, 8);
    ASSERT_EQ(f.size(), 8u);
    std::uint64_t in_file = 0;
    std::memcpy(&in_file, f.data(), 8);
    EXPECT_EQ(in_file, value);
}

TEST_F(CapiRegion, PersistvStoresEverySlice) {
    const auto a = pattern(100, 4), b = pattern(8, 5), c = pattern(2000, 6);
    const rpm_slice slices[] = {{0, a.data(), a.size()}, {1024, b.data(), b.size()}, {200000, c.data(), c.size()}};
    CAPI_ASSERT_OK(rpm_region_persistv(region, slices, 3));
    for (const auto& s : slices) {
        std::vector<unsigned char> back(s.length);
        CAPI_ASSERT_OK(rpm_region_read(region, s.offset, back.data(), back.size()));
        EXPECT_EQ(0, std::memcmp(back.data(), s.data, s.length)) << s.offset;
    }
    EXPECT_EQ(file_bytes(dir, "r0", 200000, c.size()), c);
}

TEST_F(CapiRegion, NullBuffersAndHandlesAreRefused) {
    unsigned char buf[16] = {};
    const rpm_slice one[] = {{0, buf, sizeof buf}};
    EXPECT_EQ(rpm_region_write(nullptr, 0, buf, 8), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_region_write(region, 0, nullptr, 8), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_region_read(nullptr, 0, buf, 8), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_region_read(region, 0, nullptr, 8), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_region_persist(nullptr, 0, buf, 8), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_region_persist(region, 0, nullptr, 8), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_region_atomic_write(nullptr, 0, 1), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_region_flush(nullptr, 0, 8), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_region_persistv(nullptr, one, 1), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_region_persistv(region, nullptr, 1), RPM_E_INVALID_ARGUMENT);
    const rpm_slice null_data[] = {{0, nullptr, 8}};
    EXPECT_EQ(rpm_region_persistv(region, null_data, 1), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_region_persistv(region, one, 0), RPM_E_INVALID_ARGUMENT);
    std::vector<rpm_slice> many(RPM_MAX_SLICES + 1, rpm_slice{0, buf, 1});
    EXPECT_EQ(rpm_region_persistv(region, many.data(), many.size()), RPM_E_INVALID_ARGUMENT);
}

TEST_F(CapiRegion, OutOfRangeIsRefusedAndTheRegionUnchanged) {
    const auto before = pattern(64, 7);
    CAPI_ASSERT_OK(rpm_region_persist(region, kRegionSize - 64, before.data(), before.size()));
    const auto junk = pattern(128, 8);
    const std::uint64_t off = kRegionSize - 32;
    EXPECT_EQ(rpm_region_persist(region, off, junk.data(), junk.size()), RPM_E_OUT_OF_RANGE);
    const std::string msg = rpm_errormsg();
    EXPECT_NE(msg.find(std::to_string(off)), std::string::npos) << msg;
    EXPECT_NE(msg.find("r0"), std::string::npos) << msg;
    EXPECT_EQ(rpm_region_write(region, off, junk.data(), junk.size()), RPM_E_OUT_OF_RANGE);
    EXPECT_EQ(rpm_region_write(region, kRegionSize + 1, junk.data(), 0), RPM_E_OUT_OF_RANGE);
    EXPECT_EQ(rpm_region_write(region, UINT64_MAX, junk.data(), 1), RPM_E_OUT_OF_RANGE);
    EXPECT_EQ(rpm_region_flush(region, off, 64), RPM_E_OUT_OF_RANGE);
    EXPECT_EQ(rpm_region_flush(region, 8, UINT64_MAX), RPM_E_OUT_OF_RANGE);
    EXPECT_EQ(rpm_region_atomic_write(region, kRegionSize, 1), RPM_E_OUT_OF_RANGE);
    const rpm_slice slices[] = {{0, junk.data(), 8}, {off, junk.data(), junk.size()}};
    EXPECT_EQ(rpm_region_persistv(region, slices, 2), RPM_E_OUT_OF_RANGE);
    std::vector<unsigned char> back(128);
    EXPECT_EQ(rpm_region_read(region, off, back.data(), back.size()), RPM_E_OUT_OF_RANGE);
    // Nothing was written: the tail and the first slice's target hold what they held.
    std::vector<unsigned char> tail(64);
    CAPI_ASSERT_OK(rpm_region_read(region, kRegionSize - 64, tail.data(), tail.size()));
    EXPECT_EQ(tail, before);
    std::uint64_t head = 1;
    CAPI_ASSERT_OK(rpm_region_read(region, 0, &head, 8));
    EXPECT_EQ(head, 0u);
}

TEST_F(CapiRegion, MisalignedAtomicWriteIsRefused) {
    CAPI_ASSERT_OK(rpm_region_atomic_write(region, 64, 42));
    EXPECT_EQ(rpm_region_atomic_write(region, 68, 7), RPM_E_MISALIGNED);
    EXPECT_NE(std::string(rpm_errormsg()).find("68"), std::string::npos) << rpm_errormsg();
    EXPECT_EQ(rpm_region_atomic_write(region, 1, 7), RPM_E_MISALIGNED);
    std::uint64_t words[2] = {};
    CAPI_ASSERT_OK(rpm_region_read(region, 64, words, sizeof words));
    EXPECT_EQ(words[0], 42u);
    EXPECT_EQ(words[1], 0u);
}

TEST_F(CapiRegion, ForcedMethods) {
    RegionOpts o;
    CAPI_ASSERT_OK(rpm_region_opts_new(o.out()));
    CAPI_ASSERT_OK(rpm_region_opts_force_method(o, RPM_METHOD_NATIVE_FLUSH, 0));
    rpm_region* r = nullptr;
    EXPECT_EQ(rpm_region_open(conn, "r1", o, &r), RPM_E_UNSUPPORTED);  // tcp:// cannot
    EXPECT_EQ(r, nullptr);
    CAPI_ASSERT_OK(rpm_region_opts_force_method(o, RPM_METHOD_READ_AFTER_WRITE, 0));
    EXPECT_EQ(rpm_region_open(conn, "r1", o, &r), RPM_E_INVALID_ARGUMENT);  // unsafe on page cache
    CAPI_ASSERT_OK(rpm_region_opts_force_method(o, RPM_METHOD_READ_AFTER_WRITE, 1));
    Region forced;
    CAPI_ASSERT_OK(rpm_region_open(conn, "r1", o, forced.out()));
    int method = -1;
    CAPI_ASSERT_OK(rpm_region_get_method(forced, &method));
    EXPECT_EQ(method, RPM_METHOD_READ_AFTER_WRITE);
    const auto bytes = pattern(100, 10);
    CAPI_ASSERT_OK(rpm_region_persist(forced, 0, bytes.data(), bytes.size()));
    std::vector<unsigned char> back(bytes.size());
    CAPI_ASSERT_OK(rpm_region_read(forced, 0, back.data(), back.size()));
    EXPECT_EQ(back, bytes);
}

TEST(CapiRegionFencing, NewerTermFencesOlderOpeners) {
    TempDir dir, fences;
    ServerOpts so;
    CAPI_ASSERT_OK(make_server_opts(dir, {{"f", 65536}}, so));
    CAPI_ASSERT_OK(rpm_server_opts_set_fence_dir(so, fences.dir().c_str()));
    TestServer server;
    CAPI_ASSERT_OK(server.start(so));
    Conn a, b;
    CAPI_ASSERT_OK(connect(server.uri(), a));
    CAPI_ASSERT_OK(connect(server.uri(), b));
    RegionOpts o;
    CAPI_ASSERT_OK(rpm_region_opts_new(o.out()));
    CAPI_ASSERT_OK(rpm_region_opts_set_fencing_term(o, 5));
    Region ra;
    CAPI_ASSERT_OK(rpm_region_open(a, "f", o, ra.out()));
    const char text[] = "term five";
    CAPI_ASSERT_OK(rpm_region_persist(ra, 0, text, sizeof text));
    EXPECT_FALSE(std::filesystem::is_empty(fences.dir()));  // the term was kept there
    CAPI_ASSERT_OK(rpm_region_opts_set_fencing_term(o, 3));
    rpm_region* rb = nullptr;
    EXPECT_EQ(rpm_region_open(b, "f", o, &rb), RPM_E_FENCED);
    EXPECT_EQ(rb, nullptr);
    EXPECT_EQ(rpm_region_open(b, "f", nullptr, &rb), RPM_E_FENCED);  // term 0 on a fenced region
    // A newer term revokes the older opener.
    Region rb6;
    CAPI_ASSERT_OK(rpm_region_opts_set_fencing_term(o, 6));
    CAPI_ASSERT_OK(rpm_region_open(b, "f", o, rb6.out()));
    EXPECT_TRUE(eventually([&] { return rpm_region_persist(ra, 0, text, sizeof text) == RPM_E_FENCED; }));
}

}  // namespace
}  // namespace capi
