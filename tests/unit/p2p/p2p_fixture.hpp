// Shared helpers for the P2P topology tests: the fixture trees of
// tests/fixtures/p2p (tests/fixtures/make-p2p-fixtures.sh) and scratch
// copies of them to damage.
#pragma once

#include "p2p/topology.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>
#include "tests/support/paths.hpp"

namespace rpm::p2p::testing {

namespace fs = std::filesystem;

inline fs::path fixture(const std::string& name) {
    return rpm::test::fixtures_dir() / "p2p" / name;
}

inline bool contains(const std::string& s, const std::string& what) {
    return s.find(what) != std::string::npos;
}

/// Placements of `names` under `root`; a failure is a test failure.
inline std::vector<Placement> place_all(const fs::path& root,
                                        const std::vector<std::string>& names) {
    std::vector<Placement> out;
    for (const auto& n : names) {
        auto p = detail::place(root, n);
        if (!p) {
            ADD_FAILURE() << n << ": " << p.error().message();
            continue;
        }
        out.push_back(*p);
    }
    return out;
}

/// A scratch copy of a fixture tree (symlinks kept), removed afterwards.
class TreeCopy {
public:
    explicit TreeCopy(const std::string& name) {
        std::string tmpl = (fs::temp_directory_path() / "rpm-p2p-XXXXXX").string();
        if (::mkdtemp(tmpl.data()) == nullptr) return;
        root_ = fs::path(tmpl) / name;
        fs::copy(fixture(name), root_,
                 fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    }
    ~TreeCopy() {
        std::error_code ec;
        if (!root_.empty()) fs::remove_all(root_.parent_path(), ec);
    }
    TreeCopy(const TreeCopy&) = delete;
    TreeCopy& operator=(const TreeCopy&) = delete;

    [[nodiscard]] const fs::path& root() const { return root_; }
    /// The real file behind sys/bus/pci/devices/<bdf>/<file>.
    [[nodiscard]] fs::path device_file(const std::string& bdf, const std::string& file) const {
        return fs::canonical(root_ / "sys/bus/pci/devices" / bdf) / file;
    }
    /// Overwrite bytes of a binary file at `offset`.
    void poke(const fs::path& file, std::size_t offset,
              const std::vector<unsigned char>& bytes) const {
        std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(static_cast<std::streamoff>(offset));
        f.write(reinterpret_cast<const char*>(bytes.data()),
                static_cast<std::streamsize>(bytes.size()));
    }

private:
    fs::path root_;
};

} // namespace rpm::p2p::testing
