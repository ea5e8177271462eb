#include <rpm/error.hpp>
#include <rpm/result.hpp>

#include <gtest/gtest.h>

namespace {

TEST(Error, CategoryIsRpmAndEveryCodeHasAnActionableMessage) {
    for (int v = 1; v <= static_cast<int>(rpm::errc::would_deadlock); ++v) {
        std::error_code ec = static_cast<rpm::errc>(v);
        EXPECT_STREQ(ec.category().name(), "rpm");
        EXPECT_NE(ec.message(), "unknown rpm error") << v;
        // An actionable message names a remedy after a ';' (or names the detail to read).
        EXPECT_TRUE(ec.message().find(';') != std::string::npos)
            << ec.message();
    }
}

TEST(Error, ComparesAsAnErrorCodeEnum) {
    std::error_code ec = rpm::errc::not_pmem;
    EXPECT_EQ(ec, rpm::errc::not_pmem);
    EXPECT_NE(ec, rpm::errc::bad_size);
    EXPECT_NE(ec, std::errc::invalid_argument);  // a different category
}

TEST(Error, MessagePutsTheDetailFirst) {
    rpm::Error e(rpm::errc::path_not_found, "/mnt/pmem/pool");
    EXPECT_EQ(e.message().rfind("/mnt/pmem/pool: no such file", 0), 0u) << e.message();
    EXPECT_TRUE(e == rpm::errc::path_not_found);
    EXPECT_EQ(rpm::Error().message(), "success");
}

TEST(Result, HoldsAValueOrAnError) {
    rpm::Result<int> ok = 42;
    ASSERT_TRUE(ok);
    EXPECT_EQ(*ok, 42);
    rpm::Result<int> bad(rpm::errc::bad_size, "size 0");
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().code(), rpm::errc::bad_size);
    EXPECT_EQ(bad.error().detail(), "size 0");
}

TEST(Result, VoidResult) {
    rpm::Result<void> ok;
    EXPECT_TRUE(ok);
    rpm::Result<void> bad(rpm::errc::io_error);
    EXPECT_FALSE(bad);
    EXPECT_EQ(bad.error().code(), rpm::errc::io_error);
}

TEST(ResultDeathTest, ValueOfAnErrorAborts) {
    rpm::Result<int> bad(rpm::errc::io_error);
    EXPECT_DEATH((void)bad.value(), "");
}

} // namespace
