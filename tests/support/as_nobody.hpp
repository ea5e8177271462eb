// Permission errors cannot be provoked as root, and CI runs as root. These
// helpers run a check in a forked child that has dropped to the
// unprivileged user "nobody" (65534), so such tests run everywhere instead
// of being skipped.
#pragma once

#include <gtest/gtest.h>

#include <grp.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace rpm::test {

inline void become_nobody() {
    if (::geteuid() != 0) return;  // already unprivileged
    if (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0) {
        std::perror("become_nobody");
        std::_Exit(3);
    }
}

} // namespace rpm::test

/// Runs `check` (a callable returning true on success; it may print why it
/// failed to stderr) as nobody in a child process and expects success.
#define RPM_EXPECT_AS_NOBODY(check)                                                 \
    EXPECT_EXIT(                                                                     \
        {                                                                            \
            ::rpm::test::become_nobody();                                            \
            std::_Exit((check)() ? 0 : 1);                                           \
        },                                                                           \
        ::testing::ExitedWithCode(0), "")
