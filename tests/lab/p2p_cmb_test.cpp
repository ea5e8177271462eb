// rpm::p2p::Manager on the lab VM's QEMU NVMe controller memory buffer
// (tools/lab/run --nvme-cmb: 16 MiB in BAR2 at $RPM_LAB_NVME_BDF; run by
// suite.sh's p2p step). Debian's kernel has no CONFIG_PCI_P2PDMA, so there
// is no p2pmem/: the manager finds the CMB from the controller registers
// and maps BAR2 itself (docs/p2p.md).
//
// The nvme driver, failing to register the CMB with P2PDMA, writes CMBMSC
// back to 0, which makes the controller report CMBLOC and CMBSZ as 0. rpm
// does not write controller registers, so this test does what a driver
// would: it sets CMBMSC.CRE (register reporting only, not CMSE) and then
// expects discovery to find the CMB.
#include <rpm/p2p.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace {
using namespace rpm;
using namespace rpm::p2p;

constexpr std::uint64_t MiB = 1 << 20;
constexpr std::uint32_t kCmbsz = 0x3c, kCmbmsc = 0x50, kCre = 1;

std::string lab_bdf() {
    const char* v = std::getenv("RPM_LAB_NVME_BDF");
    return v ? v : "";
}

std::string device_file(const std::string& name) {
    return "/sys/bus/pci/devices/" + lab_bdf() + "/" + name;
}

// A shared mapping of a whole sysfs resource file, for the test's own
// look at the device (registers, or BAR2 behind the manager's back).
class Raw {
public:
    Raw(const std::string& path, std::size_t length) : length_(length) {
        const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
        if (fd < 0) return;
        void* p = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        ::close(fd);
        if (p != MAP_FAILED) base_ = static_cast<volatile std::uint8_t*>(p);
    }
    ~Raw() {
        if (base_) ::munmap(const_cast<std::uint8_t*>(base_), length_);
    }
    Raw(const Raw&) = delete;
    Raw& operator=(const Raw&) = delete;
    [[nodiscard]] bool ok() const { return base_ != nullptr; }
    [[nodiscard]] std::uint32_t reg(std::uint32_t off) const {
        return *reinterpret_cast<volatile const std::uint32_t*>(base_ + off);
    }
    void set_reg(std::uint32_t off, std::uint32_t v) {
        *reinterpret_cast<volatile std::uint32_t*>(base_ + off) = v;
    }
    [[nodiscard]] std::uint64_t word(std::size_t off) const {
        return *reinterpret_cast<volatile const std::uint64_t*>(base_ + off);
    }

private:
    volatile std::uint8_t* base_ = nullptr;
    std::size_t length_;
};

std::uint8_t pattern(std::size_t i, unsigned seed) {
    return static_cast<std::uint8_t>((i * 131 + seed) % 251);
}

struct Before {
    bool cmbsz_was_zero = false;
    std::size_t providers = 0;
    std::vector<std::string> skipped;
};

class LabCmb : public ::testing::Test {
protected:
    // Once per run: what discovery says as the kernel left the device, then
    // CMBMSC.CRE set so the CMB registers report again.
    static void SetUpTestSuite() {
        if (lab_bdf().empty()) return;
        Raw bar0(device_file("resource0"), 4096);
        if (!bar0.ok()) return;
        before().cmbsz_was_zero = bar0.reg(kCmbsz) == 0;
        ManagerOptions o;
        if (auto m = Manager::discover(o)) {
            before().providers = m->providers().size();
            before().skipped = m->skipped();
        }
        if (before().cmbsz_was_zero) bar0.set_reg(kCmbmsc, kCre);
    }
    static Before& before() {
        static Before b;
        return b;
    }

    void SetUp() override {
        bdf = lab_bdf();
        if (bdf.empty()) GTEST_SKIP() << "RPM_LAB_NVME_BDF is unset: run by tests/lab/suite.sh in "
                                         "the VM of tools/lab/run --nvme-cmb";
        ManagerOptions o;
        o.hugepages = false;
        auto m = Manager::discover(o);
        ASSERT_TRUE(m) << m.error().message();
        manager.emplace(std::move(m).value());
        for (const auto& s : manager->skipped()) std::printf("  discovery skipped: %s\n", s.c_str());
    }

    Choice choice() {
        auto c = manager->find(std::vector<std::string>{bdf});
        EXPECT_TRUE(c) << c.error().message();
        return c ? *c : Choice{};
    }

    std::string bdf;
    std::optional<Manager> manager;
};

TEST_F(LabCmb, TheKernelLeftTheCmbRegistersOffAndDiscoverySaidSo) {
    if (!before().cmbsz_was_zero) GTEST_SKIP() << "CMBSZ already reported (an earlier run set CRE)";
    EXPECT_EQ(before().providers, 0u);
    bool named = false;
    for (const auto& s : before().skipped) named |= s.find("CMBMSC.CRE") != std::string::npos;
    EXPECT_TRUE(named) << "discovery should say why the CMB was not offered";
}

TEST_F(LabCmb, DiscoversTheCmbInBar2) {
    ASSERT_EQ(manager->providers().size(), 1u);
    const Provider& p = manager->providers()[0];
    EXPECT_EQ(p.bdf, bdf);
    EXPECT_EQ(p.kind, ProviderKind::nvme_cmb);
    EXPECT_EQ(p.size, 16 * MiB);
    EXPECT_EQ(p.bar, 2);
    EXPECT_EQ(p.bar_offset, 0u);
    EXPECT_TRUE(p.write_data && p.read_data) << p.detail;
    std::printf("  provider: %s\n", p.detail.c_str());
}

TEST_F(LabCmb, ChoosesItForItsOwnControllerAtDistanceZero) {
    const Choice c = choice();
    ASSERT_TRUE(c.provider.has_value()) << c.explanation;
    EXPECT_EQ(c.provider->bdf, bdf);
    ASSERT_FALSE(c.verdicts.empty());
    EXPECT_TRUE(c.verdicts[0].usable);
    EXPECT_EQ(c.verdicts[0].distance, 0);
    std::printf("  choice: %s\n", c.explanation.c_str());
}

TEST_F(LabCmb, BytesWrittenThroughABufferAreInTheBar) {
    const Choice c = choice();
    ASSERT_TRUE(c.provider.has_value()) << c.explanation;
    auto b = manager->allocate_p2p(c, 1 * MiB);
    ASSERT_TRUE(b) << b.error().message();
    EXPECT_EQ(b->source(), Source::bar);
    std::vector<std::uint8_t> out(b->size());
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = pattern(i, 17);
    std::memcpy(b->data(), out.data(), out.size());
    std::atomic_thread_fence(std::memory_order_seq_cst);  // drain write-combining buffers
    manager->account(*b, out.size());

    std::vector<std::uint8_t> in(b->size());
    std::memcpy(in.data(), b->data(), in.size());
    EXPECT_EQ(in, out) << "read back through the manager's mapping";
    // Through a second, uncached mapping of BAR2: the bytes are in the device.
    Raw bar2(device_file("resource2"), 16 * MiB);
    ASSERT_TRUE(bar2.ok());
    const std::uint64_t at = c.provider->bar_offset + b->offset();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < out.size(); i += 8) {
        std::uint64_t want = 0;
        std::memcpy(&want, out.data() + i, 8);
        wrong += bar2.word(at + i) != want;
    }
    EXPECT_EQ(wrong, 0u) << "8-byte words differing in the uncached view of BAR2";
    EXPECT_EQ(manager->accounting().device_bytes, 1 * MiB);
}

TEST_F(LabCmb, ExhaustionFallsBackWithAReasonAndFreeingCoalesces) {
    const Choice c = choice();
    ASSERT_TRUE(c.provider.has_value()) << c.explanation;
    std::vector<Buffer> held;
    for (int i = 0; i < 16; ++i) {
        auto b = manager->allocate(c, 1 * MiB);
        ASSERT_TRUE(b) << b.error().message();
        ASSERT_EQ(b->source(), Source::bar) << i << ": " << b->why();
        held.push_back(std::move(b).value());
    }
    auto spill = manager->allocate(c, 1 * MiB);
    ASSERT_TRUE(spill) << spill.error().message();
    EXPECT_TRUE(spill->is_fallback());
    EXPECT_EQ(spill->why(), "provider " + bdf + " has 0 bytes free, 1 MiB asked");
    std::printf("  fallback: %s (%s)\n", spill->why().c_str(),
                std::string(to_string(spill->source())).c_str());
    auto strict = manager->allocate_p2p(c, 1 * MiB);
    ASSERT_FALSE(strict);
    EXPECT_EQ(strict.error(), errc::no_p2p_memory);

    // Two neighbours back: one 2 MiB buffer fits where they were.
    const std::uint64_t at = held[3].offset();
    held.erase(held.begin() + 3, held.begin() + 5);
    auto big = manager->allocate_p2p(c, 2 * MiB);
    ASSERT_TRUE(big) << big.error().message();
    EXPECT_EQ(big->offset(), at);
    const auto a = manager->accounting();
    EXPECT_EQ(a.allocations, 18u);
    EXPECT_EQ(a.fallbacks, 1u);
    EXPECT_EQ(a.bytes_allocated, 14 * MiB + 1 * MiB + 2 * MiB);
    const auto u = manager->usage();
    ASSERT_EQ(u.size(), 1u);
    EXPECT_EQ(u[0].free_bytes, 0u);
}

} // namespace
