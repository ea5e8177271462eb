// rpm/c/client.h, second half: region options and regions (synchronous
// and asynchronous operations).
#include "capi/handles.hpp"
#include "capi/status.hpp"

#include <string>
#include <vector>

using namespace rpm;
using namespace rpm::capi;

namespace {

// The checks every region operation starts with: the handle, and a
// buffer for a non-empty length.
int check(const char* function, const rpm_region* region, const void* buf, std::size_t len) noexcept {
    if (region == nullptr) return null_argument(function, "region");
    if (buf == nullptr && len != 0) return null_argument(function, "buf");
    return 0;
}

// As check(), for the asynchronous forms: also their callback.
int check_async(const char* function, const rpm_region* region, const void* buf, std::size_t len,
                rpm_completion_fn done) noexcept {
    if (const int rc = check(function, region, buf, len)) return rc;
    if (done == nullptr) return null_argument(function, "done");
    return 0;
}

} // namespace

extern "C" {

int rpm_region_opts_new(rpm_region_opts** out) {
    if (out == nullptr) return null_argument(__func__, "opts_out");
    return make_handle(__func__, out);
}

int rpm_region_opts_delete(rpm_region_opts** opts) { return delete_handle(__func__, opts); }

int rpm_region_opts_set_fencing_term(rpm_region_opts* opts, uint64_t term) {
    if (opts == nullptr) return null_argument(__func__, "opts");
    opts->o.fencing_term = term;
    return 0;
}

int rpm_region_opts_force_method(rpm_region_opts* opts, int method, int unsafe) {
    if (opts == nullptr) return null_argument(__func__, "opts");
    if (method < RPM_METHOD_READ_AFTER_WRITE || method > RPM_METHOD_NATIVE_FLUSH)
        return fail(errc::invalid_argument, "rpm_region_opts_force_method: method is not an rpm_method");
    opts->o.force_method = static_cast<flush::Method>(method);
    opts->o.unsafe = unsafe != 0;
    return 0;
}

int rpm_region_open(rpm_conn* conn, const char* name, const rpm_region_opts* opts, rpm_region** out) {
    if (conn == nullptr) return null_argument(__func__, "conn");
    if (name == nullptr) return null_argument(__func__, "name");
    if (out == nullptr) return null_argument(__func__, "region_out");
    return guard(__func__, [&] {
        auto r = conn->c.open_region(name, opts != nullptr ? opts->o : RegionOptions{});
        if (!r) return fail(r.error());
        *out = new rpm_region{std::move(*r)};
        return 0;
    });
}

int rpm_region_delete(rpm_region** region) { return delete_handle(__func__, region); }

int rpm_region_get_size(const rpm_region* region, uint64_t* size) {
    if (region == nullptr) return null_argument(__func__, "region");
    if (size == nullptr) return null_argument(__func__, "size");
    *size = region->r.size();
    return 0;
}

int rpm_region_get_method(const rpm_region* region, int* method) {
    if (region == nullptr) return null_argument(__func__, "region");
    if (method == nullptr) return null_argument(__func__, "method");
    *method = static_cast<int>(region->r.method());
    return 0;
}

int rpm_region_get_server_persist(const rpm_region* region, int* server_persist) {
    if (region == nullptr) return null_argument(__func__, "region");
    if (server_persist == nullptr) return null_argument(__func__, "server_persist");
    *server_persist = static_cast<int>(region->r.server_persist());
    return 0;
}

int rpm_region_get_domain(const rpm_region* region, int* domain) {
    if (region == nullptr) return null_argument(__func__, "region");
    if (domain == nullptr) return null_argument(__func__, "domain");
    *domain = static_cast<int>(region->r.domain());
    return 0;
}

int rpm_region_get_reason(const rpm_region* region, const char** reason) {
    if (region == nullptr) return null_argument(__func__, "region");
    if (reason == nullptr) return null_argument(__func__, "reason");
    *reason = region->r.reason().c_str();
    return 0;
}

int rpm_region_write(rpm_region* region, uint64_t offset, const void* buf, size_t len) {
    if (const int rc = check(__func__, region, buf, len)) return rc;
    return guard(__func__, [&] { return status(region->r.write(offset, bytes(buf, len))); });
}

int rpm_region_read(rpm_region* region, uint64_t offset, void* buf, size_t len) {
    if (const int rc = check(__func__, region, buf, len)) return rc;
    return guard(__func__, [&] { return status(region->r.read(offset, bytes(buf, len))); });
}

int rpm_region_atomic_write(rpm_region* region, uint64_t offset, uint64_t value) {
    if (region == nullptr) return null_argument(__func__, "region");
    return guard(__func__, [&] { return status(region->r.atomic_write(offset, value)); });
}

int rpm_region_flush(rpm_region* region, uint64_t offset, uint64_t len) {
    if (region == nullptr) return null_argument(__func__, "region");
    return guard(__func__, [&] { return status(region->r.flush(offset, len)); });
}

int rpm_region_persist(rpm_region* region, uint64_t offset, const void* buf, size_t len) {
    if (const int rc = check(__func__, region, buf, len)) return rc;
    return guard(__func__, [&] { return status(region->r.persist(offset, bytes(buf, len))); });
}

int rpm_region_persistv(rpm_region* region, const rpm_slice* slices, size_t count) {
    if (region == nullptr) return null_argument(__func__, "region");
    return guard(__func__, [&] {
        std::vector<WriteSlice> s;
        if (const int rc = to_slices(__func__, slices, count, s)) return rc;
        return status(region->r.persist(std::span<const WriteSlice>(s)));
    });
}

int rpm_region_write_async(rpm_region* region, uint64_t offset, const void* buf, size_t len,
                           rpm_completion_fn done, void* ctx) {
    if (const int rc = check_async(__func__, region, buf, len, done)) return rc;
    return guard(__func__, [&] {
        region->r.write(offset, bytes(buf, len), completion(done, ctx));
        return 0;
    });
}

int rpm_region_read_async(rpm_region* region, uint64_t offset, void* buf, size_t len, rpm_completion_fn done,
                          void* ctx) {
    if (const int rc = check_async(__func__, region, buf, len, done)) return rc;
    return guard(__func__, [&] {
        region->r.read(offset, bytes(buf, len), completion(done, ctx));
        return 0;
    });
}

int rpm_region_atomic_write_async(rpm_region* region, uint64_t offset, uint64_t value, rpm_completion_fn done,
                                  void* ctx) {
    if (const int rc = check_async(__func__, region, nullptr, 0, done)) return rc;
    return guard(__func__, [&] {
        region->r.atomic_write(offset, value, completion(done, ctx));
        return 0;
    });
}

int rpm_region_flush_async(rpm_region* region, uint64_t offset, uint64_t len, rpm_completion_fn done, void* ctx) {
    if (const int rc = check_async(__func__, region, nullptr, 0, done)) return rc;
    return guard(__func__, [&] {
        region->r.flush(offset, len, completion(done, ctx));
        return 0;
    });
}

int rpm_region_persist_async(rpm_region* region, uint64_t offset, const void* buf, size_t len,
                             rpm_completion_fn done, void* ctx) {
    if (const int rc = check_async(__func__, region, buf, len, done)) return rc;
    return guard(__func__, [&] {
        region->r.persist(offset, bytes(buf, len), completion(done, ctx));
        return 0;
    });
}

int rpm_region_persistv_async(rpm_region* region, const rpm_slice* slices, size_t count, rpm_completion_fn done,
                              void* ctx) {
    if (const int rc = check_async(__func__, region, nullptr, 0, done)) return rc;
    return guard(__func__, [&] {
        // The C++ call keeps a view of its slices until `done` runs: they
        // live in the callback's own state, moved in with it.
        auto kept = std::make_shared<std::vector<WriteSlice>>();
        if (const int rc = to_slices(__func__, slices, count, *kept)) return rc;
        const std::span<const WriteSlice> view(*kept);
        region->r.persist(view, [kept, done, ctx](Result<void> r) { done(ctx, callback_status(r)); });
        return 0;
    });
}

} // extern "C"
