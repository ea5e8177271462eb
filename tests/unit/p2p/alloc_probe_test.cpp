// rpm-probe --p2p as a user runs it, on the lab VM's fixture tree: the
// providers, each client's place, the verdicts and the choice, text and JSON.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>

#include <cstdio>
#include <string>
#include "tests/support/paths.hpp"

namespace {

using nlohmann::json;

struct ProbeRun {
    int status = -1;
    std::string out;
};

ProbeRun probe(const std::string& args) {
    const std::string cmd = rpm::test::bin_dir().string() + "/rpm-probe --sysfs-root " + rpm::test::fixtures_dir().string() +
                            "/p2p/qemu_lab " + args + " 2>&1";
    ProbeRun r;
    FILE* p = ::popen(cmd.c_str(), "r");
    if (p == nullptr) return r;
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    const int st = ::pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
}

TEST(P2pAllocProbe, JsonNamesTheCmbAndChoosesItForItsOwnController) {
    const ProbeRun r = probe("--json --p2p nvme0");
    ASSERT_EQ(r.status, 0) << r.out;
    const json j = json::parse(r.out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r.out;
    ASSERT_EQ(j["providers"].size(), 1u);
    EXPECT_EQ(j["providers"][0]["bdf"], "0000:00:03.0");
    EXPECT_EQ(j["providers"][0]["kind"], "nvme_cmb");
    EXPECT_EQ(j["providers"][0]["size"], 16u << 20);
    EXPECT_EQ(j["providers"][0]["bar"], 2);
    EXPECT_EQ(j["clients"][0]["name"], "nvme0");
    EXPECT_EQ(j["clients"][0]["bdf"], "0000:00:03.0");
    EXPECT_EQ(j["clients"][0]["host_bridge"], "pci0000:00");
    EXPECT_EQ(j["choice"]["provider"], "0000:00:03.0");
    EXPECT_EQ(j["choice"]["verdicts"][0]["distance"], 0);
    EXPECT_EQ(j["choice"]["verdicts"][0]["usable"], true);
}

TEST(P2pAllocProbe, TextExplainsARefusalThroughTheHostBridge) {
    const ProbeRun r = probe("--p2p 0000:00:04.0");
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("0000:00:03.0: not usable, through the host bridge"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("Choice: none"), std::string::npos) << r.out;
}

TEST(P2pAllocProbe, WithoutClientsListsProvidersOnly) {
    const ProbeRun r = probe("--json --p2p");
    ASSERT_EQ(r.status, 0) << r.out;
    const json j = json::parse(r.out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r.out;
    EXPECT_EQ(j["providers"].size(), 1u);
    EXPECT_TRUE(j["clients"].empty());
    EXPECT_TRUE(j["choice"].is_null());
}

TEST(P2pAllocProbe, AClientThatIsNotThereIsReportedAndExitsOne) {
    const ProbeRun r = probe("--p2p 0000:0a:00.0");
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_NE(r.out.find("0000:0a:00.0: cannot be placed"), std::string::npos) << r.out;
}

} // namespace
