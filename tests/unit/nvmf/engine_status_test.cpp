// How a backend's failures become NVMe media errors, on a subsystem whose
// backend fails on demand, and the statuses of a flush of every namespace.
#include "engine_fixture.hpp"

#include "nvmf/engine/subsystem.hpp"

#include <atomic>

namespace rpm::nvmf {
namespace {

using namespace test;
namespace io = wire::io;

class FailingBackend final : public detail::Backend {
public:
    explicit FailingBackend(std::uint32_t granule = 1)
        : Backend({BackendKind::block, "/failing", 1 * MiB, granule, "fails on demand"}) {}
    std::atomic<bool> fail{false};
    std::atomic<int> flushes{0};

    Result<void> read(std::uint64_t, std::span<std::byte> out) override {
        if (fail) return Error(errc::io_error, "read failed");
        std::fill(out.begin(), out.end(), std::byte{0x5A});
        return {};
    }
    Result<void> write(std::uint64_t, std::span<const std::byte>, bool) override { return outcome(); }
    Result<void> write_zeroes(std::uint64_t, std::uint64_t) override { return outcome(); }
    Result<void> deallocate(std::uint64_t, std::uint64_t) override { return outcome(); }
    Result<void> flush() override {
        ++flushes;
        return outcome();
    }

private:
    Result<void> outcome() const { return fail ? Result<void>(errc::io_error, "failed") : Result<void>(); }
};

std::shared_ptr<detail::SubsystemState> make_subsystem(const SubsystemAttrs& a = {}) {
    auto staging = detail::Staging::create(a);
    EXPECT_TRUE(staging);
    return std::make_shared<detail::SubsystemState>(a, std::move(*staging));
}

TEST(NvmfEngineStatus, BackendFailuresAreMediaErrors) {
    auto sub = make_subsystem();
    auto backend = std::make_shared<FailingBackend>();
    ASSERT_TRUE(sub->map(1, backend, 1, 512, 1));
    AlignedBuffer buf(128 * KiB);
    const auto run = [&](std::uint8_t op) { return sub->execute(view(sqe(op, 1, 0, 2)), buf.bytes(), false); };
    EXPECT_EQ(run(io::read), sc::success);
    EXPECT_EQ(std::to_integer<int>(buf.bytes()[1023]), 0x5A);
    EXPECT_EQ(std::to_integer<int>(buf.bytes()[1024]), 0);  // two blocks, no more
    backend->fail = true;
    EXPECT_EQ(run(io::read), sc::unrecovered_read_error);
    EXPECT_EQ(run(io::write), sc::write_fault);
    EXPECT_EQ(run(io::write_zeroes), sc::write_fault);
    EXPECT_EQ(run(io::flush), sc::write_fault);
    EXPECT_EQ(sc::sct_of(sc::write_fault), 2);
    EXPECT_EQ(sc::code_of(sc::write_fault), 0x80);
    EXPECT_EQ(sc::code_of(sc::unrecovered_read_error), 0x81);
    const auto st = sub->counters().snapshot();
    EXPECT_EQ(st.commands, 5u);
    EXPECT_EQ(st.errors, 4u);
    EXPECT_EQ(st.reads, 2u);
    EXPECT_EQ(st.bytes_read, 1024u);  // only the read that succeeded
    EXPECT_EQ(st.bytes_written, 0u);
}

TEST(NvmfEngineStatus, FlushOfEveryNamespaceReachesEachAndReportsAFailure) {
    auto sub = make_subsystem();
    auto good = std::make_shared<FailingBackend>();
    auto bad = std::make_shared<FailingBackend>();
    ASSERT_TRUE(sub->map(1, good, 1, 512, 1));
    ASSERT_TRUE(sub->map(2, bad, 7, 4096, 1));
    AlignedBuffer buf(4096);
    EXPECT_EQ(sub->execute(view(sqe(io::flush, 0xFFFFFFFF)), buf.bytes(), false), sc::success);
    bad->fail = true;
    EXPECT_EQ(sub->execute(view(sqe(io::flush, 0xFFFFFFFF)), buf.bytes(), false), sc::write_fault);
    EXPECT_EQ(good->flushes, 2);
    EXPECT_EQ(bad->flushes, 2);
}

TEST(NvmfEngineStatus, AnLbaFinerThanTheBackendsLogicalBlockIsRefused) {
    auto sub = make_subsystem();
    auto backend = std::make_shared<FailingBackend>(4096);
    auto m = sub->map(1, backend, 1, 512, 1);
    ASSERT_FALSE(m);
    EXPECT_EQ(m.error(), errc::invalid_argument);
    EXPECT_NE(m.error().detail().find("finer than the logical block size 4096"), std::string::npos)
        << m.error().detail();
    EXPECT_TRUE(sub->map(1, backend, 1, 4096, 1));
}

} // namespace
} // namespace rpm::nvmf
