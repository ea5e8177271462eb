// A scratch directory tree for sysfs reader tests, removed afterwards, and
// the helpers the platform tests share.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include "tests/support/paths.hpp"

namespace rpm::platform::testing {

/// The fixture trees of tests/fixtures/sysfs, one machine each.
inline const std::filesystem::path kFixtures = rpm::test::fixtures_dir() / "sysfs";

inline bool contains(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

class TempTree {
public:
    TempTree() {
        std::string tmpl = (std::filesystem::temp_directory_path() / "rpm-sysfs-XXXXXX").string();
        if (::mkdtemp(tmpl.data()) != nullptr) root_ = tmpl;
    }
    ~TempTree() {
        std::error_code ec;
        if (!root_.empty()) std::filesystem::remove_all(root_, ec);
    }
    TempTree(const TempTree&) = delete;
    TempTree& operator=(const TempTree&) = delete;

    const std::filesystem::path& root() const { return root_; }

    void file(const std::filesystem::path& rel, const std::string& content) const {
        std::filesystem::create_directories((root_ / rel).parent_path());
        std::ofstream(root_ / rel, std::ios::binary) << content;
    }
    void dir(const std::filesystem::path& rel) const {
        std::filesystem::create_directories(root_ / rel);
    }
    void link(const std::filesystem::path& target, const std::filesystem::path& rel) const {
        std::filesystem::create_directories((root_ / rel).parent_path());
        std::filesystem::create_symlink(target, root_ / rel);
    }

private:
    std::filesystem::path root_;
};

} // namespace rpm::platform::testing
