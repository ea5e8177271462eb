// Every fixture tree's expected.json (which rpm-probe's tests also read)
// agrees with what detect() finds in that tree.
#include <rpm/platform.hpp>
#include "temp_tree.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

namespace rpm::platform {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using testing::kFixtures;

std::vector<fs::path> fixture_trees() {
    std::vector<fs::path> trees;
    std::error_code ec;
    for (fs::directory_iterator it(kFixtures, ec); !ec && it != fs::directory_iterator();
         it.increment(ec))
        if (it->is_directory()) trees.push_back(it->path());
    std::sort(trees.begin(), trees.end());
    return trees;
}

// The "cxl" object rpm-probe prints for a CXL-backed region (the keys
// expected.json gives; rpm-probe adds sizes and the raw domain).
json cxl_summary(const CxlRegion& c) {
    json mem = json::array();
    for (const auto& m : c.memdevs) mem.push_back({{"name", m.name}, {"serial", m.serial}});
    return {{"cxl_region", c.cxl_region},         {"nd_region", c.nd_region},
            {"memdevs", mem},                     {"host_bridge", c.host_bridge},
            {"interleave_ways", c.interleave_ways}, {"interleave_granularity", c.interleave_granularity},
            {"persistence_domain", to_string(c.domain)}};
}

json actual_summary(const Profile& p) {
    const CxlInventory cxl = cxl_inventory(p.root);
    json regions = json::array();
    for (const auto& r : p.regions) {
        json j{{"name", r.name}, {"persistence_domain", to_string(r.domain)}};
        for (const auto& c : cxl.regions)
            if (c.nd_region == r.name) j["cxl"] = cxl_summary(c);
        regions.push_back(j);
    }
    json devices = json::array();
    for (const auto& d : p.rdma_devices)
        devices.push_back({{"name", d.name},
                           {"root_port", d.root_port ? json(d.root_port->bdf) : json(nullptr)},
                           {"ddio", to_string(d.ddio.state)}});
    return {{"regions", regions}, {"rdma_devices", devices}};
}

TEST(DetectExpectedJson, EveryFixtureHasOne) {
    const auto trees = fixture_trees();
    EXPECT_GE(trees.size(), 9u);
    for (const auto& tree : trees) EXPECT_TRUE(fs::exists(tree / "expected.json")) << tree;
}

TEST(DetectExpectedJson, MatchesDetect) {
    for (const auto& tree : fixture_trees()) {
        SCOPED_TRACE(tree.filename().string());
        std::ifstream in(tree / "expected.json");
        const json expected = json::parse(in, nullptr, /*allow_exceptions=*/false);
        ASSERT_FALSE(expected.is_discarded()) << "malformed expected.json";
        DetectOptions opts;
        opts.root = tree;
        auto p = detect(opts);
        ASSERT_TRUE(p) << p.error().message();
        const json actual = actual_summary(*p);
        EXPECT_EQ(actual["regions"], expected["regions"]);
        EXPECT_EQ(actual["rdma_devices"], expected["rdma_devices"]);
    }
}

} // namespace
} // namespace rpm::platform
