// Server::start: validate the options, detect the platform, open and decide
// every region, then start one listener per URI.
#include <rpm/flush_plan.hpp>
#include <rpm/server.hpp>

#include "core/uri.hpp"
#include "server/service.hpp"
#include "server/listener.hpp"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <optional>
#include <set>

namespace rpm {

struct Server::Impl {
    std::unique_ptr<server::Service> service;
    std::vector<std::pair<Scheme, std::unique_ptr<server::Listener>>> listeners;
    std::vector<RegionReport> reports;
};

namespace {

Result<void> validate(const ServerOptions& o) {
    if (o.listen.empty()) return Error(errc::invalid_argument, "ServerOptions.listen is empty: give tcp://HOST:PORT");
    if (o.secrets.empty()) return Error(errc::invalid_argument, "ServerOptions.secrets is empty: no client could log in");
    if (o.regions.empty()) return Error(errc::invalid_argument, "ServerOptions.regions is empty: nothing to serve");
    if (o.handshake_timeout.count() <= 0 || o.max_connections == 0 || o.max_unauthenticated_per_address == 0 ||
        o.max_queued_answer_bytes == 0 || o.max_fencing_term_step == 0)
        return Error(errc::invalid_argument, "ServerOptions.handshake_timeout, max_connections, "
                                             "max_unauthenticated_per_address, max_queued_answer_bytes and "
                                             "max_fencing_term_step must be positive");
    std::set<std::string> names;
    for (const auto& r : o.regions) {
        if (r.name.empty() || r.name.size() > proto::kMaxName)
            return Error(errc::invalid_argument, "region names are 1 to 255 bytes ('" + r.name + "')");
        if (!names.insert(r.name).second) return Error(errc::invalid_argument, "region name '" + r.name + "' is used twice");
    }
    if (o.fence_dir) {
        std::error_code ec;
        if (!std::filesystem::is_directory(*o.fence_dir, ec))
            return Error(errc::invalid_argument, "ServerOptions.fence_dir " + o.fence_dir->string() + " is not a directory");
    }
    for (const auto& [id, secret] : o.secrets)
        if (id.empty() || id.size() > proto::kMaxName || secret.empty())
            return Error(errc::invalid_argument, "client ids are 1 to 255 bytes and secrets must not be empty");
    // A fencer no client logs in as is most likely a misspelt id: then the
    // real primary would be refused at its first election.
    if (o.fencers)
        for (const auto& id : *o.fencers)
            if (!o.secrets.count(id))
                return Error(errc::invalid_argument, "ServerOptions.fencers names client '" + id +
                                                         "', which is not in ServerOptions.secrets");
    return {};
}

Result<std::unique_ptr<server::Region>> open_region(const RegionSpec& s, const ServerOptions& o) {
    pmem::OpenOptions po;
    po.create = s.create;
    po.size = s.size;
    po.sysfs_root = o.sysfs_root;
    auto region = pmem::Region::open(s.path, po);
    if (!region) return Error(region.error().code(), "region '" + s.name + "': " + region.error().message());
    auto r = std::make_unique<server::Region>();
    r->report.name = s.name;
    r->report.path = s.path.string();
    r->report.size = region->size();
    r->report.domain = region->domain();
    r->granularity = region->granularity();
    r->clients = s.clients;
    r->served = std::make_unique<server::PmemServedRegion>(std::move(*region));
    // The term survives restarts: a server must never take back a term it
    // revoked (a stale primary would write again).
    r->fence.file = server::fence_file_for(s.name, s.path, o.fence_dir);
    // Locked before the term is read: rpm-server reset-term cannot change
    // it from here on, and while a reset is under way the server does not
    // start (it would read the term the reset is replacing).
    auto serving = server::lock_region_file(s.name, s.path, false);
    if (!serving) return serving.error();
    r->serving = std::move(*serving);
    if (r->fence.file) {
        auto term = server::load_term(*r->fence.file);
        if (!term) return Error(term.error().code(), "region '" + s.name + "': " + term.error().detail());
        r->fence.term = *term;
    }
    return r;
}


std::string profile_to_json(const platform::Profile& p, const std::vector<std::unique_ptr<server::Region>>& regions) {
    nlohmann::json j;
    j["cpu"]["clwb"] = p.cpu.clwb;
    j["cpu"]["clflushopt"] = p.cpu.clflushopt;
    j["cpu"]["clflush"] = p.cpu.clflush;
    j["rdma_devices"] = nlohmann::json::array();
    for (const auto& d : p.rdma_devices)
        j["rdma_devices"].push_back({{"name", d.name}, {"ddio", std::string(to_string(d.ddio.state))}});
    j["regions"] = nlohmann::json::array();
    for (const auto& r : regions) {
        const auto& d = r->report.rdma_decision;
        j["regions"].push_back({{"name", r->report.name},
                                {"size", r->report.size},
                                {"persistence_domain", std::string(to_string(r->report.domain))},
                                {"rdma_method", std::string(flush::to_string(d.method))},
                                {"rdma_server_persist", std::string(flush::to_string(d.server_persist))},
                                {"tcp_server_persist", std::string(flush::to_string(r->report.tcp_persist))},
                                {"reason", d.reason}});
    }
    return j.dump();
}

Result<std::unique_ptr<server::Listener>> listen(server::Service& service, const detail::Uri& u) {
    return u.scheme == Scheme::tcp ? server::listen_tcp(service, u.host, u.port)
                                   : server::listen_rdma(service, u.host, u.port);
}

} // namespace

Result<Server> Server::start(ServerOptions opts) {
    if (auto v = validate(opts); !v) return v.error();
    auto ov = load_overrides(opts.config, [](const char* k) { return std::getenv(k); });
    if (!ov) return ov.error();
    platform::DetectOptions d;
    d.root = opts.sysfs_root;
    d.extra_iio_device_ids = ov->iio_root_port_ids;
    auto profile = platform::detect(d);
    if (!profile) return profile.error();
    // The listen URIs first: a bad one must not leave region files behind.
    std::vector<detail::Uri> uris;
    for (const auto& uri : opts.listen) {
        auto u = detail::parse_uri(uri);
        if (!u) return u.error();
        uris.push_back(std::move(*u));
    }
    std::vector<std::unique_ptr<server::Region>> regions;
    for (const auto& s : opts.regions) {
        auto r = open_region(s, opts);
        if (!r) return r.error();
        server::decide_region(**r, *ov);
        regions.push_back(std::move(*r));
    }
    auto impl = std::make_unique<Impl>();
    for (const auto& r : regions) impl->reports.push_back(r->report);
    std::string pj = profile_to_json(*profile, regions);
    impl->service = std::make_unique<server::Service>(std::move(opts), std::move(regions), std::move(pj),
                                                      std::move(*ov), std::move(*profile),
                                                      server::TransportCaps{flush::rdma_ability().native_flush});
    for (const auto& u : uris) {
        auto l = listen(*impl->service, u);
        if (!l) return l.error();
        impl->listeners.emplace_back(u.scheme, std::move(*l));
    }
    return Server(std::move(impl));
}

Server::Server(std::unique_ptr<Impl> impl) noexcept : impl_(std::move(impl)) {}
Server::Server(Server&&) noexcept = default;
Server& Server::operator=(Server&&) noexcept = default;
Server::~Server() { stop(); }

std::uint16_t Server::port(Scheme scheme) const noexcept {
    if (!impl_) return 0;
    for (const auto& [s, l] : impl_->listeners)
        if (s == scheme) return l->port();
    return 0;
}

// A moved-from Server has no impl_: it reports nothing and sends nothing.
const std::vector<RegionReport>& Server::regions() const noexcept {
    static const std::vector<RegionReport> none;
    return impl_ ? impl_->reports : none;
}
const std::string& Server::profile_json() const noexcept {
    static const std::string none;
    return impl_ ? impl_->service->profile_json() : none;
}

Result<void> Server::send(std::uint64_t session, std::span<const std::byte> payload) {
    if (!impl_) return Error(errc::invalid_argument, "send on a moved-from Server");
    // Each listener knows its own sessions: the one that has it answers (a
    // refusal such as bad_size included); "no session" from all means none.
    std::optional<Error> refused;
    for (auto& [s, l] : impl_->listeners) {
        auto r = l->send(session, payload);
        if (r) return {};
        if (r.error().code() != errc::invalid_argument) refused = r.error();
    }
    if (refused) return *refused;
    return Error(errc::invalid_argument, "no open session " + std::to_string(session));
}

void Server::stop() {
    if (!impl_) return;
    for (auto& [s, l] : impl_->listeners) l->stop();
}

} // namespace rpm
