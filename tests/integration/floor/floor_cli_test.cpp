// rpm-floor as a user runs it, where no RDMA device is needed: every bad
// flag is refused with exit status 2 and says what is wrong; a server whose
// region cannot be opened, or a client with no device or server to reach,
// fails with status 1 and the reason. Its measurements run in the lab
// (tests/lab/suite.sh, step floor).
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <string>
#include "tests/support/paths.hpp"

namespace {

struct ProcResult {
    int status = -1;
    std::string out;
};

ProcResult floor_tool(const std::string& args) {
    const std::string cmd = rpm::test::bin_dir().string() + "/rpm-floor " + args + " 2>&1";
    ProcResult r;
    FILE* p = popen(cmd.c_str(), "r");
    if (p == nullptr) return r;
    char buf[4096];
    std::size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    const int st = pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
}

void expect_refused(const std::string& args, const std::string& says, int status = 2) {
    const ProcResult r = floor_tool(args);
    EXPECT_EQ(r.status, status) << args << "\n" << r.out;
    EXPECT_NE(r.out.find(says), std::string::npos) << args << ": expected '" << says << "' in:\n" << r.out;
}

TEST(FloorCli, NeedsOneSide) {
    expect_refused("", "give --listen ADDR[:PORT] or --connect ADDR[:PORT]");
}

TEST(FloorCli, ListenAndConnectExcludeEachOther) {
    const ProcResult r = floor_tool("--listen 127.0.0.1 --connect 127.0.0.1");
    EXPECT_NE(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("excludes"), std::string::npos) << r.out;
}

TEST(FloorCli, BadAddressesAreRefused) {
    expect_refused("--connect 127.0.0.1:0", "is not ADDR[:PORT] with a port of 1 to 65535");
    expect_refused("--connect 127.0.0.1:70000", "is not ADDR[:PORT]");
    expect_refused("--connect 127.0.0.1:x", "is not ADDR[:PORT]");
    expect_refused("--listen :7790", "is not ADDR[:PORT]");
}

TEST(FloorCli, SeveralServersAndTheirQuorumAreChecked) {
    expect_refused("--connect 127.0.0.1,,127.0.0.1:7791", "'' is not ADDR[:PORT]");
    expect_refused("--connect 127.0.0.1:7790,127.0.0.1:0", "'127.0.0.1:0' is not ADDR[:PORT]");
    expect_refused("--listen 127.0.0.1:7790,127.0.0.1:7791", "--listen takes one ADDR[:PORT]");
    expect_refused("--connect 127.0.0.1:7790,127.0.0.1:7791 --quorum 3",
                   "--quorum 3 is more than the 2 servers --connect names");
    expect_refused("--connect 127.0.0.1 --quorum 0", "--quorum must be 1 or more");
    std::string seventeen = "127.0.0.1:7001";
    for (int i = 2; i <= 17; ++i) seventeen += ",127.0.0.1:" + std::to_string(7000 + i);
    expect_refused("--connect " + seventeen, "--connect names 1 to 16 servers");
}

TEST(FloorCli, AnUnknownWaitIsRefused) {
    const ProcResult r = floor_tool("--listen 127.0.0.1 --wait bogus");
    EXPECT_NE(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("--wait: bogus not in {busy,event}"), std::string::npos) << r.out;
}

TEST(FloorCli, TooManyCallsAreRefused) {
    expect_refused("--connect 127.0.0.1 --calls 513", "--calls must be 0 to 512");
    const ProcResult r = floor_tool("--connect 127.0.0.1 --calls -1");
    EXPECT_NE(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("--calls"), std::string::npos) << r.out;
}

TEST(FloorCli, UnknownPatternIsNamed) {
    expect_refused("--connect 127.0.0.1 --patterns read,bogus", "unknown pattern 'bogus'");
}

TEST(FloorCli, EmptyCountsAndSizesAreRefused) {
    expect_refused("--connect 127.0.0.1 --ops 0", "--ops, --rounds and --patterns must not be empty or 0");
    expect_refused("--connect 127.0.0.1 --rounds 0", "must not be empty or 0");
    expect_refused("--connect 127.0.0.1 --size 0", "--size must be 1 to 1048576 bytes");
    expect_refused("--connect 127.0.0.1 --size 2000000", "--size must be 1 to 1048576 bytes");
}

TEST(FloorCli, AServerWithoutItsRegionSaysWhich) {
    expect_refused("--listen 127.0.0.1 --region /nonexistent/rpm-floor-region", "--region /nonexistent/rpm-floor-region",
                   1);
}

TEST(FloorCli, AClientWithNothingToReachFails) {
    // No RDMA device here, or (on a machine with one) nobody listening on
    // that port: either way status 1 and the reason, within the timeout.
    const ProcResult r = floor_tool("--connect 127.0.0.1:7797 --timeout 5");
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_TRUE(r.out.find("no RDMA device reaches 127.0.0.1") != std::string::npos ||
                r.out.find("connect") != std::string::npos)
        << r.out;
}

} // namespace
