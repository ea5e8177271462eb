// rpm::detail::base64 / unbase64 (src/core/base64.hpp) against RFC 4648's
// test vectors (section 10), and what is not base64.
#include "core/base64.hpp"

#include <gtest/gtest.h>

namespace {

using rpm::detail::base64;
using rpm::detail::unbase64;

TEST(Base64, EncodesTheRfc4648Vectors) {
    EXPECT_EQ(base64(""), "");
    EXPECT_EQ(base64("f"), "Zg==");
    EXPECT_EQ(base64("fo"), "Zm8=");
    EXPECT_EQ(base64("foo"), "Zm9v");
    EXPECT_EQ(base64("foob"), "Zm9vYg==");
    EXPECT_EQ(base64("fooba"), "Zm9vYmE=");
    EXPECT_EQ(base64("foobar"), "Zm9vYmFy");
}

TEST(Base64, DecodesTheRfc4648VectorsAndBinary) {
    for (std::string_view s : {"", "f", "fo", "foo", "foob", "fooba", "foobar"}) {
        auto d = unbase64(base64(s));
        ASSERT_TRUE(d) << s;
        EXPECT_EQ(*d, s);
    }
    std::string all;
    for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
    auto d = unbase64(base64(all));
    ASSERT_TRUE(d);
    EXPECT_EQ(*d, all);
}

TEST(Base64, RefusesWhatIsNotPaddedBase64) {
    for (std::string_view bad : {"Zg", "Zg=", "Zm9", " Zm9v", "Zm9v ", "Zm=v", "Z===", "Zm9v\n", "Zm9-", "Zm9_"}) {
        auto d = unbase64(bad);
        ASSERT_FALSE(d) << "'" << bad << "' was decoded";
        EXPECT_EQ(d.error().code(), rpm::errc::invalid_argument);
    }
}

} // namespace
