#include <rpm/persistence.hpp>

#include <gtest/gtest.h>

namespace {
using rpm::PersistenceDomain;

TEST(Persistence, NamesRoundTrip) {
    for (auto d : {PersistenceDomain::cpu_cache, PersistenceDomain::memory_controller,
                   PersistenceDomain::none, PersistenceDomain::unknown, PersistenceDomain::not_pmem})
        EXPECT_EQ(rpm::parse_persistence_domain(rpm::to_string(d)), d);
    for (auto g : {rpm::Granularity::byte, rpm::Granularity::cache_line, rpm::Granularity::page})
        EXPECT_EQ(rpm::parse_granularity(rpm::to_string(g)), g);
    for (auto d : {rpm::Ddio::on, rpm::Ddio::off, rpm::Ddio::unknown})
        EXPECT_EQ(rpm::parse_ddio(rpm::to_string(d)), d);
}

TEST(Persistence, LinuxEmptyDomainIsUnknownAndJunkIsRejected) {
    EXPECT_EQ(rpm::parse_persistence_domain(""), PersistenceDomain::unknown);
    EXPECT_EQ(rpm::parse_persistence_domain("eadr"), std::nullopt);
    EXPECT_EQ(rpm::parse_ddio("maybe"), std::nullopt);
    EXPECT_EQ(rpm::parse_granularity("word"), std::nullopt);
}

TEST(Persistence, WeakerPicksTheLesserPromise) {
    EXPECT_EQ(rpm::weaker(PersistenceDomain::cpu_cache, PersistenceDomain::memory_controller),
              PersistenceDomain::memory_controller);
    EXPECT_EQ(rpm::weaker(PersistenceDomain::none, PersistenceDomain::cpu_cache), PersistenceDomain::none);
    EXPECT_EQ(rpm::weaker(PersistenceDomain::unknown, PersistenceDomain::not_pmem),
              PersistenceDomain::not_pmem);
    // Equal strength keeps the first: none and unknown promise the same.
    EXPECT_EQ(rpm::weaker(PersistenceDomain::unknown, PersistenceDomain::none), PersistenceDomain::unknown);
}

TEST(Persistence, GranularityCapsTheDomain) {
    EXPECT_EQ(rpm::domain_cap(rpm::Granularity::byte), PersistenceDomain::cpu_cache);
    EXPECT_EQ(rpm::domain_cap(rpm::Granularity::cache_line), PersistenceDomain::memory_controller);
    EXPECT_EQ(rpm::domain_cap(rpm::Granularity::page), PersistenceDomain::not_pmem);
}

} // namespace
