// The software engine's capabilities and create_subsystem's refusals of
// attributes outside them; verbs on handles that do not exist.
#include "engine_fixture.hpp"

#include <functional>

namespace rpm::nvmf {
namespace {

using namespace test;

TEST(NvmfEngineCaps, QueryReportsTheSoftwareLimits) {
    const auto c = make_software_engine()->query();
    EXPECT_EQ(c.offload_types, offload_read_write_flush | offload_write_zeroes | offload_dataset_management);
    EXPECT_EQ(c.max_namespaces, 1024u);
    EXPECT_GE(c.max_backend_ctrls_total, c.max_backend_ctrls);
    EXPECT_EQ(c.min_staging_buf_pages, 32u);
    EXPECT_EQ(c.max_staging_buf_pages, 65536u);
    EXPECT_EQ(c.max_io_size, 1u << 20);
    EXPECT_EQ(c.min_queue_size, 2u);
    EXPECT_EQ(c.max_queue_size, 1024u);
    EXPECT_EQ(c.min_ioccsz, 4u);
    EXPECT_EQ(c.max_ioccsz, (64u + (1u << 20)) / 16);
    EXPECT_EQ(c.max_icdoff, 0u);
}

TEST(NvmfEngineCaps, DefaultAttributesAndTheLimitsThemselvesAreAccepted) {
    auto e = make_software_engine();
    EXPECT_TRUE(e->create_subsystem({}));
    const auto c = e->query();
    SubsystemAttrs most;
    most.max_namespaces = c.max_namespaces;
    most.max_io_size = c.max_io_size;
    most.queue_size = c.max_queue_size;
    most.ioccsz = c.max_ioccsz;
    most.staging_bytes = std::size_t(c.max_staging_buf_pages) * 4096;
    auto h = e->create_subsystem(most);
    ASSERT_TRUE(h) << h.error().message();
    EXPECT_EQ(e->staging(*h).slots, 256u);
    SubsystemAttrs least;
    least.max_namespaces = 1;
    least.max_io_size = 4096;
    least.queue_size = c.min_queue_size;
    least.ioccsz = c.min_ioccsz;
    least.staging_bytes = std::size_t(c.min_staging_buf_pages) * 4096;
    auto l = e->create_subsystem(least);
    ASSERT_TRUE(l) << l.error().message();
    EXPECT_NE(*h, *l);
    EXPECT_EQ(e->staging(*l).slots, 32u);
}

struct Refusal {
    const char* field;
    std::function<void(SubsystemAttrs&)> change;
};

TEST(NvmfEngineCaps, AttributesOutsideTheCapsAreRefusedNamingTheField) {
    const std::vector<Refusal> cases = {
        {"offload_types", [](SubsystemAttrs& a) { a.offload_types = 1u << 5; }},
        {"offload_types", [](SubsystemAttrs& a) { a.offload_types = 0; }},
        {"max_namespaces", [](SubsystemAttrs& a) { a.max_namespaces = 0; }},
        {"max_namespaces", [](SubsystemAttrs& a) { a.max_namespaces = 1025; }},
        {"max_io_size", [](SubsystemAttrs& a) { a.max_io_size = 2u << 20; }},
        {"max_io_size", [](SubsystemAttrs& a) { a.max_io_size = 6000; }},
        {"max_io_size", [](SubsystemAttrs& a) { a.max_io_size = 0; }},
        {"queue_size", [](SubsystemAttrs& a) { a.queue_size = 1; }},
        {"queue_size", [](SubsystemAttrs& a) { a.queue_size = 1025; }},
        {"ioccsz", [](SubsystemAttrs& a) { a.ioccsz = 3; }},
        {"ioccsz", [](SubsystemAttrs& a) { a.ioccsz = (64 + (1u << 20)) / 16 + 1; }},
        {"icdoff", [](SubsystemAttrs& a) { a.icdoff = 1; }},
        {"staging_bytes", [](SubsystemAttrs& a) { a.staging_bytes = 4u << 20 | 100; }},
        {"staging_bytes", [](SubsystemAttrs& a) { a.staging_bytes = 31 * 4096; }},
        {"staging_bytes", [](SubsystemAttrs& a) { a.staging_bytes = std::size_t(65537) * 4096; }},
        {"staging_bytes", [](SubsystemAttrs& a) { a.max_io_size = 1u << 20; a.staging_bytes = 512 * KiB; }},
    };
    auto e = make_software_engine();
    for (const auto& c : cases) {
        SubsystemAttrs a;
        c.change(a);
        auto h = e->create_subsystem(a);
        ASSERT_FALSE(h) << c.field;
        EXPECT_EQ(h.error(), errc::unsupported) << c.field;
        EXPECT_EQ(h.error().detail().rfind(c.field, 0), 0u) << h.error().detail();
    }
}

TEST(NvmfEngineCaps, VerbsOnHandlesThatDoNotExist) {
    auto e = make_software_engine();
    TempDir dir;
    NamespaceSpec spec{.path = dir / "a", .create = true, .size = 1 * MiB};
    auto b = e->create_backend(42, spec);
    ASSERT_FALSE(b);
    EXPECT_EQ(b.error(), errc::invalid_argument);
    EXPECT_FALSE(fs::exists(dir / "a"));  // refused before touching the file system
    EXPECT_EQ(e->map_namespace(7, 1, 512, 1).error(), errc::invalid_argument);
    EXPECT_EQ(e->unmap_namespace(7, 1).error(), errc::invalid_argument);
    EXPECT_EQ(e->enable(0).error(), errc::invalid_argument);
    AlignedBuffer buf(128 * KiB);
    EXPECT_EQ(e->execute_software(3, view(sqe(wire::io::read, 1)), buf.bytes()), sc::internal_error);
    EXPECT_TRUE(e->namespaces(3).empty());
    EXPECT_EQ(e->staging(3).slots, 0u);
    EXPECT_EQ(e->stats(3).commands, 0u);
}

} // namespace
} // namespace rpm::nvmf
