#pragma once
// Shared pieces of capi_test: handles freed through the C API's own
// X_delete/X_close/X_stop, a temp directory, an in-process server
// (rpm_server_* on tcp://127.0.0.1:0) with file regions it creates, a
// connection to it, and a completion counter for the async calls.
//
// The tests call only <rpm/rpm.h>'s functions (the library is librpmpm.so,
// linked as a C program would); everything else here is the standard
// library and POSIX.
#include <rpm/rpm.h>

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

// The call returned 0; on failure the message carries rpm_errormsg().
#define CAPI_ASSERT_OK(expr) ASSERT_EQ(0, (expr)) << #expr << ": " << rpm_errormsg()
#define CAPI_EXPECT_OK(expr) EXPECT_EQ(0, (expr)) << #expr << ": " << rpm_errormsg()

namespace capi {

inline constexpr const char* kClientId = "app";
inline constexpr const char* kSecret = "s3cret";
inline constexpr std::size_t kRegionSize = std::size_t{1} << 20;

/// A handle that the C API frees with `Del(&p)` (which sets p to NULL).
template <typename T, int (*Del)(T**)>
struct Handle {
    T* p = nullptr;
    Handle() = default;
    Handle(const Handle&) = delete;
    Handle& operator=(const Handle&) = delete;
    ~Handle() { reset(); }
    int reset() { return p ? Del(&p) : 0; }
    T** out() { return &p; }
    T* get() const { return p; }
    operator T*() const { return p; }
};
using ClientOpts = Handle<rpm_client_opts, rpm_client_opts_delete>;
using RegionOpts = Handle<rpm_region_opts, rpm_region_opts_delete>;
using ServerOpts = Handle<rpm_server_opts, rpm_server_opts_delete>;
using ReplicatorOpts = Handle<rpm_replicator_opts, rpm_replicator_opts_delete>;
using Conn = Handle<rpm_conn, rpm_conn_delete>;
using Region = Handle<rpm_region, rpm_region_delete>;
using Mem = Handle<rpm_mem, rpm_mem_deregister>;
using ServerHandle = Handle<rpm_server, rpm_server_stop>;
using Probe = Handle<rpm_probe, rpm_probe_delete>;
using ReplicatorHandle = Handle<rpm_replicator, rpm_replicator_close>;
using Rlog = Handle<rpm_rlog, rpm_rlog_close>;

/// A fresh directory under /dev/shm (tmpfs: regions there are not PM), or
/// under $TMPDIR (/tmp) where /dev/shm is missing; removed with its files.
class TempDir {
public:
    TempDir() {
        static std::atomic<int> counter{0};
        std::filesystem::path base = "/dev/shm";
        if (!std::filesystem::is_directory(base)) {
            const char* t = std::getenv("TMPDIR");
            base = t && *t ? t : "/tmp";
        }
        dir_ = base / ("rpm-capi-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
        std::filesystem::remove_all(dir_);
        std::filesystem::create_directories(dir_);
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    std::string path(const std::string& name) const { return (dir_ / name).string(); }
    const std::filesystem::path& dir() const { return dir_; }

private:
    std::filesystem::path dir_;
};

struct RegionSpec {
    std::string name;
    std::size_t size;
};

/// Builds options for a server on tcp://127.0.0.1:0 that knows client
/// app:s3cret and serves `regions` as files created in `dir`.
inline int make_server_opts(const TempDir& dir, const std::vector<RegionSpec>& regions, ServerOpts& opts) {
    if (int rc = rpm_server_opts_new(opts.out())) return rc;
    if (int rc = rpm_server_opts_add_listen(opts, "tcp://127.0.0.1:0")) return rc;
    if (int rc = rpm_server_opts_add_client(opts, kClientId, kSecret)) return rc;
    for (const auto& r : regions)
        if (int rc = rpm_server_opts_add_region(opts, r.name.c_str(), dir.path(r.name).c_str(), r.size, 1)) return rc;
    return 0;
}

/// An in-process server, stopped (rpm_server_stop) when destroyed.
class TestServer {
public:
    /// Starts it with `opts`; 0 or the error.
    int start(const ServerOpts& opts) {
        if (int rc = rpm_server_start(opts, handle_.out())) return rc;
        return rpm_server_get_port(handle_, RPM_SCHEME_TCP, &port_);
    }
    int start(const TempDir& dir, const std::vector<RegionSpec>& regions) {
        ServerOpts opts;
        if (int rc = make_server_opts(dir, regions, opts)) return rc;
        return start(opts);
    }
    int stop() { return handle_.reset(); }
    std::uint16_t port() const { return port_; }
    std::string uri() const { return "tcp://127.0.0.1:" + std::to_string(port_); }
    rpm_server* get() const { return handle_.get(); }

private:
    ServerHandle handle_;
    std::uint16_t port_ = 0;
};

/// Options with the given client id and secret and a 5 s timeout.
inline int make_client_opts(ClientOpts& opts, const char* id = kClientId, const char* secret = kSecret) {
    if (int rc = rpm_client_opts_new(opts.out())) return rc;
    if (int rc = rpm_client_opts_set_id(opts, id)) return rc;
    if (int rc = rpm_client_opts_set_secret(opts, secret)) return rc;
    return rpm_client_opts_set_timeout(opts, 5000);
}

/// Connects to `uri` as id:secret; 0 or the error.
inline int connect(const std::string& uri, Conn& conn, const char* id = kClientId, const char* secret = kSecret) {
    ClientOpts opts;
    if (int rc = make_client_opts(opts, id, secret)) return rc;
    return rpm_conn_new(uri.c_str(), opts, conn.out());
}

/// Counts a completion callback's calls and keeps its status and the
/// rpm_errormsg() it saw.
struct Completion {
    std::atomic<int> calls{0};
    std::atomic<int> status{1};
    std::mutex mu;
    std::condition_variable cv;
    std::string message;

    static void fn(void* ctx, int st) {
        auto* c = static_cast<Completion*>(ctx);
        // Notified under the lock: a waiter that wakes may destroy *c as
        // soon as the lock is free, so nothing touches c after it.
        std::lock_guard lock(c->mu);
        c->status.store(st);
        if (st != 0) c->message = rpm_errormsg();
        c->calls.fetch_add(1);
        c->cv.notify_all();
    }
    /// Waits (at most 10 s) for the first call; its status, or 1 on timeout.
    int wait() {
        std::unique_lock lock(mu);
        if (!cv.wait_for(lock, std::chrono::seconds(10), [&] { return calls.load() > 0; })) return 1;
        return status.load();
    }
};

/// Waits (at most 10 s) until pred() holds; whether it did.
template <typename Pred>
bool eventually(Pred pred) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!pred()) {
        if (std::chrono::steady_clock::now() > until) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
}

/// `n` bytes of a pattern that depends on `seed`.
inline std::vector<unsigned char> pattern(std::size_t n, unsigned seed) {
    std::vector<unsigned char> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>((i * 131 + seed * 7 + 1) & 0xff);
    return v;
}

/// A server with regions r0 (1 MiB) and r1 (64 KiB), a connection to it as
/// app:s3cret, and r0 open.
class CapiFixture : public ::testing::Test {
protected:
    void SetUp() override {
        CAPI_ASSERT_OK(server.start(dir, {{"r0", kRegionSize}, {"r1", 64 * 1024}}));
        ASSERT_NE(server.port(), 0);
        CAPI_ASSERT_OK(connect(server.uri(), conn));
        CAPI_ASSERT_OK(rpm_region_open(conn, "r0", nullptr, region.out()));
    }

    TempDir dir;
    TestServer server;
    Conn conn;
    Region region;
};

}  // namespace capi
