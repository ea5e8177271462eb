// Backends: opening files (O_DIRECT, the page-cache fallback, the errors),
// the bounce for buffers O_DIRECT cannot pin, PM regions on tmpfs, and how
// backend failures become NVMe statuses.
#include "engine_fixture.hpp"

#include "nvmf/engine/backend.hpp"

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <sstream>
#include "tests/support/paths.hpp"

namespace rpm::nvmf {
namespace {

using namespace test;
namespace io = wire::io;

bool contains(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

Result<std::shared_ptr<detail::Backend>> open_file(const fs::path& p, std::uint64_t size,
                                                   detail::OpenFn fn = nullptr) {
    NamespaceSpec spec{.path = p, .create = true, .size = size};
    return detail::open_block_backend(spec, fn);
}

TEST(NvmfEngineBackend, OpeningErrors) {
    TempDir dir;
    auto missing = detail::open_block_backend({.path = dir / "missing"});
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error(), errc::path_not_found);
    EXPECT_TRUE(contains(missing.error().detail(), "missing"));
    auto no_size = detail::open_block_backend({.path = dir / "new", .create = true, .size = 0});
    ASSERT_FALSE(no_size);
    EXPECT_EQ(no_size.error(), errc::invalid_argument);
    EXPECT_FALSE(fs::exists(dir / "new"));
    auto a_dir = detail::open_block_backend({.path = dir.path()});
    ASSERT_FALSE(a_dir);
    EXPECT_EQ(a_dir.error(), errc::invalid_argument);
    { std::ofstream empty(dir / "empty"); }
    auto empty = detail::open_block_backend({.path = dir / "empty"});
    ASSERT_FALSE(empty);
    EXPECT_EQ(empty.error(), errc::bad_size);
    auto pm_missing = detail::open_pmem_backend({.path = dir / "pm", .kind = BackendKind::pmem}, "/");
    ASSERT_FALSE(pm_missing);
    EXPECT_EQ(pm_missing.error(), errc::path_not_found);
}

TEST(NvmfEngineBackend, CreateKeepsAnExistingFileAsItIs) {
    TempDir dir;
    auto first = open_file(dir / "f", 64 * KiB);
    ASSERT_TRUE(first) << first.error().message();
    auto again = open_file(dir / "f", 1 * MiB);
    ASSERT_TRUE(again) << again.error().message();
    EXPECT_EQ((*again)->info().bytes, 64 * KiB);
    EXPECT_TRUE((*again)->info().path.is_absolute());
}

// tmpfs before Linux 6.6 (and some FUSE file systems) refuse O_DIRECT
// with EINVAL; this open does the same.
int refuse_direct(const char* path, int flags, mode_t mode) {
    if (flags & O_DIRECT) {
        errno = EINVAL;
        return -1;
    }
    return ::open(path, flags, mode);
}

TEST(NvmfEngineBackend, WithoutODirectTheFileIsBufferedAndSaysSo) {
    TempDir dir;
    auto b = open_file(dir / "f", 64 * KiB, refuse_direct);
    ASSERT_TRUE(b) << b.error().message();
    const auto& d = (*b)->info().description;
    EXPECT_TRUE(contains(d, "buffered (page cache)")) << d;
    EXPECT_TRUE(contains(d, "EINVAL")) << d;
    EXPECT_FALSE(contains(d, "O_DIRECT,")) << d;
    EXPECT_EQ((*b)->info().granule, 1u);
    AlignedBuffer buf(4096);
    fill(buf.bytes(), 21);
    // Unaligned offsets and lengths are fine in the page cache.
    ASSERT_TRUE((*b)->write(100, buf.bytes().first(1000), false));
    ASSERT_TRUE((*b)->flush());
    EXPECT_TRUE(holds(read_file(dir / "f", 100, 1000), 21));
}

// The build tree's file system: the one O_DIRECT is tested on (a test temp
// dir may be tmpfs).
fs::path build_tree() { return rpm::test::bin_dir().parent_path(); }

TEST(NvmfEngineBackend, ODirectWhereTheFileSystemTakesIt) {
    TempDir dir(build_tree());
    auto b = open_file(dir / "f", 1 * MiB);
    ASSERT_TRUE(b) << b.error().message();
    const auto& d = (*b)->info().description;
    if (contains(d, "buffered")) GTEST_SKIP() << dir.path() << "'s file system refuses O_DIRECT: " << d;
    EXPECT_TRUE(contains(d, "O_DIRECT, logical block")) << d;
    EXPECT_GE((*b)->info().granule, 512u) << d;
    AlignedBuffer buf(64 * KiB);
    fill(buf.bytes(), 33);
    ASSERT_TRUE((*b)->write(8192, buf.bytes(), false));
    AlignedBuffer back(64 * KiB);
    ASSERT_TRUE((*b)->read(8192, back.bytes()));
    EXPECT_TRUE(holds(back.bytes(), 33));
    EXPECT_TRUE(holds(read_file(dir / "f", 8192, 64 * KiB), 33));
    ASSERT_TRUE((*b)->write_zeroes(8192, 4096));
    EXPECT_TRUE(zero(read_file(dir / "f", 8192, 4096)));
}

// The vDSO's data pages are VM_IO | VM_PFNMAP, like a BAR mapping: the CPU
// reads them, O_DIRECT cannot pin them.
std::optional<std::span<std::byte>> pfnmap_page() {
    std::ifstream maps("/proc/self/maps");
    for (std::string line; std::getline(maps, line);) {
        if (!line.ends_with("[vvar]")) continue;
        unsigned long lo = 0, hi = 0;
        if (std::sscanf(line.c_str(), "%lx-%lx", &lo, &hi) != 2 || hi - lo < 4096) return std::nullopt;
        return std::span(reinterpret_cast<std::byte*>(lo), 4096);
    }
    return std::nullopt;
}

TEST(NvmfEngineBackend, BuffersODirectCannotPinGoThroughHostMemory) {
    TempDir dir(build_tree());
    auto b = open_file(dir / "f", 64 * KiB);
    ASSERT_TRUE(b) << b.error().message();
    if (!contains((*b)->info().description, "O_DIRECT,")) GTEST_SKIP() << "no O_DIRECT under " << dir.path();
    auto page = pfnmap_page();
    if (!page) GTEST_SKIP() << "no [vvar] mapping to stand in for a BAR";
    const int fd = ::open((dir / "f").c_str(), O_RDWR | O_DIRECT | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    const auto direct = ::pwrite(fd, page->data(), page->size(), 0);
    const int err = errno;
    ::close(fd);
    if (direct >= 0 || err != EFAULT) GTEST_SKIP() << "this kernel pins [vvar] for O_DIRECT";
    auto w = (*b)->write(4096, *page, false);
    EXPECT_TRUE(w) << w.error().message();
}

TEST(NvmfEngineBackend, APmemNamespaceOnTmpfsLandsInTheFile) {
    auto shm = tmpfs_dir();
    if (!shm) GTEST_SKIP() << "/dev/shm is not tmpfs";
    TempDir dir(*shm);
    Rig rig(dir / "pm", 1 * MiB, 512, {}, BackendKind::pmem);
    auto ns = rig.engine->namespaces(rig.s);
    ASSERT_EQ(ns.size(), 1u);
    EXPECT_EQ(ns[0].kind, BackendKind::pmem);
    EXPECT_EQ(ns[0].blocks, 2048u);
    EXPECT_TRUE(contains(ns[0].backend, "tmpfs_file")) << ns[0].backend;
    EXPECT_TRUE(contains(ns[0].backend, "msync on every write")) << ns[0].backend;
    AlignedBuffer buf(128 * KiB);
    fill(buf.bytes().first(4 * 512), 44);
    ASSERT_EQ(rig.run(buf.bytes(), io::write, 1, 10, 4), sc::success);
    EXPECT_TRUE(holds(read_file(rig.file, 10 * 512, 4 * 512), 44));
    AlignedBuffer back(128 * KiB);
    ASSERT_EQ(rig.run(back.bytes(), io::read, 1, 10, 4), sc::success);
    EXPECT_TRUE(holds(back.bytes().first(4 * 512), 44));
    ASSERT_EQ(rig.run(buf.bytes(), io::write_zeroes, 1, 11, 2), sc::success);
    const auto disk = read_file(rig.file, 10 * 512, 4 * 512);
    EXPECT_TRUE(holds(std::span(disk).first(512), 44));
    EXPECT_TRUE(zero(std::span(disk).subspan(512, 1024)));
    EXPECT_EQ(rig.run(buf.bytes(), io::flush, 1), sc::success);
    EXPECT_EQ(rig.run(buf.bytes(), io::read, 1, 2048, 1), sc::lba_out_of_range);
}

TEST(NvmfEngineBackend, MapErrors) {
    TempDir dir;
    Rig rig(dir / "a", 1 * MiB);
    auto other = rig.engine->create_backend(rig.s, {.path = dir / "b", .create = true, .size = 1000});
    ASSERT_TRUE(other) << other.error().message();
    auto& e = *rig.engine;
    const auto invalid = [](const Result<void>& r) { return !r && r.error() == errc::invalid_argument; };
    EXPECT_TRUE(invalid(e.map_namespace(*other, 0, 512, 1)));
    EXPECT_TRUE(invalid(e.map_namespace(*other, 0xFFFFFFFF, 512, 1)));
    EXPECT_TRUE(invalid(e.map_namespace(*other, 1, 512, 1)));      // nsid 1 is mapped already
    EXPECT_TRUE(invalid(e.map_namespace(*other, 2, 512, 2)));      // a file has only nsid 1
    EXPECT_TRUE(invalid(e.map_namespace(*other, 2, 1024, 1)));     // not 512/4096
    EXPECT_TRUE(invalid(e.map_namespace(*other, 2, 4096, 1)));     // 1000 bytes: no whole block
    auto ok = e.map_namespace(*other, 2, 512, 1);
    ASSERT_TRUE(ok) << ok.error().message();
    EXPECT_EQ(e.namespaces(rig.s).at(1).blocks, 1u);               // 1000 bytes: one block of 512
    EXPECT_TRUE(invalid(e.unmap_namespace(*other, 1)));            // mapped to the other backend
    EXPECT_TRUE(invalid(e.unmap_namespace(*other, 3)));            // not mapped
    EXPECT_TRUE(e.unmap_namespace(*other, 2));
    EXPECT_TRUE(invalid(e.unmap_namespace(*other, 2)));
    EXPECT_EQ(e.namespaces(rig.s).size(), 1u);
}

TEST(NvmfEngineBackend, MaxNamespacesIsEnforced) {
    TempDir dir;
    SubsystemAttrs a;
    a.max_namespaces = 2;
    Rig rig(dir / "a", 64 * KiB, 512, a);
    rig.add(dir / "b", 64 * KiB, 512, BackendKind::block, 2);
    auto c = rig.engine->create_backend(rig.s, {.path = dir / "c", .create = true, .size = 64 * KiB});
    ASSERT_TRUE(c);
    auto m = rig.engine->map_namespace(*c, 3, 512, 1);
    ASSERT_FALSE(m);
    EXPECT_EQ(m.error(), errc::unsupported);
    EXPECT_TRUE(contains(m.error().detail(), "max_namespaces")) << m.error().detail();
    ASSERT_TRUE(rig.engine->unmap_namespace(rig.b, 1));
    EXPECT_TRUE(rig.engine->map_namespace(*c, 3, 512, 1));
}

TEST(NvmfEngineBackend, NguidsAreStablePerPathAndNsid) {
    TempDir dir;
    const auto nguids = [&](std::uint32_t nsid) {
        Rig rig(dir / "a", 64 * KiB, 512, {}, BackendKind::block, nsid);
        return rig.engine->namespaces(rig.s).at(0).nguid;
    };
    const auto first = nguids(1);
    EXPECT_EQ(first, nguids(1));  // another engine, the same file and nsid
    EXPECT_NE(first, nguids(2));
    EXPECT_NE(first, decltype(first){});
    Rig other(dir / "b", 64 * KiB);
    EXPECT_NE(first, other.engine->namespaces(other.s).at(0).nguid);
}

} // namespace
} // namespace rpm::nvmf
