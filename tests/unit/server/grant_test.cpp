// Service::open_region: which method a session is granted.
#include "server/service.hpp"
#include "session_helper.hpp"

#include <gtest/gtest.h>

#include <cstring>

namespace {
using namespace rpm;

class VecTarget final : public server::ServedRegion {
public:
    std::uint64_t size() const noexcept override { return mem.size(); }
    void store(std::uint64_t o, std::span<const std::byte> d) noexcept override { std::memcpy(&mem[o], d.data(), d.size()); }
    void load(std::uint64_t o, std::span<std::byte> out) const noexcept override { std::memcpy(out.data(), &mem[o], out.size()); }
    void store8(std::uint64_t o, std::uint64_t v) noexcept override { std::memcpy(&mem[o], &v, 8); }
    Result<void> persist(flush::ServerPersist, std::span<const server::Range>) noexcept override { return {}; }
    std::byte* base() noexcept override { return mem.data(); }
    std::vector<std::byte> mem = std::vector<std::byte>(4096);
};

struct Fixture {
    explicit Fixture(PersistenceDomain domain, server::TransportCaps caps = {}) {
        auto r = std::make_unique<server::Region>();
        r->report.name = "r";
        r->report.domain = domain;
        r->served = std::make_unique<VecTarget>();
        server::decide_region(*r, {});
        std::vector<std::unique_ptr<server::Region>> regions;
        regions.push_back(std::move(r));
        ServerOptions o;
        o.secrets = {{"c", "s"}};
        service = std::make_unique<server::Service>(o, std::move(regions), "{}", rpm::Overrides{}, platform::Profile{}, caps);
        session = rpm::test::authenticated_session(*service);
    }
    std::unique_ptr<server::Service> service;
    server::Session session;
};

platform::RdmaDevice rnic(Ddio ddio, bool native) {
    platform::RdmaDevice d;
    d.name = "rnic0";
    d.ddio.state = ddio;
    d.native_flush = native ? platform::Tri::yes : platform::Tri::no;
    return d;
}

TEST(ServerGrant, NativeFlushIsNotGrantedWhileTheRdmaTransportCannotIssueIt) {
    Fixture f(PersistenceDomain::memory_controller);
    auto dev = rnic(Ddio::on, true);
    auto g = f.service->open_region(f.session, {"r", std::nullopt, false}, server::TransportKind::rdma, &dev);
    ASSERT_TRUE(g) << g.error().message();
    EXPECT_EQ(g->method, flush::Method::send_flush);  // the table's ADR + DDIO on cell
    EXPECT_NE(g->reason.find("native flush no"), std::string::npos) << g->reason;
}

TEST(ServerGrant, NativeFlushIsGrantedWhereTheTransportCan) {
    Fixture f(PersistenceDomain::memory_controller, server::TransportCaps{true});
    auto dev = rnic(Ddio::on, true);
    auto g = f.service->open_region(f.session, {"r", std::nullopt, false}, server::TransportKind::rdma, &dev);
    ASSERT_TRUE(g);
    EXPECT_EQ(g->method, flush::Method::native_flush);
    EXPECT_EQ(g->server_persist, flush::ServerPersist::none);
}

// What an RDMA listener's registrations say of a region's memory.
struct FixedMemory final : server::RdmaMemory {
    flush::TransportAbility answer;
    int asked = 0;
    flush::TransportAbility native_flush(server::Region&) override {
        ++asked;
        return answer;
    }
};

TEST(ServerGrant, NativeFlushNeedsTheRegionsMemoryToAdmitIt) {
    Fixture f(PersistenceDomain::memory_controller, server::TransportCaps{true});
    auto dev = rnic(Ddio::on, true);
    FixedMemory mem;
    mem.answer = {false, "the RNIC would not register region 'r''s memory for persistent FLUSH"};
    auto g = f.service->open_region(f.session, {"r", std::nullopt, false}, server::TransportKind::rdma, &dev, &mem);
    ASSERT_TRUE(g) << g.error().message();
    EXPECT_EQ(mem.asked, 1);
    EXPECT_EQ(g->method, flush::Method::send_flush);  // the table's ADR + DDIO on cell
    EXPECT_NE(g->reason.find("native flush no (the RNIC reports native flush, but the RNIC would not register"),
              std::string::npos)
        << g->reason;
    // Forcing it is unsafe here; with unsafe the listener refuses it
    // (complete_grant: native_persist_test.cpp).
    auto forced = f.service->open_region(f.session, {"r", flush::Method::native_flush, false},
                                      server::TransportKind::rdma, &dev, &mem);
    ASSERT_FALSE(forced);
    EXPECT_NE(forced.error().message().find("unsafe"), std::string::npos) << forced.error().message();
    mem.answer = {true, {}};
    auto yes = f.service->open_region(f.session, {"r", std::nullopt, false}, server::TransportKind::rdma, &dev, &mem);
    ASSERT_TRUE(yes);
    EXPECT_EQ(yes->method, flush::Method::native_flush);
    // An RNIC that reports no FLUSH: the memory is not asked.
    auto none = rnic(Ddio::on, false);
    const int asked = mem.asked;
    ASSERT_TRUE(f.service->open_region(f.session, {"r", std::nullopt, false}, server::TransportKind::rdma, &none, &mem));
    EXPECT_EQ(mem.asked, asked);
}

TEST(ServerGrant, RdmaGrantFollowsTheRnicsDdioAndTcpTheDomain) {
    Fixture f(PersistenceDomain::memory_controller);
    auto off = rnic(Ddio::off, false);
    auto g = f.service->open_region(f.session, {"r", std::nullopt, false}, server::TransportKind::rdma, &off);
    ASSERT_TRUE(g);
    EXPECT_EQ(g->method, flush::Method::read_after_write);
    auto t = f.service->open_region(f.session, {"r", std::nullopt, false}, server::TransportKind::tcp, nullptr);
    ASSERT_TRUE(t);
    EXPECT_EQ(t->method, flush::Method::send_flush);
    EXPECT_EQ(t->server_persist, flush::ServerPersist::cache_flush_sfence);
    EXPECT_NE(t->id, g->id);
}

TEST(ServerGrant, UnknownRnicCountsAsDdioOn) {
    Fixture f(PersistenceDomain::memory_controller);
    auto g = f.service->open_region(f.session, {"r", std::nullopt, false}, server::TransportKind::rdma, nullptr);
    ASSERT_TRUE(g);
    EXPECT_EQ(g->method, flush::Method::send_flush);
}

TEST(ServerGrant, ForcingReadAfterWriteWhereUnsafeNeedsUnsafe) {
    Fixture f(PersistenceDomain::memory_controller);
    auto on = rnic(Ddio::on, false);
    auto refused = f.service->open_region(f.session, {"r", flush::Method::read_after_write, false},
                                       server::TransportKind::rdma, &on);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message().find("unsafe"), std::string::npos);
    auto off = rnic(Ddio::off, false);
    auto safe = f.service->open_region(f.session, {"r", flush::Method::read_after_write, false},
                                    server::TransportKind::rdma, &off);
    EXPECT_TRUE(safe) << "read_after_write is safe under ADR with DDIO off";
}

TEST(ServerGrant, NothingBeforeAuthentication) {
    Fixture f(PersistenceDomain::cpu_cache);
    auto fresh = f.service->new_session();
    auto g = f.service->open_region(fresh, {"r", std::nullopt, false}, server::TransportKind::tcp, nullptr);
    ASSERT_FALSE(g);
    EXPECT_EQ(g.error().code(), errc::permission_denied);
    std::string data = "x";
    auto w = f.service->handle_write(fresh, {0, 0, std::as_bytes(std::span(data.data(), 1))});
    EXPECT_FALSE(w);
}

TEST(ServerGrant, OneConnectionCannotOpenWithoutBound) {
    Fixture f(PersistenceDomain::memory_controller);
    for (std::size_t i = 0; i < server::kMaxGrantsPerSession; ++i)
        ASSERT_TRUE(f.service->open_region(f.session, {"r", std::nullopt, false}, server::TransportKind::tcp, nullptr)) << i;
    auto more = f.service->open_region(f.session, {"r", std::nullopt, false}, server::TransportKind::tcp, nullptr);
    ASSERT_FALSE(more);
    EXPECT_EQ(more.error().code(), errc::bad_size);
    EXPECT_EQ(f.session.grants.size(), server::kMaxGrantsPerSession);
}

} // namespace
