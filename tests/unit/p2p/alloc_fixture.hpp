// A throw-away sysfs root for the allocation tests: device folders with
// plain files standing in for resourceN and p2pmem/allocate (mmap of a
// regular file works, so buffers can be written and the file read back).
#pragma once

#include <rpm/p2p.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace rpm::p2p::test {

namespace fs = std::filesystem;

inline constexpr std::uint64_t KiB = 1024, MiB = 1024 * KiB;

class FixtureRoot {
public:
    FixtureRoot() {
        std::string tmpl = (fs::temp_directory_path() / "rpm-p2p-alloc.XXXXXX").string();
        if (::mkdtemp(tmpl.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed";
        root_ = tmpl;
        fs::create_directories(root_ / "sys/bus/pci/devices");
    }
    ~FixtureRoot() {
        std::error_code ec;
        fs::remove_all(root_, ec);
    }
    FixtureRoot(const FixtureRoot&) = delete;
    FixtureRoot& operator=(const FixtureRoot&) = delete;

    [[nodiscard]] const fs::path& root() const { return root_; }
    [[nodiscard]] fs::path device(const std::string& bdf) const {
        return root_ / "sys/bus/pci/devices" / bdf;
    }

    /// A sparse file of `size` bytes at the device's `name`.
    fs::path file(const std::string& bdf, const std::string& name, std::uint64_t size) const {
        const fs::path p = device(bdf) / name;
        fs::create_directories(p.parent_path());
        { std::ofstream create(p); }
        fs::resize_file(p, size);
        return p;
    }
    void text(const std::string& bdf, const std::string& name, const std::string& value) const {
        const fs::path p = device(bdf) / name;
        fs::create_directories(p.parent_path());
        std::ofstream(p) << value << "\n";
    }

    /// `n` bytes of a file from `offset`.
    static std::vector<std::byte> read(const fs::path& p, std::uint64_t offset, std::size_t n) {
        std::vector<std::byte> out(n);
        const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
        EXPECT_GE(fd, 0) << p;
        if (fd < 0) return {};
        const auto got = ::pread(fd, out.data(), n, static_cast<off_t>(offset));
        ::close(fd);
        EXPECT_EQ(got, static_cast<ssize_t>(n));
        return out;
    }

private:
    fs::path root_;
};

inline Provider cmb(const std::string& bdf, std::uint64_t size, std::uint64_t bar_offset = 0) {
    Provider p;
    p.bdf = bdf;
    p.kind = ProviderKind::nvme_cmb;
    p.size = size;
    p.available = size;
    p.bar = 2;
    p.bar_offset = bar_offset;
    return p;
}

inline Choice choose(const Provider& p) {
    Choice c;
    c.provider = p;
    c.explanation = "chosen by hand";
    return c;
}

/// A recognisable pattern: byte i is (i * 131 + seed) mod 251.
inline void fill(std::span<std::byte> b, unsigned seed) {
    for (std::size_t i = 0; i < b.size(); ++i)
        b[i] = static_cast<std::byte>((i * 131 + seed) % 251);
}
inline bool holds(std::span<const std::byte> b, unsigned seed) {
    for (std::size_t i = 0; i < b.size(); ++i)
        if (b[i] != static_cast<std::byte>((i * 131 + seed) % 251)) return false;
    return true;
}

} // namespace rpm::p2p::test
