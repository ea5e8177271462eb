// Service: the server's handshake, grants and request handlers. Every handler
// checks the session, the grant and the range before touching a ServedRegion,
// so a bad request leaves the region exactly as it was.
#include "server/service.hpp"

#include <rpm/flush_plan.hpp>

#include <algorithm>
#include <string_view>

namespace rpm::server {
namespace {

Error denied() {
    // One answer for an unknown client and a wrong MAC: no oracle for ids.
    return Error(errc::auth_failed, "the server refused: unknown client id or wrong secret");
}


} // namespace

const Grant* Session::grant(std::uint32_t grant_id) const noexcept {
    return grant_id < grants.size() ? &grants[grant_id] : nullptr;
}

Service::Service(ServerOptions opts, std::vector<std::unique_ptr<Region>> regions, std::string profile_json,
           rpm::Overrides overrides, platform::Profile profile, TransportCaps caps)
    : opts_(std::move(opts)), regions_(std::move(regions)), profile_json_(std::move(profile_json)),
      overrides_(std::move(overrides)), profile_(std::move(profile)), caps_(caps) {}

const platform::RdmaDevice* Service::rdma_device(std::string_view name) const noexcept {
    for (const auto& d : profile_.rdma_devices)
        if (d.name == name) return &d;
    return nullptr;
}

Session Service::new_session() {
    Session s;
    s.id = next_session_.fetch_add(1);
    return s;
}

proto::Hello Service::hello_for(Session& s) {
    s.hello = proto::Hello{};
    s.hello.challenge = proto::random_nonce();
    return s.hello;
}

Result<proto::Welcome> Service::authenticate(Session& s, const proto::Auth& auth) const {
    if (auth.version < s.hello.min_version || auth.version > s.hello.max_version)
        return Error(errc::unsupported, "protocol version " + std::to_string(auth.version) +
                                            " is not supported; this server speaks " +
                                            std::to_string(proto::kVersion));
    auto it = opts_.secrets.find(auth.client_id);
    if (it == opts_.secrets.end()) return denied();
    auto expect = proto::auth_mac(it->second, s.hello.challenge, auth.client_id, auth.client_nonce);
    if (!proto::mac_equal(expect, auth.mac)) return denied();
    s.client_id = auth.client_id;
    s.authenticated = true;
    return proto::Welcome{proto::server_mac(it->second, auth.client_nonce, s.hello.challenge),
                          profile_json_};
}

Result<void> check_range(const Region& r, std::uint64_t offset, std::uint64_t length) {
    const std::uint64_t size = r.served->size();
    if (offset <= size && length <= size - offset) return {};
    return Error(errc::out_of_range, "range of " + std::to_string(length) + " bytes at offset " +
                                             std::to_string(offset) + " is outside region '" +
                                             r.report.name + "' (" + std::to_string(size) + " bytes)");
}

void Service::deliver_message(std::uint64_t session, std::span<const std::byte> payload) const {
    if (opts_.on_message) opts_.on_message(session, payload);
}

} // namespace rpm::server
