// rpm/c/server.h, first half: server options and the server (the probe:
// probe.cpp).
#include "capi/handles.hpp"
#include "capi/status.hpp"

#include <string>

using namespace rpm;
using namespace rpm::capi;

extern "C" {

int rpm_server_opts_new(rpm_server_opts** out) {
    if (out == nullptr) return null_argument(__func__, "opts_out");
    return make_handle(__func__, out);
}

int rpm_server_opts_delete(rpm_server_opts** opts) { return delete_handle(__func__, opts); }

int rpm_server_opts_add_listen(rpm_server_opts* opts, const char* uri) {
    if (opts == nullptr) return null_argument(__func__, "opts");
    if (uri == nullptr) return null_argument(__func__, "uri");
    return guard(__func__, [&] {
        opts->o.listen.emplace_back(uri);
        return 0;
    });
}

int rpm_server_opts_add_client(rpm_server_opts* opts, const char* client_id, const char* secret) {
    if (opts == nullptr) return null_argument(__func__, "opts");
    if (client_id == nullptr) return null_argument(__func__, "client_id");
    if (secret == nullptr) return null_argument(__func__, "secret");
    return guard(__func__, [&] {
        opts->o.secrets[client_id] = secret;
        return 0;
    });
}

int rpm_server_opts_add_region(rpm_server_opts* opts, const char* name, const char* path, size_t size,
                               int create) {
    if (opts == nullptr) return null_argument(__func__, "opts");
    if (name == nullptr) return null_argument(__func__, "name");
    if (path == nullptr) return null_argument(__func__, "path");
    return guard(__func__, [&] {
        RegionSpec spec;
        spec.name = name;
        spec.path = path;
        spec.size = size;
        spec.create = create != 0;
        opts->o.regions.push_back(std::move(spec));
        return 0;
    });
}

int rpm_server_opts_set_fence_dir(rpm_server_opts* opts, const char* dir) {
    if (opts == nullptr) return null_argument(__func__, "opts");
    return guard(__func__, [&] {
        opts->o.fence_dir.reset();
        if (dir != nullptr) opts->o.fence_dir = dir;
        return 0;
    });
}

int rpm_server_opts_set_sysfs_root(rpm_server_opts* opts, const char* root) {
    if (opts == nullptr) return null_argument(__func__, "opts");
    if (root == nullptr) return null_argument(__func__, "root");
    return guard(__func__, [&] {
        opts->o.sysfs_root = root;
        return 0;
    });
}

int rpm_server_opts_set_tls(rpm_server_opts* opts, const char* certificate, const char* private_key) {
    if (opts == nullptr) return null_argument(__func__, "opts");
    if (certificate == nullptr) return null_argument(__func__, "certificate");
    if (private_key == nullptr) return null_argument(__func__, "private_key");
    return guard(__func__, [&] {
        opts->o.tls = TlsOptions{certificate, private_key};
        return 0;
    });
}

int rpm_server_opts_set_message_fn(rpm_server_opts* opts, rpm_message_fn fn, void* ctx) {
    if (opts == nullptr) return null_argument(__func__, "opts");
    return guard(__func__, [&] {
        opts->o.on_message = nullptr;
        if (fn != nullptr)
            opts->o.on_message = [fn, ctx](std::uint64_t session, std::span<const std::byte> payload) {
                fn(ctx, session, payload.data(), payload.size());
            };
        return 0;
    });
}

int rpm_server_start(const rpm_server_opts* opts, rpm_server** out) {
    if (opts == nullptr) return null_argument(__func__, "opts");
    if (out == nullptr) return null_argument(__func__, "server_out");
    return guard(__func__, [&] {
        auto s = Server::start(opts->o);
        if (!s) return fail(s.error());
        *out = new rpm_server{std::move(*s)};
        return 0;
    });
}

int rpm_server_stop(rpm_server** server) {
    if (server == nullptr) return null_argument(__func__, "the handle's address");
    if (*server == nullptr) return 0;
    return guard(__func__, [&] {
        (*server)->s.stop();
        return delete_handle(__func__, server);
    });
}

int rpm_server_get_port(const rpm_server* server, int scheme, uint16_t* port) {
    if (server == nullptr) return null_argument(__func__, "server");
    if (port == nullptr) return null_argument(__func__, "port");
    if (scheme != RPM_SCHEME_TCP && scheme != RPM_SCHEME_RDMA)
        return fail(errc::invalid_argument, "rpm_server_get_port: scheme is not an rpm_scheme");
    const auto p = server->s.port(scheme == RPM_SCHEME_RDMA ? Scheme::rdma : Scheme::tcp);
    if (p == 0) return fail(errc::invalid_argument, "rpm_server_get_port: the server does not listen on it");
    *port = p;
    return 0;
}

int rpm_server_send(rpm_server* server, uint64_t session, const void* payload, size_t len) {
    if (server == nullptr) return null_argument(__func__, "server");
    if (payload == nullptr && len != 0) return null_argument(__func__, "payload");
    return guard(__func__, [&] { return status(server->s.send(session, bytes(payload, len))); });
}

} // extern "C"
