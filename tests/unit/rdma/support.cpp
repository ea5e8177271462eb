#include "support.hpp"

#include <algorithm>
#include <thread>

namespace rpm::rdma::test {

std::unique_ptr<server::Region> make_region(const RegionSpec& spec, MemTarget** target_out) {
    auto r = std::make_unique<server::Region>();
    r->report.name = spec.name;
    r->report.path = "/fake/" + spec.name;
    r->report.size = spec.size;
    r->report.domain = spec.domain;
    r->domain_input = {spec.domain, flush::Source::detected, "test"};
    r->report.rdma_decision.inputs.domain = r->domain_input;
    r->report.rdma_decision.effective_domain = spec.domain;
    r->report.tcp_persist = flush::server_persist_for(spec.domain);
    auto t = std::make_unique<MemTarget>(spec.size);
    t->registrable_ = spec.registrable;
    *target_out = t.get();
    r->served = std::move(t);
    return r;
}

Harness::Harness(std::vector<RegionSpec> specs, std::filesystem::path sysfs_root, rpm::Overrides ov,
                 const std::function<void(ServerOptions&)>& tune, const PlatformTune& platform) {
    ServerOptions opts;
    opts.listen = {"rdma://" + std::string(kHost) + ":0"};
    opts.secrets = {{kClientId, kSecret}};
    opts.sysfs_root = std::move(sysfs_root);
    opts.on_message = [this](std::uint64_t, std::span<const std::byte> p) {
        std::lock_guard lock(mu);
        messages.emplace_back(p.begin(), p.end());
    };
    if (tune) tune(opts);
    std::vector<std::unique_ptr<server::Region>> regions;
    for (const auto& s : specs) {
        MemTarget* t = nullptr;
        regions.push_back(make_region(s, &t));
        targets[s.name] = t;
    }
    // As Server::start does: the profile detected under the sysfs root is
    // where the listener finds its RNIC (and so its DDIO).
    platform::DetectOptions d;
    d.root = opts.sysfs_root;
    d.query_verbs = false;
    auto detected = platform::detect(d);
    platform::Profile profile = detected ? std::move(*detected) : platform::Profile{};
    server::TransportCaps caps;
    if (platform) platform(profile, caps);
    service = std::make_unique<server::Service>(opts, std::move(regions), R"({"profile":"test"})", std::move(ov),
                                          std::move(profile), caps);
}

Harness::~Harness() {
    if (listener) listener->stop();
    listener.reset();
}

void Harness::listen(std::uint16_t port, ServerLimits limits) {
    auto l = listen_rdma_with(fake::Fabric::api(), *service, kHost, port, limits);
    ASSERT_TRUE(l) << l.error().message();
    listener = std::move(*l);
}

Result<std::unique_ptr<client::Transport>> Harness::connect(ClientOptions opts, ClientLimits limits) {
    if (opts.client_id == "default") opts.client_id = kClientId;
    if (opts.secret.empty()) opts.secret = kSecret;
    opts.timeout = 5s;
    return connect_rdma_with(fake::Fabric::api(), kHost, listener->port(), opts, limits);
}

std::unique_ptr<client::Transport> Harness::connect_ok(ClientLimits limits) {
    auto t = connect({}, limits);
    EXPECT_TRUE(t) << t.error().message();
    return t ? std::move(*t) : nullptr;
}

std::shared_ptr<DevicePools> client_pools(const Harness& h) {
    return DevicePools::find(fake::Fabric::api(), &h.fabric.context_);
}

std::vector<fake::MrRegCall> regs_with(const Harness& h, const Peer* peer, int usage) {
    std::vector<fake::MrRegCall> out;
    for (const auto& r : h.fabric.mr_regs())
        if (r.peer == peer && r.usage == usage) out.push_back(r);
    return out;
}

bool is_bounce_entry(const Harness& h, const LocalMr* mr) {
    auto pools = client_pools(h);
    if (!pools || mr->peer != pools->peer()) return false;
    const auto regs = regs_with(h, pools->peer(), kBounceUsage);
    return std::any_of(regs.begin(), regs.end(), [&](const auto& r) { return r.ptr == mr->ptr; });
}

std::size_t count_calls(const Harness& h, std::string_view call) {
    const auto calls = h.fabric.calls();
    return static_cast<std::size_t>(std::count(calls.begin(), calls.end(), call));
}

void ModeTest::SetUp() {
    h_ = std::make_unique<Harness>(
        std::vector<RegionSpec>{{"pm", PersistenceDomain::cpu_cache}, {"adr", PersistenceDomain::memory_controller}},
        "/", rpm::Overrides{}, [this](ServerOptions& o) {
            o.completion = GetParam();
            tune(o);
        });
    h_->listen();
    ClientOptions o;
    o.completion = GetParam();
    auto t = h_->connect(o);
    ASSERT_TRUE(t) << t.error().message();
    t_ = std::move(*t);
    g_ = open(*t_, "pm");
    adr_ = open(*t_, "adr");
    remote_ = h_->targets["pm"];
}

DirectHeld::DirectHeld(Harness& h, client::Transport& t, const proto::RegionGrant& g) : h_(h) {
    h_.fabric.hold_client_completions(true);
    const auto before = h_.fabric.reads().size();
    t.read(g, 0, out_, w_.done());
    const bool posted = eventually([&] { return h_.fabric.reads().size() > before; });
    EXPECT_TRUE(posted) << "the held read was not posted";
    if (posted) {
        EXPECT_EQ(h_.fabric.reads().back().ctx, direct_ctx()) << "the held read did not go direct";
    }
}

std::error_code DirectHeld::release() {
    if (released_) return {};
    released_ = true;
    h_.fabric.hold_client_completions(false);
    h_.fabric.release_held();
    return w_.get();
}

bool eventually(const std::function<bool()>& pred, std::chrono::milliseconds t) {
    const auto end = std::chrono::steady_clock::now() + t;
    while (std::chrono::steady_clock::now() < end) {
        if (pred()) return true;
        std::this_thread::sleep_for(2ms);
    }
    return pred();
}

proto::RegionGrant open(client::Transport& t, const std::string& name) {
    auto g = t.open_region(proto::OpenRegion{name, std::nullopt, false});
    EXPECT_TRUE(g) << g.error().message();
    return g ? *g : proto::RegionGrant{};
}

OneRegion::OneRegion(RegionSpec spec, ClientLimits limits) : h({spec}) {
    h.listen();
    auto c = h.connect(ClientOptions{}, limits);
    EXPECT_TRUE(c) << c.error().message();
    if (!c) return;
    t = std::move(*c);
    g = open(*t, spec.name);
}

std::vector<std::byte> bytes_of(std::string_view s) {
    std::vector<std::byte> out(s.size());
    std::memcpy(out.data(), s.data(), s.size());
    return out;
}

} // namespace rpm::rdma::test
