#include "platform/sysfs.hpp"

#include "temp_tree.hpp"

#include <gtest/gtest.h>

#include "tests/support/as_nobody.hpp"

#include <unistd.h>

namespace rpm::platform {
namespace {

using testing::TempTree;
namespace fs = std::filesystem;

TEST(PlatformSysfs, TrimRemovesSurroundingWhitespaceOnly) {
    EXPECT_EQ(sysfs::trim("  cpu_cache\n"), "cpu_cache");
    EXPECT_EQ(sysfs::trim("\n"), "");
    EXPECT_EQ(sysfs::trim("a b"), "a b");
}

TEST(PlatformSysfs, ReadTextTrimsTheNewline) {
    TempTree t;
    t.file("sys/x/vendor", "0x8086\n");
    auto text = sysfs::read_text(t.root(), "sys/x/vendor");
    ASSERT_TRUE(text) << text.error().message();
    EXPECT_EQ(*text, "0x8086");
}

TEST(PlatformSysfs, MissingFileIsPathNotFoundNamingThePath) {
    TempTree t;
    t.dir("sys");
    auto text = sysfs::read_text(t.root(), "sys/nope/vendor");
    ASSERT_FALSE(text);
    EXPECT_TRUE(text.error() == errc::path_not_found);
    EXPECT_NE(text.error().detail().find("sys/nope"), std::string::npos) << text.error().detail();
    EXPECT_NE(text.error().detail().find("No such file or directory"), std::string::npos);
}

TEST(PlatformSysfs, ReadBytesStopsAtMaxAndAtEndOfFile) {
    TempTree t;
    t.file("cfg", std::string("\x86\x80\x30\x20", 4));
    auto two = sysfs::read_bytes(t.root(), "cfg", 2);
    ASSERT_TRUE(two);
    ASSERT_EQ(two->size(), 2u);
    EXPECT_EQ((*two)[0], 0x86);
    EXPECT_EQ((*two)[1], 0x80);
    auto all = sysfs::read_bytes(t.root(), "cfg");
    ASSERT_TRUE(all);
    EXPECT_EQ(all->size(), 4u);
}

TEST(PlatformSysfs, ListDirIsSorted) {
    TempTree t;
    t.file("d/region1/size", "0");
    t.file("d/region0/size", "0");
    t.file("d/ndbus0", "");
    auto names = sysfs::list_dir(t.root(), "d");
    ASSERT_TRUE(names);
    EXPECT_EQ(*names, (std::vector<std::string>{"ndbus0", "region0", "region1"}));
}

TEST(PlatformSysfs, ResolveFollowsAChainOfRelativeLinks) {
    // The real layout: the class entry links into the PCI tree, and the
    // device link inside it climbs back to the PCI function.
    TempTree t;
    t.file("sys/devices/pci0000:17/0000:17:00.0/0000:18:00.0/vendor", "0x15b3\n");
    t.dir("sys/devices/pci0000:17/0000:17:00.0/0000:18:00.0/infiniband/mlx5_0");
    t.link("../../../0000:18:00.0",
           "sys/devices/pci0000:17/0000:17:00.0/0000:18:00.0/infiniband/mlx5_0/device");
    t.link("../../devices/pci0000:17/0000:17:00.0/0000:18:00.0/infiniband/mlx5_0",
           "sys/class/infiniband/mlx5_0");
    auto p = sysfs::resolve(t.root(), "sys/class/infiniband/mlx5_0/device");
    ASSERT_TRUE(p) << p.error().message();
    EXPECT_EQ(*p, fs::path("sys/devices/pci0000:17/0000:17:00.0/0000:18:00.0"));
    auto vendor = sysfs::read_text(t.root(), "sys/class/infiniband/mlx5_0/device/vendor");
    ASSERT_TRUE(vendor);
    EXPECT_EQ(*vendor, "0x15b3");
}

TEST(PlatformSysfs, ResolveRefusesToClimbAboveTheRoot) {
    TempTree t;
    t.link("../../../etc", "sys/escape");
    auto p = sysfs::resolve(t.root(), "sys/escape/passwd");
    ASSERT_FALSE(p);
    EXPECT_TRUE(p.error() == errc::sysfs_unreadable);
    EXPECT_NE(p.error().detail().find("above the sysfs root"), std::string::npos)
        << p.error().detail();
    auto text = sysfs::read_text(t.root(), "sys/escape/passwd");
    EXPECT_FALSE(text);
}

TEST(PlatformSysfs, AbsoluteLinkTargetsAreTakenFromTheRoot) {
    TempTree t;
    t.file("sys/devices/real/value", "inside\n");
    t.link("/sys/devices/real", "sys/class/thing");
    auto p = sysfs::resolve(t.root(), "sys/class/thing/value");
    ASSERT_TRUE(p) << p.error().message();
    EXPECT_EQ(*p, fs::path("sys/devices/real/value"));
}

TEST(PlatformSysfs, LinkLoopIsAnErrorNotAHang) {
    TempTree t;
    t.link("b", "sys/a");
    t.link("a", "sys/b");
    auto p = sysfs::resolve(t.root(), "sys/a");
    ASSERT_FALSE(p);
    EXPECT_TRUE(p.error() == errc::sysfs_unreadable);
    EXPECT_NE(p.error().detail().find("symbolic links"), std::string::npos) << p.error().detail();
}

TEST(PlatformSysfs, UnreadableFileIsSysfsUnreadableWithErrnoText) {
    TempTree t;
    t.file("sys/config", "x");
    fs::permissions(t.root() / "sys/config", fs::perms::none);
    // The tree must be traversable for nobody, so only the file itself is refused.
    for (fs::path p = t.root() / "sys"; p != t.root().parent_path(); p = p.parent_path())
        fs::permissions(p, fs::perms::others_exec, fs::perm_options::add);
    RPM_EXPECT_AS_NOBODY([&] {
        auto bytes = sysfs::read_bytes(t.root(), "sys/config");
        if (bytes) return false;
        std::fprintf(stderr, "%s\n", bytes.error().message().c_str());
        return bytes.error() == errc::sysfs_unreadable &&
               bytes.error().detail().find("Permission denied") != std::string::npos;
    });
}

TEST(PlatformSysfs, ExistsFollowsLinksInsideTheRoot) {
    TempTree t;
    t.file("sys/devices/x/size", "1");
    t.link("../devices/x", "sys/bus/x");
    EXPECT_TRUE(sysfs::exists(t.root(), "sys/bus/x/size"));
    EXPECT_FALSE(sysfs::exists(t.root(), "sys/bus/y"));
}

} // namespace
} // namespace rpm::platform
