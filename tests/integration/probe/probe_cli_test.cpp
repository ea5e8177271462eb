// rpm-probe as a user runs it: the real binary, on every fixture tree, with
// its JSON compared against the fixture's expected.json (a subset match:
// every key given there must be present with that value; arrays must have
// the same length and match element by element).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include "tests/support/paths.hpp"

namespace {
namespace fs = std::filesystem;
using nlohmann::json;

struct ProcResult {
    int status = -1;
    std::string out;
};

// Clears every RPM_* variable so the developer's environment cannot leak in.
ProcResult probe(const std::string& args, const std::string& env = "") {
    std::string cmd = "env -u RPM_DDIO -u RPM_PERSISTENCE_DOMAIN -u RPM_NATIVE_FLUSH -u RPM_ATOMIC_WRITE "
                      "-u RPM_GRANULARITY -u RPM_CPU_FLUSH -u RPM_IIO_ROOT_PORT_IDS -u RPM_CONFIG " +
                      env + " " + rpm::test::bin_dir().string() + "/rpm-probe " + args + " 2>&1";
    ProcResult r;
    FILE* p = popen(cmd.c_str(), "r");
    if (p == nullptr) return r;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    int st = pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
}

json probe_json(const std::string& args, const std::string& env = "") {
    ProcResult r = probe("--json " + args, env);
    EXPECT_EQ(r.status, 0) << r.out;
    return json::parse(r.out, nullptr, false);
}

void expect_subset(const json& want, const json& got, const std::string& where) {
    if (want.is_object()) {
        ASSERT_TRUE(got.is_object()) << where << ": expected an object, got " << got.dump();
        for (const auto& [k, v] : want.items()) {
            ASSERT_TRUE(got.contains(k)) << where << ": missing key " << k;
            expect_subset(v, got.at(k), where + "." + k);
        }
    } else if (want.is_array()) {
        ASSERT_TRUE(got.is_array()) << where;
        ASSERT_EQ(want.size(), got.size()) << where << ": got " << got.dump(1);
        for (size_t i = 0; i < want.size(); ++i)
            expect_subset(want[i], got[i], where + "[" + std::to_string(i) + "]");
    } else {
        EXPECT_EQ(want, got) << where;
    }
}

fs::path fixtures() { return rpm::test::fixtures_dir() / "sysfs"; }

TEST(ProbeCli, EveryFixtureMatchesItsExpectedJson) {
    int checked = 0;
    for (const auto& entry : fs::directory_iterator(fixtures())) {
        fs::path expected = entry.path() / "expected.json";
        if (!fs::exists(expected)) continue;
        SCOPED_TRACE(entry.path().filename().string());
        std::ifstream in(expected);
        json want = json::parse(in, nullptr, false);
        ASSERT_FALSE(want.is_discarded()) << expected;
        ASSERT_TRUE(want.contains("decisions")) << expected << " must state its decisions";
        json got = probe_json("--sysfs-root " + entry.path().string());
        expect_subset(want, got, entry.path().filename().string());
        ++checked;
    }
    EXPECT_GE(checked, 8) << "the issue asks for at least eight fixture trees";
}

// Linux 6.15's nmem0/cxl/dirty_shutdown (3 in the fixture) per memdev;
// 6.12 has none, which is null in JSON and said so in text.
TEST(ProbeCli, CxlDirtyShutdownCountPerMemdev) {
    json j = probe_json("--sysfs-root " + (fixtures() / "cxl_k615_dirty_shutdown").string());
    ASSERT_EQ(j["regions"].size(), 1u);
    EXPECT_EQ(j["regions"][0]["cxl"]["memdevs"][0]["dirty_shutdown"], 3);
    EXPECT_EQ(j["cxl"]["memdevs"][0]["dirty_shutdown"], 3);
    ASSERT_EQ(j["nvdimms"].size(), 1u);
    EXPECT_EQ(j["nvdimms"][0]["nmem"], "nmem0");
    EXPECT_EQ(j["nvdimms"][0]["memdev"], "mem0");
    EXPECT_EQ(j["nvdimms"][0]["dirty_shutdown_source"], "/sys/bus/nd/devices/nmem0/cxl/dirty_shutdown");
    ProcResult t = probe("--sysfs-root " + (fixtures() / "cxl_k615_dirty_shutdown").string());
    EXPECT_NE(t.out.find("mem0 (serial 0x1, dirty shutdown count 3)"), std::string::npos) << t.out;

    json old = probe_json("--sysfs-root " + (fixtures() / "cxl_k612_pmem_single").string());
    EXPECT_TRUE(old["regions"][0]["cxl"]["memdevs"][0]["dirty_shutdown"].is_null()) << old.dump(1);
    EXPECT_TRUE(old["nvdimms"][0]["dirty_shutdown"].is_null());
    t = probe("--sysfs-root " + (fixtures() / "cxl_k612_pmem_single").string());
    EXPECT_NE(t.out.find("dirty shutdown count not reported by this kernel or device"), std::string::npos) << t.out;
}

TEST(ProbeCli, CxlRamRegionIsReportedAsNotPm) {
    const std::string root = "--sysfs-root " + (fixtures() / "cxl_k612_ram_region").string();
    json j = probe_json(root);
    EXPECT_TRUE(j["regions"].empty());
    EXPECT_TRUE(j["decisions"].empty());
    ASSERT_EQ(j["cxl"]["ram_regions"].size(), 1u);
    EXPECT_EQ(j["cxl"]["ram_regions"][0]["cxl_region"], "region0");
    EXPECT_EQ(j["cxl"]["ram_regions"][0]["persistent"], false);
    EXPECT_EQ(j["cxl"]["ram_regions"][0]["memdevs"][0]["name"], "mem0");
    EXPECT_TRUE(j["unreadable"].empty()) << j["unreadable"].dump();
    ProcResult t = probe(root);
    EXPECT_NE(t.out.find("CXL region0 (mode ram: mem0): volatile, not persistent memory"), std::string::npos)
        << t.out;
}

TEST(ProbeCli, TextReportNamesMethodAndReason) {
    ProcResult r = probe("--sysfs-root " + (fixtures() / "adr_ddio_on").string());
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("region0 via mlx5_0: send_flush, server persist cache_flush_sfence"),
              std::string::npos) << r.out;
    EXPECT_NE(r.out.find("why: "), std::string::npos);
}

TEST(ProbeCli, EnvironmentOverrideChangesTheDecisionAndIsReported) {
    json j = probe_json("--sysfs-root " + (fixtures() / "adr_ddio_on").string(), "RPM_DDIO=off");
    ASSERT_FALSE(j["decisions"].empty());
    EXPECT_EQ(j["decisions"][0]["method"], "read_after_write");
    EXPECT_EQ(j["rdma_devices"][0]["ddio"], "off");
    EXPECT_EQ(j["rdma_devices"][0]["ddio_source"], "override (environment)");
    EXPECT_EQ(j["rdma_devices"][0]["ddio_origin"], "RPM_DDIO");
    EXPECT_EQ(j["decisions"][0]["overridden"][0], "ddio (RPM_DDIO)");
}

// A CXL region's domain is overridden as an NFIT region's is (an operator
// who knows the platform flushes caches on power loss), and the CXL origin
// stays in the report.
TEST(ProbeCli, CxlRegionsDomainIsOverriddenLikeNfits) {
    json j = probe_json("--sysfs-root " + (fixtures() / "cxl_pmem_single").string(),
                        "RPM_PERSISTENCE_DOMAIN=cpu_cache");
    ASSERT_FALSE(j["regions"].empty());
    EXPECT_EQ(j["regions"][0]["persistence_domain"], "cpu_cache");
    EXPECT_EQ(j["regions"][0]["persistence_domain_source"], "override (environment)");
    EXPECT_EQ(j["regions"][0]["raw_persistence_domain"], "memory_controller");
    EXPECT_EQ(j["regions"][0]["cxl"]["cxl_region"], "region0");
    ASSERT_FALSE(j["decisions"].empty());
    EXPECT_EQ(j["decisions"][0]["method"], "read_after_write");
}

TEST(ProbeCli, ConfigFileOverride) {
    fs::path cfg = fs::path(testing::TempDir()) / "probe-config.json";
    std::ofstream(cfg) << R"({"persistence_domain": {"region0": "cpu_cache"}})";
    json j = probe_json("--config " + cfg.string() + " --sysfs-root " + (fixtures() / "adr_ddio_on").string());
    EXPECT_EQ(j["regions"][0]["persistence_domain"], "cpu_cache");
    EXPECT_EQ(j["regions"][0]["persistence_domain_source"], "override (configuration)");
    EXPECT_EQ(j["decisions"][0]["method"], "read_after_write");
}

TEST(ProbeCli, PmemPathOnTmpfsIsNotPmemAndStillDecidedWithoutADevice) {
    fs::path pool = "/dev/shm/rpm-probe-test.pool";
    std::ofstream(pool).close();
    fs::resize_file(pool, 1 << 20);
    json j = probe_json("--sysfs-root " + (fixtures() / "no_nd_regions").string() + " --pmem " + pool.string());
    fs::remove(pool);
    ASSERT_EQ(j["regions"].size(), 1u);
    EXPECT_EQ(j["regions"][0]["kind"], "tmpfs_file");
    EXPECT_EQ(j["regions"][0]["granularity"], "page");
    EXPECT_EQ(j["regions"][0]["persistence_domain"], "not_pmem");
    ASSERT_FALSE(j["decisions"].empty());
    EXPECT_EQ(j["decisions"][0]["server_persist"], "msync");
}

TEST(ProbeCli, RunsOnThisMachine) {
    json j = probe_json("");
    ASSERT_TRUE(j.is_object());
    EXPECT_TRUE(j["cpu"]["flush_instructions"].is_array());
    EXPECT_TRUE(j["regions"].is_array());
    EXPECT_TRUE(j["rdma_devices"].is_array());
    EXPECT_TRUE(j["decisions"].is_array());
}

TEST(ProbeCli, BadInputGetsAClearErrorAndNonZeroExit) {
    ProcResult missing_root = probe("--sysfs-root /nonexistent/root");
    EXPECT_NE(missing_root.status, 0);
    EXPECT_NE(missing_root.out.find("/nonexistent/root"), std::string::npos) << missing_root.out;

    ProcResult missing_pmem = probe("--pmem /nonexistent/pool");
    EXPECT_EQ(missing_pmem.status, 2);
    EXPECT_NE(missing_pmem.out.find("--pmem /nonexistent/pool"), std::string::npos) << missing_pmem.out;
    EXPECT_NE(missing_pmem.out.find("no such file"), std::string::npos) << missing_pmem.out;

    ProcResult bad_env = probe("", "RPM_DDIO=sideways");
    EXPECT_EQ(bad_env.status, 2);
    EXPECT_NE(bad_env.out.find("RPM_DDIO=\"sideways\""), std::string::npos) << bad_env.out;

    ProcResult bad_flag = probe("--frobnicate");
    EXPECT_NE(bad_flag.status, 0);
    EXPECT_NE(bad_flag.out.find("frobnicate"), std::string::npos) << bad_flag.out;

    ProcResult not_pm = probe("--pmem /dev/null");
    EXPECT_EQ(not_pm.status, 2);
    EXPECT_NE(not_pm.out.find("not persistent memory"), std::string::npos) << not_pm.out;
}


// --dirty-shutdown-since (issue 52): the counts now against an earlier
// rpm-probe --json, saved as a file the way an operator would.

const std::string kCxl615 = "--sysfs-root " + (fixtures() / "cxl_k615_dirty_shutdown").string();

fs::path save_json(const std::string& name, const json& j) {
    fs::path file = fs::path(testing::TempDir()) / name;
    std::ofstream(file) << j.dump(2);
    return file;
}

// The baseline as rpm-probe writes it for the 6.15 tree (count 3 on mem0).
json cxl615_baseline() { return probe_json(kCxl615); }

TEST(ProbeCli, DirtyShutdownSinceTheSameTreeIsUnchanged) {
    const fs::path base = save_json("dss-same.json", cxl615_baseline());
    ProcResult t = probe(kCxl615 + " --dirty-shutdown-since " + base.string());
    EXPECT_EQ(t.status, 0) << t.out;
    EXPECT_NE(t.out.find("Dirty shutdown since " + base.string() + ":"), std::string::npos) << t.out;
    EXPECT_NE(t.out.find("mem0 (serial 0x1): unchanged (3)"), std::string::npos) << t.out;

    ProcResult r = probe("--json " + kCxl615 + " --dirty-shutdown-since " + base.string());
    EXPECT_EQ(r.status, 0) << r.out;
    json j = json::parse(r.out, nullptr, false);
    ASSERT_TRUE(j.contains("dirty_shutdown_since")) << r.out;
    const json& s = j["dirty_shutdown_since"];
    EXPECT_EQ(s["file"], base.string());
    EXPECT_EQ(s["moved"], false);
    ASSERT_EQ(s["devices"].size(), 1u) << s.dump(1);
    expect_subset(json{{"nmem", "nmem0"}, {"memdev", "mem0"}, {"serial", 1}, {"before", 3}, {"now", 3},
                       {"moved", false}, {"status", "unchanged"}},
                  s["devices"][0], "devices[0]");
}

// A smaller count in the baseline: the device had a dirty shutdown since.
TEST(ProbeCli, DirtyShutdownThatMovedExitsThree) {
    json b = cxl615_baseline();
    b["nvdimms"][0]["dirty_shutdown"] = 2;
    b["cxl"]["memdevs"][0]["dirty_shutdown"] = 2;
    const fs::path base = save_json("dss-moved.json", b);
    ProcResult t = probe(kCxl615 + " --dirty-shutdown-since " + base.string());
    EXPECT_EQ(t.status, 3) << t.out;
    EXPECT_NE(t.out.find("mem0 (serial 0x1): moved 2 -> 3: a power loss may have lost data not yet durable "
                         "elsewhere"),
              std::string::npos)
        << t.out;

    ProcResult r = probe("--json " + kCxl615 + " --dirty-shutdown-since " + base.string());
    EXPECT_EQ(r.status, 3) << r.out;
    json j = json::parse(r.out, nullptr, false);
    ASSERT_TRUE(j.contains("dirty_shutdown_since")) << r.out;
    EXPECT_EQ(j["dirty_shutdown_since"]["moved"], true);
    expect_subset(json::array({json{{"serial", 1}, {"before", 2}, {"now", 3}, {"moved", true}, {"status", "moved"}}}),
                  j["dirty_shutdown_since"]["devices"], "devices");
    // The rest of the report is there as without the option.
    EXPECT_EQ(j["nvdimms"][0]["dirty_shutdown"], 3);
}

// Linux 6.12 shows no count: the baseline has nothing to compare with.
TEST(ProbeCli, DirtyShutdownWithoutACountInTheBaselineIsNoBaseline) {
    const fs::path base =
        save_json("dss-k612.json", probe_json("--sysfs-root " + (fixtures() / "cxl_k612_pmem_single").string()));
    ProcResult t = probe(kCxl615 + " --dirty-shutdown-since " + base.string());
    EXPECT_EQ(t.status, 0) << t.out;
    EXPECT_NE(t.out.find("mem0 (serial 0x1): no baseline (count 3 now, none in the baseline)"), std::string::npos)
        << t.out;
    ProcResult r = probe("--json " + kCxl615 + " --dirty-shutdown-since " + base.string());
    EXPECT_EQ(r.status, 0) << r.out;
    json j = json::parse(r.out, nullptr, false);
    ASSERT_TRUE(j.contains("dirty_shutdown_since")) << r.out;
    expect_subset(json::array({json{{"before", nullptr}, {"now", 3}, {"moved", nullptr}, {"status", "no_baseline"}}}),
                  j["dirty_shutdown_since"]["devices"], "devices");
}

TEST(ProbeCli, DirtyShutdownSinceAFileThatIsNotABaselineIsAnError) {
    fs::path garbage = fs::path(testing::TempDir()) / "dss-garbage.txt";
    std::ofstream(garbage) << "not json at all\n";
    ProcResult t = probe(kCxl615 + " --dirty-shutdown-since " + garbage.string());
    EXPECT_EQ(t.status, 2) << t.out;
    EXPECT_NE(t.out.find("--dirty-shutdown-since " + garbage.string() + ": not JSON"), std::string::npos) << t.out;

    // JSON, but not rpm-probe's (an overrides file).
    const fs::path other = save_json("dss-other.json", json{{"ddio", "off"}});
    t = probe(kCxl615 + " --dirty-shutdown-since " + other.string());
    EXPECT_EQ(t.status, 2) << t.out;
    EXPECT_NE(t.out.find(other.string() + ": not rpm-probe --json output"), std::string::npos) << t.out;

    // rpm-probe's, with a count that is not one.
    json b = cxl615_baseline();
    b["nvdimms"][0]["dirty_shutdown"] = "three";
    const fs::path bad = save_json("dss-bad-count.json", b);
    t = probe(kCxl615 + " --dirty-shutdown-since " + bad.string());
    EXPECT_EQ(t.status, 2) << t.out;
    EXPECT_NE(t.out.find(bad.string() + ": nvdimms[0].dirty_shutdown is not a count"), std::string::npos) << t.out;

    t = probe(kCxl615 + " --dirty-shutdown-since /nonexistent/baseline.json");
    EXPECT_EQ(t.status, 2) << t.out;
    EXPECT_NE(t.out.find("/nonexistent/baseline.json"), std::string::npos) << t.out;
}

// Memdev and nmem names follow probe order and can change across boots:
// the serial is what identifies the device.
TEST(ProbeCli, DirtyShutdownMatchesCxlDevicesBySerialNotName) {
    json b = cxl615_baseline();
    b["cxl"]["memdevs"][0]["name"] = "mem7";
    b["nvdimms"][0]["memdev"] = "mem7";
    b["nvdimms"][0]["nmem"] = "nmem4";
    const fs::path base = save_json("dss-renamed.json", b);
    ProcResult t = probe(kCxl615 + " --dirty-shutdown-since " + base.string());
    EXPECT_EQ(t.status, 0) << t.out;
    EXPECT_NE(t.out.find("mem0 (serial 0x1, mem7 in the baseline): unchanged (3)"), std::string::npos) << t.out;
    EXPECT_EQ(t.out.find("gone"), std::string::npos) << t.out;

    // Another serial under the same names is another device.
    b = cxl615_baseline();
    b["cxl"]["memdevs"][0]["serial"] = 2;
    const fs::path other = save_json("dss-other-serial.json", b);
    ProcResult r = probe("--json " + kCxl615 + " --dirty-shutdown-since " + other.string());
    EXPECT_EQ(r.status, 0) << r.out;
    json j = json::parse(r.out, nullptr, false);
    ASSERT_TRUE(j.contains("dirty_shutdown_since")) << r.out;
    expect_subset(json::array({json{{"serial", 1}, {"status", "no_baseline"}},
                               json{{"serial", 2}, {"memdev", "mem0"}, {"before", 3}, {"now", nullptr},
                                    {"status", "gone"}}}),
                  j["dirty_shutdown_since"]["devices"], "devices");
}

// NFIT nvdimms have no serial here: matched by nmem name, serial null.
TEST(ProbeCli, DirtyShutdownOfNfitNvdimmsByNmemName) {
    const fs::path root = fs::path(testing::TempDir()) / "dss-nfit";
    fs::remove_all(root);
    for (const char* nmem : {"nmem0", "nmem1"}) {
        fs::create_directories(root / "sys/bus/nd/devices" / nmem / "nfit");
        std::ofstream(root / "sys/bus/nd/devices" / nmem / "nfit/dirty_shutdown") << "5\n";
    }
    const std::string tree = "--sysfs-root " + root.string();
    json b = probe_json(tree);
    ASSERT_EQ(b["nvdimms"].size(), 2u) << b.dump(1);
    b["nvdimms"][1]["dirty_shutdown"] = 4;
    const fs::path base = save_json("dss-nfit.json", b);
    ProcResult t = probe(tree + " --dirty-shutdown-since " + base.string());
    EXPECT_EQ(t.status, 3) << t.out;
    EXPECT_NE(t.out.find("  nmem0: unchanged (5)"), std::string::npos) << t.out;
    EXPECT_NE(t.out.find("  nmem1: moved 4 -> 5:"), std::string::npos) << t.out;
    ProcResult r = probe("--json " + tree + " --dirty-shutdown-since " + base.string());
    json j = json::parse(r.out, nullptr, false);
    ASSERT_TRUE(j.contains("dirty_shutdown_since")) << r.out;
    expect_subset(json::array({json{{"nmem", "nmem0"}, {"memdev", nullptr}, {"serial", nullptr}, {"moved", false}},
                               json{{"nmem", "nmem1"}, {"serial", nullptr}, {"moved", true}}}),
                  j["dirty_shutdown_since"]["devices"], "devices");
    fs::remove_all(root);
}

} // namespace
