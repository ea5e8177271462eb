#pragma once
// Shared pieces of the nvmf_controller_test suites: a fake Engine that only
// reports namespaces, SQE builders for the commands the controllers take,
// and a fixture with a registry of three subsystems (discovery, an open NVM
// subsystem, one that admits only host_a).

#include "nvmf/controller/controller.hpp"
#include "nvmf/wire.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace rpm::nvmf::target::test {

inline constexpr char nvm_nqn[] = "nqn.2026-11.io.rpm:disk";
inline constexpr char restricted_nqn[] = "nqn.2026-11.io.rpm:private";
inline constexpr char host_a[] = "nqn.2026-11.io.rpm:host-a";
inline constexpr char host_b[] = "nqn.2026-11.io.rpm:host-b";
/// CC for an I/O controller: EN, IOSQES 6, IOCQES 4 (what the kernel writes).
inline constexpr std::uint32_t cc_enable = 0x00460001;

/// An Engine that maps nothing: it reports `views` as its namespaces.
class FakeEngine : public Engine {
public:
    std::vector<NamespaceView> views;
    /// The first bytes of the data buffer of the last software command.
    std::vector<std::byte> seen;

    OffloadCaps query() const override { return {}; }
    Result<SubsystemHandle> create_subsystem(const SubsystemAttrs&) override { return SubsystemHandle{1}; }
    Result<BackendHandle> create_backend(SubsystemHandle, const NamespaceSpec&) override { return BackendHandle{1}; }
    Result<void> map_namespace(BackendHandle, std::uint32_t, std::uint32_t, std::uint32_t) override { return {}; }
    Result<void> unmap_namespace(BackendHandle, std::uint32_t) override { return {}; }
    Result<std::unique_ptr<OffloadQueue>> enable(SubsystemHandle) override { return errc::unsupported; }
    std::uint16_t execute_software(SubsystemHandle, std::span<const std::uint8_t, 64>, std::span<std::byte> data) override {
        seen.assign(data.begin(), data.begin() + std::ptrdiff_t(std::min<std::size_t>(data.size(), 64)));
        return wire::sc::invalid_opcode;
    }
    std::vector<NamespaceView> namespaces(SubsystemHandle) const override { return views; }
    StagingReport staging(SubsystemHandle) const override { return {}; }
    EngineStats stats(SubsystemHandle) const override { return {}; }
};

inline NamespaceView ns_view(std::uint32_t nsid, std::uint64_t blocks, std::uint32_t block_size) {
    NamespaceView v;
    v.nsid = nsid;
    v.blocks = blocks;
    v.block_size = block_size;
    for (std::size_t i = 0; i < v.nguid.size(); ++i) v.nguid[i] = std::uint8_t(nsid * 16 + i + 1);
    return v;
}

// ---- SQE builders ----------------------------------------------------------------
inline wire::Sqe admin_sqe(std::uint8_t opcode, std::uint16_t cid = 1) {
    wire::Sqe s;
    s.set_opcode(opcode);
    s.set_cid(cid);
    return s;
}

inline wire::Sqe connect_sqe(std::uint16_t qid, std::uint16_t sqsize, std::uint32_t kato = 0,
                             std::uint16_t recfmt = 0) {
    auto s = admin_sqe(wire::admin::fabrics);
    s.set_fctype(wire::fctype::connect);
    wire::put16(&s.b[40], recfmt);
    wire::put16(&s.b[42], qid);
    wire::put16(&s.b[44], sqsize);
    wire::put32(&s.b[48], kato);
    return s;
}

inline std::vector<std::uint8_t> connect_data(std::string_view subnqn, std::string_view hostnqn,
                                              std::uint16_t cntlid = wire::dynamic_cntlid, std::uint8_t hostid = 0) {
    std::vector<std::uint8_t> d(wire::connect_data_len);
    std::fill_n(d.begin(), 16, hostid);
    wire::put16(&d[16], cntlid);
    std::memcpy(&d[256], subnqn.data(), subnqn.size());
    std::memcpy(&d[512], hostnqn.data(), hostnqn.size());
    return d;
}

inline wire::Sqe property_sqe(std::uint8_t fctype, std::uint32_t offset, bool eight_bytes, std::uint64_t value = 0) {
    auto s = admin_sqe(wire::admin::fabrics);
    s.set_fctype(fctype);
    s.b[40] = eight_bytes ? 1 : 0;
    wire::put32(&s.b[44], offset);
    wire::put64(&s.b[48], value);
    return s;
}
inline wire::Sqe prop_get(std::uint32_t offset, bool eight_bytes = false) {
    return property_sqe(wire::fctype::property_get, offset, eight_bytes);
}
inline wire::Sqe prop_set(std::uint32_t offset, std::uint64_t value, bool eight_bytes = false) {
    return property_sqe(wire::fctype::property_set, offset, eight_bytes, value);
}

inline wire::Sqe identify_sqe(std::uint8_t cns, std::uint32_t nsid = 0) {
    auto s = admin_sqe(wire::admin::identify);
    s.set_nsid(nsid);
    s.set_cdw(10, cns);
    return s;
}

/// Get Log Page of `bytes` (a multiple of 4) at `offset`.
inline wire::Sqe log_sqe(std::uint8_t lid, std::uint64_t bytes, std::uint64_t offset = 0,
                         std::uint32_t nsid = 0xFFFFFFFF) {
    auto s = admin_sqe(wire::admin::get_log_page);
    const std::uint64_t numd = bytes / 4 - 1;
    s.set_nsid(nsid);
    s.set_cdw(10, lid | std::uint32_t(numd & 0xFFFF) << 16);
    s.set_cdw(11, std::uint32_t(numd >> 16));
    s.set_cdw(12, std::uint32_t(offset));
    s.set_cdw(13, std::uint32_t(offset >> 32));
    return s;
}

inline wire::Sqe set_feature_sqe(std::uint8_t fid, std::uint32_t cdw11) {
    auto s = admin_sqe(wire::admin::set_features);
    s.set_cdw(10, fid);
    s.set_cdw(11, cdw11);
    return s;
}
inline wire::Sqe get_feature_sqe(std::uint8_t fid, std::uint32_t sel = 0) {
    auto s = admin_sqe(wire::admin::get_features);
    s.set_cdw(10, fid | sel << 8);
    return s;
}

// ---- byte readers -------------------------------------------------------------------
inline std::string text(const std::vector<std::uint8_t>& d, std::size_t at, std::size_t len) {
    return {reinterpret_cast<const char*>(d.data() + at), len};
}
inline std::string padded(std::string s, std::size_t len, char pad) {
    s.resize(len, pad);
    return s;
}

// ---- the fixture -----------------------------------------------------------------
class ControllerTest : public ::testing::Test {
protected:
    ControllerTest() { rebuild(Limits{}); }

    void rebuild(const Limits& limits) {
        engine = std::make_shared<FakeEngine>();
        engine->views = {ns_view(1, 1000, 512), ns_view(3, 50, 4096)};
        SubsystemSpec open;
        open.nqn = nvm_nqn;
        open.namespaces.resize(2);
        open.namespaces[0].nsid = 1;
        open.namespaces[1].nsid = 3;
        SubsystemSpec closed;
        closed.nqn = restricted_nqn;
        closed.namespaces.resize(1);
        closed.allowed_hosts = {host_a};
        entries = {{.trtype = 3, .adrfam = 1, .subtype = 2, .portid = 1, .cntlid = 0xFFFF, .trsvcid = "4420",
                    .traddr = "127.0.0.1", .subnqn = nvm_nqn},
                   {.trtype = 3, .adrfam = 1, .subtype = 2, .portid = 1, .cntlid = 0xFFFF, .trsvcid = "4420",
                    .traddr = "127.0.0.1", .subnqn = restricted_nqn}};
        registry = std::make_unique<Registry>(
            std::vector{Subsystem::make_discovery(entries), Subsystem::make_nvm(open, engine, 1),
                        Subsystem::make_nvm(closed, engine, 2)},
            limits);
    }

    std::pair<std::shared_ptr<Controller>, Outcome> connect_admin(std::string_view subnqn = nvm_nqn,
                                                                  std::string_view host = host_a,
                                                                  std::uint32_t kato = 0) {
        return registry->connect(connect_sqe(0, 31, kato), connect_data(subnqn, host));
    }
    std::pair<std::shared_ptr<Controller>, Outcome> connect_io(std::uint16_t cntlid, std::uint16_t qid,
                                                               std::string_view host = host_a,
                                                               std::string_view subnqn = nvm_nqn,
                                                               std::uint16_t sqsize = 127, std::uint8_t hostid = 0) {
        return registry->connect(connect_sqe(qid, sqsize), connect_data(subnqn, host, cntlid, hostid));
    }

    /// A connected controller with CC.EN set (CSTS.RDY follows).
    std::shared_ptr<Controller> enabled(std::string_view subnqn = nvm_nqn, std::string_view host = host_a,
                                        std::uint32_t kato = 0) {
        auto [c, o] = connect_admin(subnqn, host, kato);
        EXPECT_EQ(o.status, wire::sc::success);
        if (!c) return nullptr;
        EXPECT_EQ(c->property_set(prop_set(wire::prop::cc, cc_enable)).status, wire::sc::success);
        EXPECT_TRUE(c->ready());
        return c;
    }

    Outcome run(Controller& c, const wire::Sqe& sqe) { return c.admin(sqe, {}); }

    std::shared_ptr<FakeEngine> engine;
    std::vector<DiscoveryEntry> entries;
    std::unique_ptr<Registry> registry;
};

} // namespace rpm::nvmf::target::test
