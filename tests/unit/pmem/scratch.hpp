// Scratch files and fake sysfs trees for the pmem tests.
#pragma once

#include <rpm/pmem.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <system_error>

#include <sys/statfs.h>
#include <unistd.h>
#include "tests/support/paths.hpp"

namespace rpm_test {

namespace fs = std::filesystem;

/// Options that create (or extend) a region of `size` bytes.
inline rpm::pmem::OpenOptions create_opts(std::size_t size) {
    rpm::pmem::OpenOptions opts;
    opts.create = true;
    opts.size = size;
    return opts;
}

inline bool is_tmpfs(const fs::path& dir) {
    struct statfs st {};
    return ::statfs(dir.c_str(), &st) == 0 && st.f_type == 0x01021994;  // TMPFS_MAGIC
}

/// A name unique to this process and test, so parallel ctest runs never meet.
inline std::string unique_name(const std::string& stem) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    return stem + "-" + std::to_string(::getpid()) + "-" + info->name();
}

/// A directory removed (with its contents) on destruction.
class ScratchDir {
public:
    explicit ScratchDir(const fs::path& parent) : path_(parent / unique_name("rpm-pmem-test")) {
        fs::remove_all(path_);
        fs::create_directories(path_);
    }
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;
    ~ScratchDir() {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    const fs::path& path() const { return path_; }

private:
    fs::path path_;
};

/// /dev/shm when it is tmpfs (it is on every Linux with glibc's shm_open).
inline std::optional<fs::path> shm_dir() {
    if (is_tmpfs("/dev/shm")) return fs::path("/dev/shm");
    return std::nullopt;
}

/// A writable disk-backed directory: next to the test binaries in the build
/// tree (not /tmp, which is tmpfs on many systems).
inline std::optional<fs::path> disk_dir() {
    const fs::path dir = rpm::test::bin_dir().parent_path() / "pmem-test-scratch";
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec || is_tmpfs(dir) || ::access(dir.c_str(), W_OK) != 0) return std::nullopt;
    return dir;
}

inline void write_file(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
}

/// A relative symlink at `link` to `target` (both absolute), as sysfs has.
inline void make_link(const fs::path& target, const fs::path& link) {
    fs::create_directories(link.parent_path());
    fs::create_symlink(fs::relative(target, link.parent_path()), link);
}

/// A test with a scratch directory on /dev/shm and a pool path inside it.
class ShmPoolTest : public ::testing::Test {
protected:
    void SetUp() override {
        auto shm = shm_dir();
        if (!shm) GTEST_SKIP() << "/dev/shm is not tmpfs on this machine";
        scratch.emplace(*shm);
        path = scratch->path() / "pool";
    }
    std::optional<ScratchDir> scratch;
    fs::path path;
};

}  // namespace rpm_test
