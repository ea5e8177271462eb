// DH-HMAC-CHAP secrets (src/nvmf/auth/secret.cpp): the DHHC-1 text form,
// generated keys and secret files. The expected texts were computed
// independently (Python's base64 and zlib.crc32 over the same keys).
#include "nvmf/auth/auth.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

namespace {

using namespace rpm::nvmf::auth;

std::vector<std::uint8_t> iota(std::size_t n, std::uint8_t first) {
    std::vector<std::uint8_t> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>(first + i);
    return v;
}

constexpr const char* kKey32Sha256 = "DHHC-1:01:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:";
constexpr const char* kKey48Sha384 =
    "DHHC-1:02:oKGio6SlpqeoqaqrrK2ur7CxsrO0tba3uLm6u7y9vr/AwcLDxMXGx8jJysvMzc7PZqjjjw==:";

TEST(AuthSecret, ParsesTheTextFormWithItsCrc) {
    auto s = parse_secret(kKey32Sha256);
    ASSERT_TRUE(s) << s.error().message();
    EXPECT_EQ(s->transform, 1);
    EXPECT_EQ(s->key, SecretBytes(iota(32, 0)));
    auto t = parse_secret(std::string(kKey48Sha384) + "\n");  // as written by nvme gen-dhchap-key > file
    ASSERT_TRUE(t) << t.error().message();
    EXPECT_EQ(t->transform, 2);
    EXPECT_EQ(t->key, SecretBytes(iota(48, 0xa0)));
}

TEST(AuthSecret, FormatsWhatItParses) {
    Secret s;
    s.key = SecretBytes(iota(32, 0));
    s.transform = 1;
    EXPECT_EQ(format_secret(s), kKey32Sha256);
    auto g = generate_secret(64, 3);
    ASSERT_TRUE(g);
    auto back = parse_secret(format_secret(*g));
    ASSERT_TRUE(back) << back.error().message();
    EXPECT_EQ(back->key, g->key);
    EXPECT_EQ(back->transform, 3);
    auto g2 = generate_secret(64, 3);
    ASSERT_TRUE(g2);
    EXPECT_FALSE(g2->key == g->key) << "two generated keys are the same";
}

TEST(AuthSecret, RefusesEachKindOfBadSecretWithoutQuotingIt) {
    const std::string good = kKey32Sha256;
    std::string bad_crc = good;
    bad_crc[12] = bad_crc[12] == 'A' ? 'B' : 'A';  // one key bit changed: the CRC no longer matches
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"DHHC-2:01:" + good.substr(10), "DHHC-1:"},
        {"DHHC-1:04:" + good.substr(10), "transform"},
        {"DHHC-1:1:" + good.substr(10), "transform"},
        {good.substr(0, good.size() - 1), "end with ':'"},
        {"DHHC-1:01:AAEC*wQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:", "base64"},
        {"DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwd:", "must be 32, 48 or 64"},
        {bad_crc, "CRC"},
        {"", "DHHC-1:"},
    };
    for (const auto& [text, want] : cases) {
        auto s = parse_secret(text);
        ASSERT_FALSE(s) << text;
        EXPECT_EQ(s.error().code(), rpm::errc::invalid_argument);
        EXPECT_NE(s.error().message().find(want), std::string::npos) << s.error().message();
        EXPECT_EQ(s.error().message().find("AAECAwQF"), std::string::npos) << "the secret was quoted";
    }
    EXPECT_FALSE(generate_secret(40, 1));
    EXPECT_FALSE(generate_secret(32, 4));
}

class AuthSecretFile : public ::testing::Test {
protected:
    std::filesystem::path dir_ = std::filesystem::temp_directory_path() /
                                 ("rpm-auth-secret-" + std::to_string(::getpid()));
    void SetUp() override { std::filesystem::create_directories(dir_); }
    void TearDown() override { std::filesystem::remove_all(dir_); }
    std::string write(const std::string& name, const std::string& text, mode_t mode) {
        const auto p = dir_ / name;
        std::ofstream(p) << text;
        ::chmod(p.c_str(), mode);
        return p.string();
    }
};

TEST_F(AuthSecretFile, ReadsAFileOnlyItsOwnerMayRead) {
    auto s = read_secret_file(write("ok", std::string(kKey32Sha256) + "\n", 0600));
    ASSERT_TRUE(s) << s.error().message();
    EXPECT_EQ(s->key, SecretBytes(iota(32, 0)));
    EXPECT_TRUE(read_secret_file(write("ro", kKey32Sha256, 0400)));
}

TEST_F(AuthSecretFile, RefusesAFileOthersMayReadOrOneThatIsNotASecret) {
    for (mode_t mode : {0640, 0604, 0660, 0602}) {
        auto s = read_secret_file(write("open" + std::to_string(mode), kKey32Sha256, mode));
        ASSERT_FALSE(s) << std::oct << mode;
        EXPECT_EQ(s.error().code(), rpm::errc::permission_denied);
        EXPECT_NE(s.error().message().find("chmod 600"), std::string::npos) << s.error().message();
    }
    auto missing = read_secret_file((dir_ / "none").string());
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().code(), rpm::errc::path_not_found);
    auto garbage = read_secret_file(write("garbage", "password123\n", 0600));
    ASSERT_FALSE(garbage);
    EXPECT_EQ(garbage.error().code(), rpm::errc::invalid_argument);
    EXPECT_NE(garbage.error().message().find("garbage"), std::string::npos) << "the message names the file";
    EXPECT_EQ(garbage.error().message().find("password123"), std::string::npos) << "the content was quoted";
    EXPECT_FALSE(read_secret_file(write("big", std::string(5000, 'A'), 0600)));
    EXPECT_FALSE(read_secret_file(dir_.string()));
}

} // namespace
