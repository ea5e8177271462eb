#include <rpm/overrides.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

namespace {
using namespace rpm;
using flush::Source;

struct FakeEnv {
    std::map<std::string, std::string> vars;
    EnvLookup fn() const {
        return [this](const char* k) -> const char* {
            auto it = vars.find(k);
            return it == vars.end() ? nullptr : it->second.c_str();
        };
    }
};

std::filesystem::path write_config(const std::string& name, const std::string& text) {
    auto p = std::filesystem::path(testing::TempDir()) / name;
    std::ofstream(p) << text;
    return p;
}

TEST(OverridesEnv, EmptyEnvironmentGivesNoOverrides) {
    FakeEnv env;
    auto o = overrides_from_env(env.fn());
    ASSERT_TRUE(o);
    EXPECT_TRUE(o->empty());
}

TEST(OverridesEnv, GlobalAndPerNameValues) {
    FakeEnv env{{{"RPM_DDIO", "off,mlx5_1=on"}, {"RPM_PERSISTENCE_DOMAIN", "region1=cpu_cache"}}};
    auto o = overrides_from_env(env.fn());
    ASSERT_TRUE(o) << o.error().message();
    EXPECT_EQ(Overrides::lookup(o->ddio, "mlx5_0")->value, Ddio::off);
    EXPECT_EQ(Overrides::lookup(o->ddio, "mlx5_1")->value, Ddio::on);
    EXPECT_EQ(Overrides::lookup(o->ddio, "mlx5_1")->source, Source::override_env);
    EXPECT_EQ(Overrides::lookup(o->ddio, "mlx5_1")->origin, "RPM_DDIO");
    EXPECT_FALSE(Overrides::lookup(o->persistence_domain, "region0"));
    EXPECT_EQ(Overrides::lookup(o->persistence_domain, "region1")->value, PersistenceDomain::cpu_cache);
}

TEST(OverridesEnv, EveryVariableIsRead) {
    FakeEnv env{{{"RPM_PERSISTENCE_DOMAIN", "memory_controller"}, {"RPM_DDIO", "unknown"},
                 {"RPM_NATIVE_FLUSH", "yes"}, {"RPM_ATOMIC_WRITE", "no"}, {"RPM_GRANULARITY", "byte"},
                 {"RPM_CPU_FLUSH", "clwb,clflush"}, {"RPM_IIO_ROOT_PORT_IDS", "347a,0x352B"}}};
    auto o = overrides_from_env(env.fn());
    ASSERT_TRUE(o) << o.error().message();
    EXPECT_EQ(o->persistence_domain.at("*").value, PersistenceDomain::memory_controller);
    EXPECT_EQ(o->ddio.at("*").value, Ddio::unknown);
    EXPECT_TRUE(o->native_flush.at("*").value);
    EXPECT_FALSE(o->atomic_write.at("*").value);
    EXPECT_EQ(o->granularity.at("*").value, Granularity::byte);
    ASSERT_TRUE(o->cpu_flush);
    EXPECT_TRUE(o->cpu_flush->value.clwb);
    EXPECT_FALSE(o->cpu_flush->value.clflushopt);
    EXPECT_TRUE(o->cpu_flush->value.clflush);
    EXPECT_EQ(o->iio_root_port_ids, (std::vector<std::uint16_t>{0x347a, 0x352b}));
}

TEST(OverridesEnv, BadValuesNameTheVariableAndTheChoices) {
    const std::pair<const char*, const char*> bad[] = {
        {"RPM_DDIO", "maybe"},        {"RPM_PERSISTENCE_DOMAIN", "eadr"}, {"RPM_NATIVE_FLUSH", "sure"},
        {"RPM_ATOMIC_WRITE", "2"},    {"RPM_GRANULARITY", "word"},        {"RPM_CPU_FLUSH", "pcommit"},
        {"RPM_IIO_ROOT_PORT_IDS", "xyz"}, {"RPM_DDIO", "=off"},
    };
    for (auto [var, value] : bad) {
        FakeEnv env{{{var, value}}};
        auto o = overrides_from_env(env.fn());
        ASSERT_FALSE(o) << var << "=" << value;
        EXPECT_EQ(o.error().code(), errc::bad_override);
        EXPECT_NE(o.error().message().find(var), std::string::npos) << o.error().message();
        EXPECT_NE(o.error().message().find("accepted"), std::string::npos) << o.error().message();
    }
}

TEST(OverridesForDecision, PicksTheRegionAndDeviceValues) {
    FakeEnv env{{{"RPM_DDIO", "mlx5_0=off"}, {"RPM_PERSISTENCE_DOMAIN", "region0=cpu_cache"},
                 {"RPM_NATIVE_FLUSH", "yes"}}};
    auto o = overrides_from_env(env.fn());
    ASSERT_TRUE(o);
    auto ov = o->for_decision("region0", "mlx5_0");
    ASSERT_TRUE(ov.ddio && ov.domain && ov.native_flush);
    EXPECT_EQ(ov.ddio->value, Ddio::off);
    EXPECT_FALSE(ov.granularity);
    auto other = o->for_decision("region1", "mlx5_1");
    EXPECT_FALSE(other.ddio);
    EXPECT_FALSE(other.domain);
    EXPECT_TRUE(other.native_flush);  // global
    auto no_device = o->for_decision("region0", "");
    EXPECT_FALSE(no_device.ddio);  // per-device value does not apply without a device
}

TEST(OverridesConfig, ReadsEveryKey) {
    auto p = write_config("all.json", R"({
        "persistence_domain": {"region0": "cpu_cache", "*": "none"},
        "granularity": "cache_line", "ddio": {"mlx5_0": "off"},
        "native_flush": false, "atomic_write": "yes",
        "cpu_flush": ["clflushopt"], "iio_root_port_ids": ["347a"]})");
    auto o = overrides_from_config(p);
    ASSERT_TRUE(o) << o.error().message();
    EXPECT_EQ(Overrides::lookup(o->persistence_domain, "region0")->value, PersistenceDomain::cpu_cache);
    EXPECT_EQ(Overrides::lookup(o->persistence_domain, "region9")->value, PersistenceDomain::none);
    EXPECT_EQ(o->persistence_domain.at("region0").source, Source::override_config);
    EXPECT_EQ(o->persistence_domain.at("region0").origin, p.string());
    EXPECT_EQ(o->granularity.at("*").value, Granularity::cache_line);
    EXPECT_EQ(o->ddio.at("mlx5_0").value, Ddio::off);
    EXPECT_FALSE(o->native_flush.at("*").value);
    EXPECT_TRUE(o->atomic_write.at("*").value);
    EXPECT_TRUE(o->cpu_flush->value.clflushopt);
    EXPECT_FALSE(o->cpu_flush->value.clwb);
    EXPECT_EQ(o->iio_root_port_ids, std::vector<std::uint16_t>{0x347a});
}

TEST(OverridesConfig, ErrorsNameTheFileAndTheKey) {
    const std::pair<const char*, const char*> bad[] = {
        {"typo.json", R"({"dido": "off"})"},
        {"value.json", R"({"ddio": "sideways"})"},
        {"nested.json", R"({"ddio": {"mlx5_0": 3}})"},
        {"cpu.json", R"({"cpu_flush": "clwb"})"},
        {"ids.json", R"({"iio_root_port_ids": ["12345"]})"},
        {"array.json", R"([1,2])"},
        {"broken.json", R"({"ddio": )"},
    };
    for (auto [name, text] : bad) {
        auto p = write_config(name, text);
        auto o = overrides_from_config(p);
        ASSERT_FALSE(o) << name;
        EXPECT_EQ(o.error().code(), errc::bad_config);
        EXPECT_NE(o.error().message().find(p.string()), std::string::npos) << o.error().message();
    }
    auto missing = overrides_from_config("/nonexistent/rpm.json");
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().code(), errc::bad_config);
}

TEST(OverridesLoad, EnvironmentWinsOverConfiguration) {
    auto p = write_config("base.json", R"({"ddio": "on", "persistence_domain": "memory_controller"})");
    FakeEnv env{{{"RPM_CONFIG", p.string()}, {"RPM_DDIO", "off"}}};
    auto o = load_overrides(std::nullopt, env.fn());
    ASSERT_TRUE(o) << o.error().message();
    EXPECT_EQ(o->ddio.at("*").value, Ddio::off);
    EXPECT_EQ(o->ddio.at("*").source, Source::override_env);
    EXPECT_EQ(o->persistence_domain.at("*").source, Source::override_config);
    // An explicit path beats RPM_CONFIG; a bad one is an error, not ignored.
    auto bad = load_overrides(std::filesystem::path("/nonexistent.json"), env.fn());
    EXPECT_FALSE(bad);
}

} // namespace
