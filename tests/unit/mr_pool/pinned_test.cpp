// mr_registrar_pinned(): mlock as registration.
#include <rpm/mr_pool.hpp>

#include <gtest/gtest.h>

#include "tests/support/as_nobody.hpp"

#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace {

using rpm::errc;

// The sanitizer runtimes replace mlock/munlock with no-ops that succeed,
// so what the kernel does is only observable in plain builds.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kMlockIsReal = false;
#else
constexpr bool kMlockIsReal = true;
#endif
#define SKIP_UNLESS_MLOCK_IS_REAL() \
    if (!kMlockIsReal) GTEST_SKIP() << "mlock is a no-op under the sanitizer runtime"

// VmLck of this process in kB, from /proc/self/status.
long locked_kb() {
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);)
        if (line.rfind("VmLck:", 0) == 0) return std::stol(line.substr(6));
    return -1;
}

struct Pages {
    explicit Pages(std::size_t n) : p(static_cast<std::byte*>(std::aligned_alloc(4096, n))), size(n) {}
    ~Pages() { std::free(p); }
    Pages(const Pages&) = delete;
    Pages& operator=(const Pages&) = delete;
    std::span<std::byte> span() const { return {p, size}; }
    std::byte* p;
    std::size_t size;
};

TEST(MrPoolPinned, RegisterLocksAndDeregisterUnlocks) {
    auto reg = rpm::mr_registrar_pinned();
    EXPECT_EQ(reg->device(), "pinned");
    Pages mem(64 * 1024);
    const long before = locked_kb();
    ASSERT_GE(before, 0);
    auto handle = reg->register_memory(mem.span());
    ASSERT_TRUE(handle) << handle.error().message();
    if (kMlockIsReal) {
        EXPECT_GE(locked_kb(), before + 64);
    }
    reg->deregister_memory(*handle, mem.span());
    EXPECT_EQ(locked_kb(), before);
}

TEST(MrPoolPinned, PoolOfPinnedBuffers) {
    rpm::MrPoolOptions o;
    o.buffer_size = 16 * 1024;
    o.budget = 8;
    o.initial = 4;
    o.floor = 4;
    const long before = locked_kb();
    {
        auto pool = rpm::MrPool::create(rpm::mr_registrar_pinned(), o);
        ASSERT_TRUE(pool) << pool.error().message();
        EXPECT_EQ(pool->stats().device, "pinned");
        if (kMlockIsReal) {
            EXPECT_GE(locked_kb(), before + 64);
        }
        auto user = pool->create_user(1);
        ASSERT_TRUE(user);
        rpm::MrBuffer* b = user->get();
        ASSERT_NE(b, nullptr);
        b->bytes()[0] = std::byte{7};
        user->put(b);
    }
    EXPECT_EQ(locked_kb(), before);
}

// Root has CAP_IPC_LOCK and ignores RLIMIT_MEMLOCK: the child drops to
// nobody, then lowers the limit below one entry.
TEST(MrPoolPinned, RefusalIsPermissionDeniedNamingTheLimit) {
    SKIP_UNLESS_MLOCK_IS_REAL();
    auto refused = [] {
        rlimit lim{};
        lim.rlim_cur = lim.rlim_max = 4096;
        if (::setrlimit(RLIMIT_MEMLOCK, &lim) != 0) return false;
        Pages mem(64 * 1024);
        auto reg = rpm::mr_registrar_pinned();
        auto handle = reg->register_memory(mem.span());
        if (handle) return false;
        std::fprintf(stderr, "%s\n", handle.error().message().c_str());
        return handle.error() == errc::permission_denied &&
               handle.error().detail().find("RLIMIT_MEMLOCK") != std::string::npos;
    };
    RPM_EXPECT_AS_NOBODY(refused);
}

TEST(MrPoolPinned, PoolCreateReportsTheRefusal) {
    SKIP_UNLESS_MLOCK_IS_REAL();
    auto refused = [] {
        const rlimit lim{};  // nothing may be locked
        if (::setrlimit(RLIMIT_MEMLOCK, &lim) != 0) return false;
        rpm::MrPoolOptions o;
        o.buffer_size = 4096;
        o.budget = 4;
        o.initial = 2;
        o.floor = 2;
        auto pool = rpm::MrPool::create(rpm::mr_registrar_pinned(), o);
        return !pool && pool.error() == errc::permission_denied;
    };
    RPM_EXPECT_AS_NOBODY(refused);
}

}  // namespace
