// The C API's errors, version, enumeration names and option objects: every
// code's text, rpm_errormsg() per thread, and each option setter's refusals
// (NULL handles, NULL out-pointers, values out of range).
#include "capi_helpers.hpp"

#include <rpm/version.hpp>

#include <set>
#include <string>
#include <thread>

namespace capi {
namespace {

constexpr int kAllCodes[] = {
    RPM_E_INVALID_ARGUMENT, RPM_E_PATH_NOT_FOUND, RPM_E_PERMISSION_DENIED, RPM_E_BAD_SIZE,
    RPM_E_NOT_PMEM, RPM_E_GRANULARITY_NOT_SUPPORTED, RPM_E_PMEM_FAILED, RPM_E_DEEP_FLUSH_FAILED,
    RPM_E_IO_ERROR, RPM_E_SYSFS_UNREADABLE, RPM_E_BAD_OVERRIDE, RPM_E_BAD_CONFIG,
    RPM_E_RDMA_UNAVAILABLE, RPM_E_UNSUPPORTED, RPM_E_QUORUM_LOST, RPM_E_MR_BUDGET_EXHAUSTED,
    RPM_E_NO_P2P_MEMORY, RPM_E_NVME_STATUS, RPM_E_PROTOCOL_ERROR, RPM_E_FENCED,
    RPM_E_AUTH_FAILED, RPM_E_OUT_OF_RANGE, RPM_E_MISALIGNED, RPM_E_WOULD_DEADLOCK,
    RPM_E_NOMEM};

TEST(CapiErrors, EveryCodeHasItsOwnText) {
    std::set<std::string> seen;
    for (int code : kAllCodes) {
        const char* s = rpm_err_2str(code);
        ASSERT_NE(s, nullptr) << code;
        EXPECT_GT(std::string(s).size(), 5u) << code;
        EXPECT_NE(std::string(s), "unknown rpm error") << code;
        EXPECT_NE(std::string(s), "success") << code;
        seen.insert(s);
    }
    EXPECT_EQ(seen.size(), std::size(kAllCodes));  // no two codes share a text
    // The C++ category's words, for a few.
    EXPECT_EQ(std::string(rpm_err_2str(RPM_E_OUT_OF_RANGE)).rfind("out of range", 0), 0u);
    EXPECT_EQ(std::string(rpm_err_2str(RPM_E_AUTH_FAILED)).rfind("authentication failed", 0), 0u);
    EXPECT_EQ(std::string(rpm_err_2str(RPM_E_QUORUM_LOST)).rfind("too few replicas", 0), 0u);
    EXPECT_NE(std::string(rpm_err_2str(RPM_E_MISALIGNED)).find("multiple of 8"), std::string::npos);
}

TEST(CapiErrors, SuccessAndUnknownCodes) {
    EXPECT_STREQ(rpm_err_2str(0), "success");
    for (int code : {-25, -99, -101, 1, 12345, 2147483647, -2147483647})
        EXPECT_STREQ(rpm_err_2str(code), "unknown rpm error") << code;
}

TEST(CapiErrors, Err2strOfIntMin) {
    // rpm_err_2str once negated err before comparing it with the table's
    // size: for INT_MIN that overflowed, stayed negative, passed the bound
    // and indexed messages[INT_MIN] (a segmentation fault).
    EXPECT_STREQ(rpm_err_2str(-2147483647 - 1), "unknown rpm error");
}

TEST(CapiErrors, ErrormsgIsEmptyOnAThreadThatNeverFailed) {
    std::string msg = "unset";
    std::thread t([&] { msg = rpm_errormsg(); });
    t.join();
    EXPECT_EQ(msg, "");
}

TEST(CapiErrors, ErrormsgNamesTheFailureAndItsCode) {
    rpm_conn* c = nullptr;
    EXPECT_EQ(rpm_conn_new("bogus-uri-1234", nullptr, &c), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(c, nullptr);
    const std::string msg = rpm_errormsg();
    EXPECT_NE(msg.find("bogus-uri-1234"), std::string::npos) << msg;
    // "<detail>: <what the code means>"
    EXPECT_NE(msg.find(rpm_err_2str(RPM_E_INVALID_ARGUMENT)), std::string::npos) << msg;
}

TEST(CapiErrors, ErrormsgIsPerThread) {
    rpm_conn* c = nullptr;
    ASSERT_EQ(rpm_conn_new("main-thread-uri", nullptr, &c), RPM_E_INVALID_ARGUMENT);
    const std::string mine = rpm_errormsg();
    ASSERT_NE(mine.find("main-thread-uri"), std::string::npos) << mine;
    std::string theirs;
    std::thread t([&] {
        rpm_conn* c2 = nullptr;
        EXPECT_EQ(rpm_conn_new("other-thread-uri", nullptr, &c2), RPM_E_INVALID_ARGUMENT);
        theirs = rpm_errormsg();
    });
    t.join();
    EXPECT_NE(theirs.find("other-thread-uri"), std::string::npos) << theirs;
    EXPECT_EQ(std::string(rpm_errormsg()), mine);
}

TEST(CapiErrors, ErrormsgSurvivesASuccessfulCall) {
    rpm_conn* c = nullptr;
    ASSERT_EQ(rpm_conn_new("sticky-uri", nullptr, &c), RPM_E_INVALID_ARGUMENT);
    const std::string before = rpm_errormsg();
    ClientOpts opts;
    CAPI_ASSERT_OK(rpm_client_opts_new(opts.out()));
    EXPECT_EQ(std::string(rpm_errormsg()), before);  // "the thread's last failed call"
}

TEST(CapiErrors, VersionMatchesTheHeader) {
    const std::string want = std::to_string(RPM_VERSION_MAJOR) + "." + std::to_string(RPM_VERSION_MINOR) + "." +
                             std::to_string(RPM_VERSION_PATCH);
    ASSERT_NE(rpm_version(), nullptr);
    EXPECT_EQ(std::string(rpm_version()), want);
    EXPECT_EQ(rpm_version_number(), RPM_VERSION);
}

TEST(CapiErrors, EnumerationNames) {
    EXPECT_STREQ(rpm_method_name(RPM_METHOD_READ_AFTER_WRITE), "read_after_write");
    EXPECT_STREQ(rpm_method_name(RPM_METHOD_SEND_FLUSH), "send_flush");
    EXPECT_STREQ(rpm_method_name(RPM_METHOD_NATIVE_FLUSH), "native_flush");
    EXPECT_EQ(rpm_method_name(3), nullptr);
    EXPECT_EQ(rpm_method_name(-1), nullptr);
    EXPECT_STREQ(rpm_server_persist_name(RPM_SERVER_PERSIST_NONE), "none");
    EXPECT_STREQ(rpm_server_persist_name(RPM_SERVER_PERSIST_SFENCE), "sfence");
    EXPECT_STREQ(rpm_server_persist_name(RPM_SERVER_PERSIST_CACHE_FLUSH_SFENCE), "cache_flush_sfence");
    EXPECT_STREQ(rpm_server_persist_name(RPM_SERVER_PERSIST_CACHE_FLUSH_SFENCE_DEEP_FLUSH),
                 "cache_flush_sfence_deep_flush");
    EXPECT_STREQ(rpm_server_persist_name(RPM_SERVER_PERSIST_MSYNC), "msync");
    EXPECT_EQ(rpm_server_persist_name(5), nullptr);
    EXPECT_EQ(rpm_server_persist_name(-1), nullptr);
    EXPECT_STREQ(rpm_domain_name(RPM_DOMAIN_CPU_CACHE), "cpu_cache");
    EXPECT_STREQ(rpm_domain_name(RPM_DOMAIN_MEMORY_CONTROLLER), "memory_controller");
    EXPECT_STREQ(rpm_domain_name(RPM_DOMAIN_NONE), "none");
    EXPECT_STREQ(rpm_domain_name(RPM_DOMAIN_UNKNOWN), "unknown");
    EXPECT_STREQ(rpm_domain_name(RPM_DOMAIN_NOT_PMEM), "not_pmem");
    EXPECT_EQ(rpm_domain_name(5), nullptr);
    EXPECT_EQ(rpm_domain_name(-1), nullptr);
}

// X_new(NULL), X_delete(NULL), X_delete(&p) -> p NULL, X_delete(&NULL) -> 0.
template <typename T>
void check_new_delete(int (*make)(T**), int (*del)(T**)) {
    EXPECT_EQ(make(nullptr), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(del(nullptr), RPM_E_INVALID_ARGUMENT);
    T* p = nullptr;
    ASSERT_EQ(make(&p), 0) << rpm_errormsg();
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(del(&p), 0);
    EXPECT_EQ(p, nullptr);
    EXPECT_EQ(del(&p), 0);  // *p NULL does nothing
}

TEST(CapiErrors, OptionObjectsNewAndDelete) {
    check_new_delete(rpm_client_opts_new, rpm_client_opts_delete);
    check_new_delete(rpm_region_opts_new, rpm_region_opts_delete);
    check_new_delete(rpm_server_opts_new, rpm_server_opts_delete);
    check_new_delete(rpm_replicator_opts_new, rpm_replicator_opts_delete);
}

TEST(CapiErrors, ClientOptionSetters) {
    ClientOpts o;
    CAPI_ASSERT_OK(rpm_client_opts_new(o.out()));
    CAPI_EXPECT_OK(rpm_client_opts_set_id(o, "x"));
    CAPI_EXPECT_OK(rpm_client_opts_set_secret(o, "y"));
    CAPI_EXPECT_OK(rpm_client_opts_set_tls(o, 0, nullptr));
    CAPI_EXPECT_OK(rpm_client_opts_set_tls(o, 1, nullptr));
    CAPI_EXPECT_OK(rpm_client_opts_set_timeout(o, 1));
    for (int m : {RPM_COMPLETION_ADAPTIVE, RPM_COMPLETION_BUSY, RPM_COMPLETION_EVENT})
        CAPI_EXPECT_OK(rpm_client_opts_set_completion(o, m));
    EXPECT_EQ(rpm_client_opts_set_id(nullptr, "x"), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_client_opts_set_id(o, nullptr), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_client_opts_set_secret(nullptr, "y"), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_client_opts_set_tls(nullptr, 0, nullptr), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_client_opts_set_timeout(nullptr, 10), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_client_opts_set_timeout(o, 0), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_client_opts_set_timeout(o, -5), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_client_opts_set_completion(nullptr, 0), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_client_opts_set_completion(o, 3), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_client_opts_set_completion(o, -1), RPM_E_INVALID_ARGUMENT);
    EXPECT_NE(std::string(rpm_errormsg()), "");
}

TEST(CapiErrors, RegionOptionSetters) {
    RegionOpts o;
    CAPI_ASSERT_OK(rpm_region_opts_new(o.out()));
    CAPI_EXPECT_OK(rpm_region_opts_set_fencing_term(o, 7));
    CAPI_EXPECT_OK(rpm_region_opts_force_method(o, RPM_METHOD_SEND_FLUSH, 0));
    CAPI_EXPECT_OK(rpm_region_opts_force_method(o, RPM_METHOD_NATIVE_FLUSH, 1));
    EXPECT_EQ(rpm_region_opts_set_fencing_term(nullptr, 1), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_region_opts_force_method(nullptr, 0, 0), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_region_opts_force_method(o, 3, 0), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_region_opts_force_method(o, -1, 1), RPM_E_INVALID_ARGUMENT);
}

TEST(CapiErrors, ServerOptionSetters) {
    TempDir dir;
    ServerOpts o;
    CAPI_ASSERT_OK(rpm_server_opts_new(o.out()));
    CAPI_EXPECT_OK(rpm_server_opts_add_listen(o, "tcp://127.0.0.1:0"));
    CAPI_EXPECT_OK(rpm_server_opts_add_client(o, "a", "b"));
    CAPI_EXPECT_OK(rpm_server_opts_add_region(o, "r", dir.path("r").c_str(), 65536, 1));
    CAPI_EXPECT_OK(rpm_server_opts_set_fence_dir(o, dir.dir().c_str()));
    CAPI_EXPECT_OK(rpm_server_opts_set_fence_dir(o, nullptr));
    CAPI_EXPECT_OK(rpm_server_opts_set_sysfs_root(o, "/"));
    EXPECT_EQ(rpm_server_opts_add_listen(nullptr, "tcp://127.0.0.1:0"), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_server_opts_add_listen(o, nullptr), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_server_opts_add_client(nullptr, "a", "b"), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_server_opts_add_client(o, nullptr, "b"), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_server_opts_add_client(o, "a", nullptr), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_server_opts_add_region(nullptr, "r", "/x", 0, 0), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_server_opts_add_region(o, nullptr, "/x", 0, 0), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_server_opts_add_region(o, "r2", nullptr, 0, 0), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_server_opts_set_fence_dir(nullptr, "/tmp"), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_server_opts_set_sysfs_root(nullptr, "/"), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_server_opts_set_sysfs_root(o, nullptr), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_server_opts_set_tls(nullptr, "c", "k"), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_server_opts_set_tls(o, nullptr, "k"), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_server_opts_set_tls(o, "c", nullptr), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_server_opts_set_message_fn(nullptr, nullptr, nullptr), RPM_E_INVALID_ARGUMENT);
}

TEST(CapiErrors, ReplicatorOptionSetters) {
    ReplicatorOpts o;
    CAPI_ASSERT_OK(rpm_replicator_opts_new(o.out()));
    CAPI_EXPECT_OK(rpm_replicator_opts_set_local(o, "/dev/shm/none", 1 << 20, 1));
    CAPI_EXPECT_OK(rpm_replicator_opts_add_replica(o, "tcp://127.0.0.1:1", "r", nullptr));
    for (const char* p : {"all", "majority", "2", "majority+local", "all-local", "1-local"})
        CAPI_EXPECT_OK(rpm_replicator_opts_set_durability(o, p)) << p;
    CAPI_EXPECT_OK(rpm_replicator_opts_set_fencing_term(o, 3));
    CAPI_EXPECT_OK(rpm_replicator_opts_set_timing(o, 20, 200, 50));
    CAPI_EXPECT_OK(rpm_replicator_opts_set_sysfs_root(o, "/"));
    CAPI_EXPECT_OK(rpm_replicator_opts_set_adopt_foreign(o, 1));
    EXPECT_EQ(rpm_replicator_opts_set_local(nullptr, "/x", 0, 0), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_replicator_opts_set_local(o, nullptr, 0, 0), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_replicator_opts_add_replica(nullptr, "tcp://a:1", "r", nullptr), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_replicator_opts_add_replica(o, nullptr, "r", nullptr), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_replicator_opts_add_replica(o, "tcp://127.0.0.1:2", nullptr, nullptr), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_replicator_opts_set_durability(nullptr, "all"), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_replicator_opts_set_durability(o, nullptr), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_replicator_opts_set_durability(o, "most"), RPM_E_INVALID_ARGUMENT);
    EXPECT_NE(std::string(rpm_errormsg()).find("most"), std::string::npos) << rpm_errormsg();
    EXPECT_EQ(rpm_replicator_opts_set_durability(o, "0"), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_replicator_opts_set_fencing_term(nullptr, 1), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_replicator_opts_set_timing(nullptr, 20, 200, 50), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_replicator_opts_set_timing(o, 0, 200, 50), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_replicator_opts_set_timing(o, 20, -1, 50), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_replicator_opts_set_timing(o, 20, 200, 0), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_replicator_opts_set_sysfs_root(nullptr, "/"), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_replicator_opts_set_sysfs_root(o, nullptr), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_replicator_opts_set_event_fn(nullptr, nullptr, nullptr), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_replicator_opts_set_adopt_foreign(nullptr, 1), RPM_E_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace capi
