// rpm/c/client.h, first half: connection options, connections, messages
// and registered memory (regions: region.cpp).
#include "capi/handles.hpp"
#include "capi/status.hpp"

#include <chrono>
#include <string>

using namespace rpm;
using namespace rpm::capi;

namespace {

// Wraps a C recv callback: rpm_errormsg() inside it tells a failure.
RecvCallback recv_callback(rpm_recv_fn done, void* ctx) {
    return [done, ctx](Result<std::size_t> r) {
        if (r) {
            done(ctx, static_cast<std::int64_t>(*r));
            return;
        }
        done(ctx, fail(r.error()));
    };
}

} // namespace

namespace rpm::capi {

Callback completion(rpm_completion_fn done, void* ctx) {
    return [done, ctx](Result<void> r) { done(ctx, callback_status(r)); };
}

} // namespace rpm::capi

extern "C" {

int rpm_client_opts_new(rpm_client_opts** out) {
    if (out == nullptr) return null_argument(__func__, "opts_out");
    return make_handle(__func__, out);
}

int rpm_client_opts_delete(rpm_client_opts** opts) { return delete_handle(__func__, opts); }

int rpm_client_opts_set_id(rpm_client_opts* opts, const char* id) {
    if (opts == nullptr) return null_argument(__func__, "opts");
    if (id == nullptr) return null_argument(__func__, "client_id");
    return guard(__func__, [&] {
        opts->o.client_id = id;
        return 0;
    });
}

int rpm_client_opts_set_secret(rpm_client_opts* opts, const char* secret) {
    if (opts == nullptr) return null_argument(__func__, "opts");
    if (secret == nullptr) return null_argument(__func__, "secret");
    return guard(__func__, [&] {
        opts->o.secret = secret;
        return 0;
    });
}

int rpm_client_opts_set_tls(rpm_client_opts* opts, int enable, const char* ca_file) {
    if (opts == nullptr) return null_argument(__func__, "opts");
    return guard(__func__, [&] {
        opts->o.tls = enable != 0;
        opts->o.tls_ca.reset();
        if (ca_file != nullptr) opts->o.tls_ca = ca_file;
        return 0;
    });
}

int rpm_client_opts_set_timeout(rpm_client_opts* opts, std::int64_t timeout_ms) {
    if (opts == nullptr) return null_argument(__func__, "opts");
    if (timeout_ms <= 0)
        return guard(__func__, [&] {
            return fail(errc::invalid_argument,
                        ("rpm_client_opts_set_timeout: " + std::to_string(timeout_ms) + " ms is not positive").c_str());
        });
    opts->o.timeout = std::chrono::milliseconds(timeout_ms);
    return 0;
}

int rpm_client_opts_set_completion(rpm_client_opts* opts, int mode) {
    if (opts == nullptr) return null_argument(__func__, "opts");
    if (mode < RPM_COMPLETION_ADAPTIVE || mode > RPM_COMPLETION_EVENT)
        return fail(errc::invalid_argument, "rpm_client_opts_set_completion: mode is not an rpm_completion_mode");
    opts->o.completion = static_cast<CompletionMode>(mode);
    return 0;
}

int rpm_conn_new(const char* uri, const rpm_client_opts* opts, rpm_conn** out) {
    if (uri == nullptr) return null_argument(__func__, "uri");
    if (out == nullptr) return null_argument(__func__, "conn_out");
    return guard(__func__, [&] {
        auto c = Client(opts != nullptr ? opts->o : ClientOptions{}).connect(uri);
        if (!c) return fail(c.error());
        *out = new rpm_conn{std::move(*c)};
        return 0;
    });
}

int rpm_conn_close(rpm_conn* conn) {
    if (conn == nullptr) return null_argument(__func__, "conn");
    return guard(__func__, [&] {
        conn->c.close();
        return 0;
    });
}

int rpm_conn_delete(rpm_conn** conn) {
    if (conn == nullptr) return null_argument(__func__, "the handle's address");
    if (*conn == nullptr) return 0;
    // Closed here, not when the last region handle goes (the C++
    // destructor's rule): a C caller deleting its connection means it.
    const int rc = rpm_conn_close(*conn);
    delete_handle(__func__, conn);
    return rc;
}

int rpm_conn_get_scheme(const rpm_conn* conn, int* scheme) {
    if (conn == nullptr) return null_argument(__func__, "conn");
    if (scheme == nullptr) return null_argument(__func__, "scheme");
    const auto s = conn->c.transport();
    if (!s) return fail(errc::invalid_argument, "rpm_conn_get_scheme: the connection is gone");
    *scheme = *s == Scheme::rdma ? RPM_SCHEME_RDMA : RPM_SCHEME_TCP;
    return 0;
}

int rpm_conn_get_server_profile(const rpm_conn* conn, const char** json) {
    if (conn == nullptr) return null_argument(__func__, "conn");
    if (json == nullptr) return null_argument(__func__, "json");
    *json = conn->c.server_profile_json().c_str();
    return 0;
}

int rpm_conn_send(rpm_conn* conn, const void* buf, size_t len) {
    if (conn == nullptr) return null_argument(__func__, "conn");
    if (buf == nullptr && len != 0) return null_argument(__func__, "buf");
    return guard(__func__, [&] { return status(conn->c.send(bytes(buf, len))); });
}

int rpm_conn_send_async(rpm_conn* conn, const void* buf, size_t len, rpm_completion_fn done, void* ctx) {
    if (conn == nullptr) return null_argument(__func__, "conn");
    if (buf == nullptr && len != 0) return null_argument(__func__, "buf");
    if (done == nullptr) return null_argument(__func__, "done");
    return guard(__func__, [&] {
        conn->c.send(bytes(buf, len), completion(done, ctx));
        return 0;
    });
}

int rpm_conn_recv(rpm_conn* conn, void* buf, size_t cap, size_t* len_out) {
    if (conn == nullptr) return null_argument(__func__, "conn");
    if (buf == nullptr && cap != 0) return null_argument(__func__, "buf");
    if (len_out == nullptr) return null_argument(__func__, "len_out");
    return guard(__func__, [&] { return status(conn->c.recv(bytes(buf, cap)), len_out); });
}

int rpm_conn_recv_async(rpm_conn* conn, void* buf, size_t cap, rpm_recv_fn done, void* ctx) {
    if (conn == nullptr) return null_argument(__func__, "conn");
    if (buf == nullptr && cap != 0) return null_argument(__func__, "buf");
    if (done == nullptr) return null_argument(__func__, "done");
    return guard(__func__, [&] {
        conn->c.recv(bytes(buf, cap), recv_callback(done, ctx));
        return 0;
    });
}

int rpm_mem_register(rpm_conn* conn, void* ptr, size_t len, rpm_mem** out) {
    if (conn == nullptr) return null_argument(__func__, "conn");
    if (ptr == nullptr) return null_argument(__func__, "ptr");
    if (out == nullptr) return null_argument(__func__, "mem_out");
    return guard(__func__, [&] {
        auto m = conn->c.register_memory(bytes(ptr, len));
        if (!m) return fail(m.error());
        *out = new rpm_mem{std::move(*m)};
        return 0;
    });
}

int rpm_mem_get_registered(const rpm_mem* mem, int* registered) {
    if (mem == nullptr) return null_argument(__func__, "mem");
    if (registered == nullptr) return null_argument(__func__, "registered");
    *registered = mem->m.registered() ? 1 : 0;
    return 0;
}

int rpm_mem_deregister(rpm_mem** mem) { return delete_handle(__func__, mem); }

} // extern "C"
