#include "pm_model_server.hpp"

#include <utility>
#include <vector>

namespace rpm::test {
namespace {

constexpr const char* kClient = "model-client";
constexpr const char* kSecret = "model-secret";
constexpr const char* kRegion = "model";

// The handshake a real client performs, so the session is authenticated by
// Service itself rather than by a flag the test sets.
Result<void> authenticate(server::Service& service, server::Session& s) {
    const proto::Hello hello = service.hello_for(s);
    proto::Auth auth;
    auth.client_id = kClient;
    auth.client_nonce.fill(0x5A);
    auth.mac = proto::auth_mac(kSecret, hello.challenge, auth.client_id, auth.client_nonce);
    auto welcome = service.authenticate(s, auth);
    if (!welcome) return welcome.error();
    return {};
}

} // namespace

void decide_model_region(server::Region& r, PersistenceDomain domain, std::uint64_t size) {
    r.report.name = kRegion;
    r.report.path = "(persistence model)";
    r.report.size = size;
    r.report.domain = domain;
    server::decide_region(r, rpm::Overrides{});  // the server's own function, not a copy
}

platform::RdmaDevice model_rnic(Ddio ddio, bool native_flush) {
    platform::RdmaDevice dev;
    dev.name = "model_rnic0";
    dev.ddio.state = ddio;
    dev.ddio.detail = "persistence model";
    dev.native_flush = native_flush ? platform::Tri::yes : platform::Tri::no;
    dev.atomic_write = platform::Tri::no;
    dev.caps_detail = "persistence model";
    return dev;
}

Result<std::unique_ptr<ModelServer>> ModelServer::start(const ModelServerOptions& opts) {
    auto target = std::make_unique<PersistenceModel>(opts.model);
    auto region = std::make_unique<server::Region>();
    decide_model_region(*region, opts.model.domain, target->size());
    PersistenceModel* model = target.get();
    region->served = std::move(target);

    ServerOptions so;
    so.secrets[kClient] = kSecret;
    std::vector<std::unique_ptr<server::Region>> regions;
    regions.push_back(std::move(region));

    std::unique_ptr<ModelServer> ms(new ModelServer);
    // The model's NIC can do native flush, so the method is exercised here
    // even though rdma:// cannot issue it on this build (rdma-core 44 has no ibv_wr_flush).
    ms->service_ = std::make_unique<server::Service>(std::move(so), std::move(regions), "{}", rpm::Overrides{},
                                               platform::Profile{}, server::TransportCaps{true});
    ms->model_ = model;
    ms->session_ = ms->service_->new_session();
    if (auto ok = authenticate(*ms->service_, ms->session_); !ok) return ok.error();

    proto::OpenRegion req;
    req.name = kRegion;
    req.force_method = opts.force_method;
    req.unsafe = opts.force_method.has_value();
    const platform::RdmaDevice rnic = model_rnic(opts.model.ddio, opts.native_flush);
    const bool rdma = opts.kind == server::TransportKind::rdma;
    auto grant = ms->service_->open_region(ms->session_, req, opts.kind, rdma ? &rnic : nullptr);
    if (!grant) return grant.error();
    ms->grant_ = std::move(*grant);
    return ms;
}

Result<void> ModelServer::write(std::uint64_t offset, std::span<const std::byte> data) {
    return service_->handle_write(session_, proto::Write{grant_.id, offset, data});
}

Result<void> ModelServer::atomic_write(std::uint64_t offset, std::uint64_t value) {
    return service_->handle_atomic_write(session_, proto::AtomicWrite{grant_.id, offset, value});
}

Result<void> ModelServer::flush(std::span<const server::Range> ranges) {
    proto::Flush f;
    f.region = grant_.id;
    f.ranges.assign(ranges.begin(), ranges.end());
    return service_->handle_flush(session_, f);
}

Result<void> ModelServer::persist(std::span<const proto::Slice> slices) {
    proto::Persist p;
    p.region = grant_.id;
    p.slices.assign(slices.begin(), slices.end());
    return service_->handle_persist(session_, p);
}

Result<void> ModelServer::read(std::uint64_t offset, std::span<std::byte> out) {
    return service_->handle_read(session_, proto::Read{grant_.id, offset, static_cast<std::uint32_t>(out.size())},
                              out);
}

void ModelServer::override_step(flush::ServerPersist step) {
    for (auto& g : session_.grants)
        if (g.id == grant_.id) g.step = step;
    grant_.server_persist = step;
}

} // namespace rpm::test
