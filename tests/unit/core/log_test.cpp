// The log hook (include/rpm/log.hpp): levels filter, a handler receives
// what passes, an empty handler restores stderr, long messages are cut.
#include "core/log.hpp"

#include <rpm/version.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

struct LogLine {
    rpm::LogLevel level;
    std::string component, message;
};

// Installs a collecting handler at a chosen level; restores stderr and the
// previous level afterwards.
class LogTest : public ::testing::Test {
protected:
    void SetUp() override {
        saved_ = rpm::log_level();
        rpm::set_log_handler([this](rpm::LogLevel l, std::string_view c, std::string_view m) {
            lines_.push_back({l, std::string(c), std::string(m)});
        });
    }
    void TearDown() override {
        rpm::set_log_handler(nullptr);
        rpm::set_log_level(saved_);
    }
    rpm::LogLevel saved_{};
    std::vector<LogLine> lines_;
};

TEST_F(LogTest, ALevelLetsThroughItselfAndWhatIsAboveIt) {
    rpm::set_log_level(rpm::LogLevel::info);
    rpm::detail::logf(rpm::LogLevel::trace, "nvmf", "qid %u", 1u);
    rpm::detail::logf(rpm::LogLevel::debug, "nvmf", "qid %u", 2u);
    rpm::detail::logf(rpm::LogLevel::info, "nvmf", "refused %s", "10.0.0.1");
    rpm::detail::log(rpm::LogLevel::error, "server", "out of threads");
    ASSERT_EQ(lines_.size(), 2u);
    EXPECT_EQ(lines_[0].level, rpm::LogLevel::info);
    EXPECT_EQ(lines_[0].component, "nvmf");
    EXPECT_EQ(lines_[0].message, "refused 10.0.0.1");
    EXPECT_EQ(lines_[1].level, rpm::LogLevel::error);
    EXPECT_EQ(lines_[1].message, "out of threads");
    EXPECT_FALSE(rpm::detail::log_enabled(rpm::LogLevel::debug));
    EXPECT_TRUE(rpm::detail::log_enabled(rpm::LogLevel::warning));
}

TEST_F(LogTest, TraceLetsEverythingThrough) {
    rpm::set_log_level(rpm::LogLevel::trace);
    EXPECT_EQ(rpm::log_level(), rpm::LogLevel::trace);
    for (auto l : {rpm::LogLevel::error, rpm::LogLevel::warning, rpm::LogLevel::info, rpm::LogLevel::debug,
                   rpm::LogLevel::trace})
        rpm::detail::log(l, "x", rpm::to_string(l));
    ASSERT_EQ(lines_.size(), 5u);
    EXPECT_EQ(lines_[4].message, "trace");
}

TEST_F(LogTest, ALongMessageIsCutAndSaysSo) {
    rpm::set_log_level(rpm::LogLevel::warning);
    const std::string big(5000, 'a');
    rpm::detail::logf(rpm::LogLevel::warning, "nvmf", "%s", big.c_str());
    ASSERT_EQ(lines_.size(), 1u);
    EXPECT_EQ(lines_[0].message.size(), 1023u);
    EXPECT_EQ(lines_[0].message.substr(1020), "...");
}

TEST_F(LogTest, AnEmptyHandlerSendsMessagesBackToStderr) {
    rpm::set_log_level(rpm::LogLevel::warning);
    rpm::set_log_handler(nullptr);
    ::testing::internal::CaptureStderr();
    rpm::detail::logf(rpm::LogLevel::warning, "nvmf", "host %s: authentication failed", "nqn.x");
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(err, "rpm nvmf: host nqn.x: authentication failed\n");
    EXPECT_TRUE(lines_.empty());
}

TEST(LogLevelNames, ReadBackWhatTheyWrite) {
    for (auto l : {rpm::LogLevel::error, rpm::LogLevel::warning, rpm::LogLevel::info, rpm::LogLevel::debug,
                   rpm::LogLevel::trace})
        EXPECT_EQ(rpm::parse_log_level(rpm::to_string(l)), l);
    EXPECT_EQ(rpm::parse_log_level("verbose"), std::nullopt);
    EXPECT_EQ(rpm::parse_log_level(""), std::nullopt);
    EXPECT_EQ(rpm::parse_log_level("Warning"), std::nullopt);
}

TEST(Version, TheLibraryIsTheHeadersVersion) {
    EXPECT_EQ(rpm::version_number(), RPM_VERSION);
    EXPECT_EQ(std::string(rpm::version()), std::to_string(RPM_VERSION_MAJOR) + "." + std::to_string(RPM_VERSION_MINOR) +
                                               "." + std::to_string(RPM_VERSION_PATCH));
    EXPECT_GT(RPM_VERSION_AT(0, 1, 1), RPM_VERSION_AT(0, 1, 0));
    EXPECT_GT(RPM_VERSION_AT(1, 0, 0), RPM_VERSION_AT(0, 99, 99));
}

} // namespace
