// The persistence model's events one by one. The crash test trusts the model
// to be neither too kind (then no method could fail) nor too harsh (then no
// method could pass); these tests pin each rule of docs/persistence-model.md.
#include "tests/support/persistence_model.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <vector>

namespace {
using namespace rpm;
using namespace rpm::test;
using D = PersistenceDomain;
using SP = flush::ServerPersist;
using Range = server::Range;

constexpr std::byte kOld{0x11};
constexpr std::byte kNew{0x22};
constexpr int kSeeds = 64;

ModelConfig config(D domain, Ddio ddio, std::uint64_t seed = 1) {
    ModelConfig c;
    c.domain = domain;
    c.ddio = ddio;
    c.size = 1024;
    c.seed = seed;
    return c;
}

std::vector<std::byte> bytes(std::size_t n, std::byte v) { return std::vector<std::byte>(n, v); }

// A model whose whole region durably holds kOld.
PersistenceModel preset_model(D domain, Ddio ddio, std::uint64_t seed = 1) {
    PersistenceModel m(config(domain, ddio, seed));
    m.preset(0, bytes(m.size(), kOld));
    return m;
}

// How line 0 looks after a crash, over many seeds: every new value kept,
// every one lost, or torn between words. `garbage` counts images with a
// word that is neither all old nor all new: that would break the model's
// 8-byte atomicity.
struct Outcomes {
    int kept = 0, lost = 0, torn = 0, garbage = 0;
};

Outcomes crash_line0(D domain, Ddio ddio, const std::function<void(PersistenceModel&)>& events) {
    Outcomes o;
    for (int seed = 1; seed <= kSeeds; ++seed) {
        PersistenceModel m = preset_model(domain, ddio, static_cast<std::uint64_t>(seed));
        events(m);
        const auto img = m.crash();
        int old_words = 0, new_words = 0;
        for (std::size_t w = 0; w < PersistenceModel::kLine; w += 8) {
            if (std::memcmp(&img[w], bytes(8, kNew).data(), 8) == 0) ++new_words;
            else if (std::memcmp(&img[w], bytes(8, kOld).data(), 8) == 0) ++old_words;
        }
        if (old_words + new_words != 8) ++o.garbage;
        else if (new_words == 8) ++o.kept;
        else if (old_words == 8) ++o.lost;
        else ++o.torn;
    }
    return o;
}

void write_line0(PersistenceModel& m) { m.nic_write(0, bytes(64, kNew)); }

bool always_kept(const Outcomes& o) { return o.kept == kSeeds; }
// Some seed lost some new word, and no word ever mixed old and new bytes.
bool can_lose(const Outcomes& o) { return o.lost + o.torn > 0 && o.garbage == 0; }

TEST(ModelMechanics, NicWriteAloneSurvivesInNoDomain) {
    for (D d : {D::cpu_cache, D::memory_controller, D::none, D::unknown, D::not_pmem}) {
        SCOPED_TRACE(std::string(to_string(d)));
        PersistenceModel m = preset_model(d, Ddio::on);
        write_line0(m);
        EXPECT_EQ(m.level_of(0), Level::iio);
        const Outcomes o = crash_line0(d, Ddio::on, write_line0);
        EXPECT_TRUE(can_lose(o)) << "IIO buffers are never persistent";
        EXPECT_GT(o.torn, 0) << "words tear independently";
    }
}

TEST(ModelMechanics, ReadAndReceivePushIioOneLevelByDdio) {
    for (Ddio ddio : {Ddio::on, Ddio::off, Ddio::unknown}) {
        const Level next = ddio == Ddio::off ? Level::wpq : Level::llc;
        PersistenceModel m = preset_model(D::memory_controller, ddio);
        m.store(128, bytes(8, kNew));  // a CPU store: in the LLC, not the IIO
        write_line0(m);
        m.nic_read();
        EXPECT_EQ(m.level_of(0), next) << to_string(ddio);
        EXPECT_EQ(m.level_of(64), Level::media) << "untouched lines stay";
        EXPECT_EQ(m.level_of(128), Level::llc) << "a read moves IIO lines only";
        m.nic_write(64, bytes(8, kNew));
        m.nic_receive();
        EXPECT_EQ(m.level_of(64), next);
        EXPECT_EQ(m.level_of(0), next) << "a push moves a line one level, not two";
    }
}

TEST(ModelMechanics, WhatAReadMakesDurablePerDomain) {
    auto read_after_write = [](PersistenceModel& m) {
        write_line0(m);
        m.nic_read();
    };
    EXPECT_TRUE(always_kept(crash_line0(D::cpu_cache, Ddio::on, read_after_write)));
    EXPECT_TRUE(always_kept(crash_line0(D::cpu_cache, Ddio::off, read_after_write)));
    EXPECT_TRUE(always_kept(crash_line0(D::memory_controller, Ddio::off, read_after_write)));
    EXPECT_TRUE(can_lose(crash_line0(D::memory_controller, Ddio::on, read_after_write)));
    EXPECT_TRUE(can_lose(crash_line0(D::none, Ddio::off, read_after_write)));
    EXPECT_TRUE(can_lose(crash_line0(D::unknown, Ddio::off, read_after_write)));
    EXPECT_TRUE(can_lose(crash_line0(D::not_pmem, Ddio::off, read_after_write)));
}

TEST(ModelMechanics, CacheFlushMovesTheNamedLinesToWpq) {
    PersistenceModel m = preset_model(D::memory_controller, Ddio::on);
    m.nic_write(0, bytes(128, kNew));
    m.nic_read();                      // lines 0 and 1 in the LLC
    m.nic_write(128, bytes(8, kNew));  // line 2 still in the IIO buffer
    const Range ranges[] = {{0, 64}, {128, 8}};
    ASSERT_TRUE(m.persist(SP::cache_flush_sfence, ranges));
    EXPECT_EQ(m.level_of(0), Level::wpq);
    EXPECT_EQ(m.level_of(64), Level::llc) << "not named, not flushed";
    EXPECT_EQ(m.level_of(128), Level::wpq) << "CLFLUSHOPT also flushes the IIO buffers";
    EXPECT_TRUE(always_kept(crash_line0(D::memory_controller, Ddio::on, [](PersistenceModel& x) {
        write_line0(x);
        x.nic_receive();
        const Range r{0, 64};
        (void)x.persist(SP::cache_flush_sfence, {&r, 1});
    })));
}

TEST(ModelMechanics, DeepFlushDrainsEveryWpqLineInPm) {
    auto flush_one = [](SP step) {
        return [step](PersistenceModel& x) {
            x.nic_write(0, bytes(128, kNew));
            x.nic_receive();
            const Range r{0, 1};  // names line 0 only
            (void)x.persist(step, {&r, 1});
        };
    };
    EXPECT_TRUE(can_lose(crash_line0(D::none, Ddio::on, flush_one(SP::cache_flush_sfence))));
    EXPECT_TRUE(always_kept(crash_line0(D::none, Ddio::on, flush_one(SP::cache_flush_sfence_deep_flush))));

    PersistenceModel m = preset_model(D::none, Ddio::off);
    m.nic_write(0, bytes(128, kNew));
    m.nic_read();  // both lines in the WPQ
    const Range r{0, 1};
    ASSERT_TRUE(m.persist(SP::cache_flush_sfence_deep_flush, {&r, 1}));
    EXPECT_EQ(m.level_of(64), Level::media) << "deep flush drains the whole WPQ";
    EXPECT_EQ(m.unsettled_lines(), 0u);
}

TEST(ModelMechanics, NotPmemOnlyMsyncPersists) {
    auto with = [](SP step) {
        return [step](PersistenceModel& x) {
            write_line0(x);
            x.nic_receive();
            const Range r{0, 64};
            (void)x.persist(step, {&r, 1});
        };
    };
    EXPECT_TRUE(can_lose(crash_line0(D::not_pmem, Ddio::on, with(SP::cache_flush_sfence_deep_flush))))
        << "CLWB only reaches DRAM and there is no deep flush for the page cache";
    EXPECT_TRUE(always_kept(crash_line0(D::not_pmem, Ddio::on, with(SP::msync))));
    EXPECT_TRUE(always_kept(crash_line0(D::none, Ddio::on, with(SP::msync)))) << "msync on DAX flushes too";
}

TEST(ModelMechanics, SfenceAndNoneMoveNothing) {
    for (SP step : {SP::none, SP::sfence}) {
        PersistenceModel m = preset_model(D::memory_controller, Ddio::on);
        write_line0(m);
        m.store(64, bytes(8, kNew));
        const Range r{0, 128};
        ASSERT_TRUE(m.persist(step, {&r, 1}));
        EXPECT_EQ(m.level_of(0), Level::iio);
        EXPECT_EQ(m.level_of(64), Level::llc);
    }
}

TEST(ModelMechanics, NativeFlushPersistsItsRangeOnly) {
    PersistenceModel m = preset_model(D::none, Ddio::on);
    m.nic_write(0, bytes(192, kNew));
    m.nic_native_flush(10, 60);  // lines 0 and 1
    EXPECT_EQ(m.level_of(0), Level::media);
    EXPECT_EQ(m.level_of(64), Level::media);
    EXPECT_EQ(m.level_of(128), Level::iio);
    EXPECT_TRUE(always_kept(crash_line0(D::none, Ddio::on, [](PersistenceModel& x) {
        write_line0(x);
        x.nic_native_flush(0, 64);
    })));
}

TEST(ModelMechanics, CpuStoresLandInTheLlc) {
    auto store_line0 = [](PersistenceModel& x) { x.store(0, bytes(64, kNew)); };
    EXPECT_TRUE(always_kept(crash_line0(D::cpu_cache, Ddio::off, store_line0))) << "eADR: the LLC is persistent";
    EXPECT_TRUE(can_lose(crash_line0(D::memory_controller, Ddio::off, store_line0)));
    EXPECT_TRUE(always_kept(crash_line0(D::memory_controller, Ddio::off, [&](PersistenceModel& x) {
        store_line0(x);
        const Range r{0, 64};
        (void)x.persist(SP::cache_flush_sfence, {&r, 1});
    })));
}

TEST(ModelMechanics, Store8IsNeverTornButWiderWritesTearPerWord) {
    int old_seen = 0, new_seen = 0, wide_torn = 0;
    for (std::uint64_t seed = 1; seed <= 200; ++seed) {
        PersistenceModel m = preset_model(D::memory_controller, Ddio::on, seed);
        m.store8(8, 0x2222222222222222ull);
        m.store(32, bytes(16, kNew));  // words 4 and 5
        const auto img = m.crash();
        const bool is_new = std::memcmp(&img[8], bytes(8, kNew).data(), 8) == 0;
        const bool is_old = std::memcmp(&img[8], bytes(8, kOld).data(), 8) == 0;
        ASSERT_TRUE(is_new || is_old) << "store8 torn with seed " << seed;
        (is_new ? new_seen : old_seen)++;
        if (img[32] != img[40]) ++wide_torn;
        for (std::size_t i = 33; i < 48; ++i) ASSERT_EQ(img[i], img[i & ~std::size_t{7}]) << "torn inside a word";
    }
    EXPECT_GT(old_seen, 0);
    EXPECT_GT(new_seen, 0);
    EXPECT_GT(wide_torn, 0) << "a 16-byte store may keep one word and lose the other";
}

TEST(ModelMechanicsDeathTest, Store8RejectsAMisalignedOffset) {
    PersistenceModel m(config(D::cpu_cache, Ddio::on));
    EXPECT_DEATH(m.store8(4, 1), "misaligned");
}

TEST(ModelMechanics, EnteringTheDomainUpdatesDurable) {
    // ADR, DDIO on: v1 reaches the WPQ (durable), then v2 arrives in the IIO
    // buffer: a crash may keep either, never the preset kOld.
    for (std::uint64_t seed = 1; seed <= kSeeds; ++seed) {
        PersistenceModel m = preset_model(D::memory_controller, Ddio::on, seed);
        m.nic_write(0, bytes(64, std::byte{0x33}));
        m.nic_receive();
        const Range r{0, 64};
        ASSERT_TRUE(m.persist(SP::cache_flush_sfence, {&r, 1}));
        m.nic_write(0, bytes(64, kNew));
        const auto img = m.crash();
        for (std::size_t i = 0; i < 64; ++i) ASSERT_TRUE(img[i] == std::byte{0x33} || img[i] == kNew);
    }
}

TEST(ModelMechanics, DriftOnlyMovesForwardAndEventuallySettles) {
    PersistenceModel m = preset_model(D::none, Ddio::on, 7);
    m.nic_write(0, bytes(m.size(), kNew));
    std::vector<Level> before(m.size() / 64);
    for (int round = 0; round < 1000 && m.unsettled_lines() > 0; ++round) {
        for (std::size_t l = 0; l < before.size(); ++l) before[l] = m.level_of(l * 64);
        m.drift(3);
        for (std::size_t l = 0; l < before.size(); ++l) ASSERT_GE(m.level_of(l * 64), before[l]);
    }
    EXPECT_EQ(m.unsettled_lines(), 0u);
    EXPECT_GT(m.stats().drifted_lines, 0u);
    const auto img = m.crash();
    EXPECT_EQ(img, bytes(m.size(), kNew)) << "everything drifted to media";
}

TEST(ModelMechanics, LoadSeesTheNewestValueAndCrashRestartsFromTheImage) {
    PersistenceModel m = preset_model(D::none, Ddio::on, 3);
    m.nic_write(0, bytes(256, kNew));
    std::vector<std::byte> seen(m.size());
    m.load(0, seen);
    EXPECT_EQ(seen[0], kNew);
    EXPECT_EQ(seen[300], kOld);
    EXPECT_EQ(m.base(), nullptr);
    const auto img = m.crash();
    m.load(0, seen);
    EXPECT_EQ(seen, img);
    EXPECT_EQ(m.unsettled_lines(), 0u);
    EXPECT_EQ(m.level_of(0), Level::media);
    EXPECT_EQ(m.crash(), img) << "after recovery everything is on media";
}

TEST(ModelMechanics, SameSeedSameCrash) {
    auto image = [](std::uint64_t seed) {
        PersistenceModel m = preset_model(D::none, Ddio::on, seed);
        m.nic_write(0, bytes(m.size(), kNew));
        m.drift(20);  // 48 moves would settle all 16 lines
        return m.crash();
    };
    EXPECT_EQ(image(42), image(42));
    EXPECT_NE(image(42), image(43));
}

} // namespace
