// Shared helpers of the software engine's tests: a temporary directory,
// SQEs, aligned buffers, byte patterns and a subsystem with one namespace.
#pragma once

#include "nvmf/wire.hpp"

#include <rpm/nvmf_offload.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace rpm::nvmf::test {

namespace fs = std::filesystem;
namespace sc = wire::sc;
constexpr std::size_t KiB = 1024, MiB = 1024 * KiB;

/// A directory of its own under `base`, removed with everything in it.
class TempDir {
public:
    explicit TempDir(const fs::path& base = fs::temp_directory_path()) {
        std::string tmpl = (base / "rpm-nvmf-engine.XXXXXX").string();
        if (::mkdtemp(tmpl.data()) == nullptr) ADD_FAILURE() << "mkdtemp under " << base;
        path_ = tmpl;
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    [[nodiscard]] const fs::path& path() const { return path_; }
    [[nodiscard]] fs::path operator/(const std::string& name) const { return path_ / name; }

private:
    fs::path path_;
};

/// /dev/shm when it is tmpfs (the emulated-PM case), else nullopt.
inline std::optional<fs::path> tmpfs_dir() {
    struct statfs st{};
    constexpr long tmpfs_magic = 0x01021994;
    if (::statfs("/dev/shm", &st) == 0 && static_cast<long>(st.f_type) == tmpfs_magic) return fs::path("/dev/shm");
    return std::nullopt;
}

/// 4096-aligned, zeroed host memory.
class AlignedBuffer {
public:
    explicit AlignedBuffer(std::size_t n) : n_(n) {
        void* p = ::mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) ADD_FAILURE() << "mmap " << n;
        else p_ = static_cast<std::byte*>(p);
    }
    ~AlignedBuffer() {
        if (p_ != nullptr) ::munmap(p_, n_);
    }
    AlignedBuffer(const AlignedBuffer&) = delete;
    AlignedBuffer& operator=(const AlignedBuffer&) = delete;
    [[nodiscard]] std::span<std::byte> bytes() const { return {p_, n_}; }

private:
    std::byte* p_ = nullptr;
    std::size_t n_;
};

/// An I/O SQE; nlb is the number of blocks (not 0's based).
inline std::array<std::uint8_t, 64> sqe(std::uint8_t opcode, std::uint32_t nsid, std::uint64_t slba = 0,
                                        std::uint32_t nlb = 1, bool fua = false) {
    wire::Sqe s;
    s.set_opcode(opcode);
    s.set_cid(7);
    s.set_nsid(nsid);
    s.set_cdw(10, static_cast<std::uint32_t>(slba));
    s.set_cdw(11, static_cast<std::uint32_t>(slba >> 32));
    s.set_cdw(12, ((nlb - 1) & 0xFFFF) | (fua ? 1u << 30 : 0u));
    return s.b;
}
inline std::span<const std::uint8_t, 64> view(const std::array<std::uint8_t, 64>& a) { return std::span(a); }

/// Byte i is (i * 131 + seed) mod 251: shifted patterns never line up.
inline void fill(std::span<std::byte> b, unsigned seed) {
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<std::byte>((i * 131 + seed) % 251);
}
inline bool holds(std::span<const std::byte> b, unsigned seed) {
    for (std::size_t i = 0; i < b.size(); ++i)
        if (b[i] != static_cast<std::byte>((i * 131 + seed) % 251)) return false;
    return true;
}
inline bool zero(std::span<const std::byte> b) {
    for (auto x : b)
        if (x != std::byte{0}) return false;
    return true;
}

/// `n` bytes of a file from `offset` (through the page cache).
inline std::vector<std::byte> read_file(const fs::path& p, std::uint64_t offset, std::size_t n) {
    std::vector<std::byte> out(n);
    const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
    EXPECT_GE(fd, 0) << p;
    if (fd < 0) return {};
    EXPECT_EQ(::pread(fd, out.data(), n, static_cast<off_t>(offset)), static_cast<ssize_t>(n)) << p;
    ::close(fd);
    return out;
}

/// An engine with one subsystem and one namespace on a new file.
struct Rig {
    std::shared_ptr<Engine> engine = make_software_engine();
    SubsystemHandle s = 0;
    BackendHandle b = 0;
    fs::path file;

    Rig(const fs::path& path, std::uint64_t size, std::uint32_t block_size = 512, SubsystemAttrs attrs = {},
        BackendKind kind = BackendKind::block, std::uint32_t nsid = 1)
        : file(path) {
        auto h = engine->create_subsystem(attrs);
        if (!h) {
            ADD_FAILURE() << h.error().message();
            return;
        }
        s = *h;
        b = add(path, size, block_size, kind, nsid);
    }

    BackendHandle add(const fs::path& path, std::uint64_t size, std::uint32_t block_size, BackendKind kind,
                      std::uint32_t nsid) {
        NamespaceSpec spec{.nsid = nsid, .path = path, .kind = kind, .block_size = block_size, .create = true,
                           .size = size};
        auto bh = engine->create_backend(s, spec);
        if (!bh) {
            ADD_FAILURE() << bh.error().message();
            return 0;
        }
        if (auto m = engine->map_namespace(*bh, nsid, block_size, 1); !m) ADD_FAILURE() << m.error().message();
        return *bh;
    }

    std::uint16_t run(std::span<std::byte> buffer, std::uint8_t op, std::uint32_t nsid, std::uint64_t slba = 0,
                      std::uint32_t nlb = 1) const {
        return engine->execute_software(s, view(sqe(op, nsid, slba, nlb)), buffer);
    }
};

} // namespace rpm::nvmf::test
