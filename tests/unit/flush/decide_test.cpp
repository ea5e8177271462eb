// Every cell of the decision table, written out literally: changing one cell
// in src/flush/decide.cpp makes exactly the matching row fail.
#include <rpm/flush.hpp>

#include <gtest/gtest.h>

#include <tuple>

namespace {
using namespace rpm;
using namespace rpm::flush;
using D = PersistenceDomain;
using SP = ServerPersist;

Inputs make(D domain, Ddio ddio, bool native = false, std::optional<Granularity> g = std::nullopt) {
    Inputs in;
    in.domain = {domain, Source::detected, "test"};
    in.ddio = {ddio, Source::detected, "test"};
    in.native_flush = {native, Source::detected, "test"};
    in.granularity = {g, Source::detected, "test"};
    return in;
}

struct Cell {
    D domain;
    Ddio ddio;
    Method method;
    SP persist;
};

// docs/flush-methods.md, row by row (no native flush, granularity unknown).
const Cell kTable[] = {
    {D::cpu_cache, Ddio::off, Method::read_after_write, SP::none},
    {D::cpu_cache, Ddio::on, Method::read_after_write, SP::none},
    {D::cpu_cache, Ddio::unknown, Method::read_after_write, SP::none},
    {D::memory_controller, Ddio::off, Method::read_after_write, SP::none},
    {D::memory_controller, Ddio::on, Method::send_flush, SP::cache_flush_sfence},
    {D::memory_controller, Ddio::unknown, Method::send_flush, SP::cache_flush_sfence},
    {D::none, Ddio::off, Method::send_flush, SP::cache_flush_sfence_deep_flush},
    {D::none, Ddio::on, Method::send_flush, SP::cache_flush_sfence_deep_flush},
    {D::none, Ddio::unknown, Method::send_flush, SP::cache_flush_sfence_deep_flush},
    {D::unknown, Ddio::off, Method::send_flush, SP::cache_flush_sfence_deep_flush},
    {D::unknown, Ddio::on, Method::send_flush, SP::cache_flush_sfence_deep_flush},
    {D::unknown, Ddio::unknown, Method::send_flush, SP::cache_flush_sfence_deep_flush},
    {D::not_pmem, Ddio::off, Method::send_flush, SP::msync},
    {D::not_pmem, Ddio::on, Method::send_flush, SP::msync},
    {D::not_pmem, Ddio::unknown, Method::send_flush, SP::msync},
};

TEST(FlushDecide, EveryCellOfTheTable) {
    for (const auto& c : kTable) {
        Decision d = decide(make(c.domain, c.ddio));
        SCOPED_TRACE(std::string(to_string(c.domain)) + "/" + std::string(to_string(c.ddio)));
        EXPECT_EQ(d.method, c.method);
        EXPECT_EQ(d.server_persist, c.persist);
        EXPECT_EQ(d.effective_domain, c.domain);
        EXPECT_TRUE(d.overridden.empty());
        EXPECT_EQ(d.reason.find('\n'), std::string::npos) << "reason must be one line";
    }
}

TEST(FlushDecide, ReasonNamesTheInputsAndTheRule) {
    Decision d = decide(make(D::memory_controller, Ddio::unknown));
    EXPECT_NE(d.reason.find("domain memory_controller"), std::string::npos) << d.reason;
    EXPECT_NE(d.reason.find("DDIO unknown"), std::string::npos) << d.reason;
    EXPECT_NE(d.reason.find("unknown counts as on"), std::string::npos) << d.reason;
}

TEST(FlushDecide, NativeFlushIsPreferredForEveryPmDomainAndDdio) {
    for (D dom : {D::cpu_cache, D::memory_controller, D::none, D::unknown})
        for (Ddio dd : {Ddio::on, Ddio::off, Ddio::unknown}) {
            Decision d = decide(make(dom, dd, true));
            EXPECT_EQ(d.method, Method::native_flush) << to_string(dom) << "/" << to_string(dd);
            EXPECT_EQ(d.server_persist, SP::none);
        }
}

TEST(FlushDecide, NativeFlushCannotPersistPageCache) {
    Decision d = decide(make(D::not_pmem, Ddio::off, true));
    EXPECT_EQ(d.method, Method::send_flush);
    EXPECT_EQ(d.server_persist, SP::msync);
    EXPECT_NE(d.reason.find("native flush not used: the region is page cache, not PM"), std::string::npos)
        << d.reason;
    // rdma:// registers it without persistent FLUSH access, and says so.
    EXPECT_NE(d.reason.find("without persistent FLUSH access"), std::string::npos) << d.reason;
}

TEST(FlushDecide, GranularityCapsTheDomain) {
    // pmem2 says page: not PM, whatever the nd region claims.
    Decision d = decide(make(D::cpu_cache, Ddio::off, false, Granularity::page));
    EXPECT_EQ(d.effective_domain, D::not_pmem);
    EXPECT_EQ(d.server_persist, SP::msync);
    EXPECT_NE(d.reason.find("capped to not_pmem by page granularity"), std::string::npos) << d.reason;
    // cache_line under a cpu_cache claim: treat as ADR (pmem2 did not trust eADR).
    d = decide(make(D::cpu_cache, Ddio::on, false, Granularity::cache_line));
    EXPECT_EQ(d.effective_domain, D::memory_controller);
    EXPECT_EQ(d.method, Method::send_flush);
    EXPECT_EQ(d.server_persist, SP::cache_flush_sfence);
    // byte granularity never strengthens a weaker domain.
    d = decide(make(D::unknown, Ddio::off, false, Granularity::byte));
    EXPECT_EQ(d.effective_domain, D::unknown);
    EXPECT_EQ(d.server_persist, SP::cache_flush_sfence_deep_flush);
    // cache_line does not weaken ADR.
    d = decide(make(D::memory_controller, Ddio::off, false, Granularity::cache_line));
    EXPECT_EQ(d.method, Method::read_after_write);
}

TEST(FlushDecide, DomainOverride) {
    Overrides ov;
    ov.domain = Input<D>{D::cpu_cache, Source::override_env, "RPM_PERSISTENCE_DOMAIN"};
    Decision d = decide(make(D::unknown, Ddio::on), ov);
    EXPECT_EQ(d.method, Method::read_after_write);
    EXPECT_EQ(d.inputs.domain.source, Source::override_env);
    ASSERT_EQ(d.overridden.size(), 1u);
    EXPECT_EQ(d.overridden[0], "persistence_domain (RPM_PERSISTENCE_DOMAIN)");
    EXPECT_NE(d.reason.find("[overridden: persistence_domain (RPM_PERSISTENCE_DOMAIN)]"),
              std::string::npos) << d.reason;
}

TEST(FlushDecide, DdioOverride) {
    Overrides ov;
    ov.ddio = Input<Ddio>{Ddio::off, Source::override_config, "/etc/rpm/rpm.json"};
    Decision d = decide(make(D::memory_controller, Ddio::unknown), ov);
    EXPECT_EQ(d.method, Method::read_after_write);
    EXPECT_EQ(d.inputs.ddio.source, Source::override_config);
    ASSERT_EQ(d.overridden.size(), 1u);
    EXPECT_EQ(d.overridden[0], "ddio (/etc/rpm/rpm.json)");
}

TEST(FlushDecide, NativeFlushOverrideBothWays) {
    Overrides on;
    on.native_flush = Input<bool>{true, Source::override_api, "test"};
    EXPECT_EQ(decide(make(D::memory_controller, Ddio::on), on).method, Method::native_flush);
    Overrides off;
    off.native_flush = Input<bool>{false, Source::override_env, "RPM_NATIVE_FLUSH"};
    Decision d = decide(make(D::memory_controller, Ddio::on, true), off);
    EXPECT_EQ(d.method, Method::send_flush);
    EXPECT_EQ(d.overridden.size(), 1u);
}

TEST(FlushDecide, GranularityOverride) {
    Overrides ov;
    ov.granularity = Input<Granularity>{Granularity::page, Source::override_env, "RPM_GRANULARITY"};
    Decision d = decide(make(D::cpu_cache, Ddio::off, false, Granularity::byte), ov);
    EXPECT_EQ(d.effective_domain, D::not_pmem);
    EXPECT_EQ(d.server_persist, SP::msync);
    EXPECT_EQ(d.inputs.granularity.source, Source::override_env);
}

TEST(FlushDecide, AllOverridesAtOnceAreAllReported) {
    Overrides ov;
    ov.domain = Input<D>{D::memory_controller, Source::override_env, "RPM_PERSISTENCE_DOMAIN"};
    ov.ddio = Input<Ddio>{Ddio::off, Source::override_env, "RPM_DDIO"};
    ov.native_flush = Input<bool>{false, Source::override_env, "RPM_NATIVE_FLUSH"};
    ov.granularity = Input<Granularity>{Granularity::cache_line, Source::override_env, "RPM_GRANULARITY"};
    Decision d = decide(make(D::none, Ddio::on, true, Granularity::page), ov);
    EXPECT_EQ(d.method, Method::read_after_write);
    EXPECT_EQ(d.overridden.size(), 4u);
}

TEST(FlushServerPersist, FollowsTheDomainForServerSideStores) {
    EXPECT_EQ(server_persist_for(D::cpu_cache), SP::sfence);
    EXPECT_EQ(server_persist_for(D::memory_controller), SP::cache_flush_sfence);
    EXPECT_EQ(server_persist_for(D::none), SP::cache_flush_sfence_deep_flush);
    EXPECT_EQ(server_persist_for(D::unknown), SP::cache_flush_sfence_deep_flush);
    EXPECT_EQ(server_persist_for(D::not_pmem), SP::msync);
}

TEST(FlushIsSafe, AgreesWithTheTableAndRejectsWrongMethods) {
    for (const auto& c : kTable) {
        EXPECT_TRUE(is_safe(c.method, c.domain, c.ddio, false));
        EXPECT_TRUE(is_safe(Method::send_flush, c.domain, c.ddio, false));
    }
    EXPECT_FALSE(is_safe(Method::read_after_write, D::memory_controller, Ddio::on, false));
    EXPECT_FALSE(is_safe(Method::read_after_write, D::memory_controller, Ddio::unknown, false));
    EXPECT_FALSE(is_safe(Method::read_after_write, D::none, Ddio::off, false));
    EXPECT_FALSE(is_safe(Method::read_after_write, D::not_pmem, Ddio::off, false));
    EXPECT_FALSE(is_safe(Method::native_flush, D::memory_controller, Ddio::on, false));
    EXPECT_FALSE(is_safe(Method::native_flush, D::not_pmem, Ddio::on, true));
    EXPECT_TRUE(is_safe(Method::native_flush, D::unknown, Ddio::on, true));
}

TEST(FlushNames, RoundTripAndRejectJunk) {
    for (auto m : {Method::read_after_write, Method::send_flush, Method::native_flush})
        EXPECT_EQ(parse_method(to_string(m)), m);
    EXPECT_EQ(parse_method("raw"), std::nullopt);
    EXPECT_EQ(to_string(SP::cache_flush_sfence_deep_flush), "cache_flush_sfence_deep_flush");
    EXPECT_TRUE(is_override(Source::override_env));
    EXPECT_FALSE(is_override(Source::assumed));
}

} // namespace
