// rpm/c/replicator.h, first half: replicator options and the replicator
// (the replicated log: rlog.cpp).
#include "capi/handles.hpp"
#include "capi/status.hpp"

#include <chrono>
#include <string>
#include <vector>

using namespace rpm;
using namespace rpm::capi;

namespace {

int check_frontier(const char* function, int frontier) noexcept {
    if (frontier < RPM_FRONTIER_LOCAL || frontier > RPM_FRONTIER_ALL)
        return fail(errc::invalid_argument, (std::string(function) + ": frontier is not an rpm_frontier").c_str());
    return 0;
}

// A C event callback as ReplicatorOptions::on_event.
std::function<void(const ReplicaEvent&)> event_callback(rpm_replica_event_fn fn, void* ctx) {
    return [fn, ctx](const ReplicaEvent& e) {
        const bool failed = e.kind == ReplicaEvent::Kind::left || e.error.code();
        const std::string text = failed ? e.error.message() : e.detail;
        const rpm_replica_event c{static_cast<int>(e.kind), e.replica, e.uri.c_str(),
                                  failed ? code_of(e.error) : 0, text.c_str(), e.frontier};
        fn(ctx, &c);
    };
}

void fill(const ReplicaStatus& s, rpm_replica_status& out) noexcept {
    out.state = static_cast<int>(s.state);
    out.method = s.method ? static_cast<int>(*s.method) : -1;
    out.degraded = s.degraded ? 1 : 0;
    out.frontier = s.frontier;
    out.lag = s.lag;
    out.lag_bytes = s.lag_bytes;
    out.failures = s.failures;
    out.resyncs = s.resyncs;
    out.bytes_resynced = s.bytes_resynced;
}

static_assert(RPM_REPLICA_FAILED == static_cast<int>(ReplicaState::failed));
static_assert(RPM_EVENT_HEALTHY == static_cast<int>(ReplicaEvent::Kind::healthy));
static_assert(RPM_FRONTIER_ALL == static_cast<int>(Frontier::all));

} // namespace

extern "C" {

int rpm_replicator_opts_new(rpm_replicator_opts** out) {
    if (out == nullptr) return null_argument(__func__, "opts_out");
    return make_handle(__func__, out);
}

int rpm_replicator_opts_delete(rpm_replicator_opts** opts) { return delete_handle(__func__, opts); }

int rpm_replicator_opts_set_local(rpm_replicator_opts* opts, const char* path, size_t size, int create) {
    if (opts == nullptr) return null_argument(__func__, "opts");
    if (path == nullptr) return null_argument(__func__, "path");
    return guard(__func__, [&] {
        opts->o.local_path = path;
        opts->o.local_size = size;
        opts->o.create = create != 0;
        return 0;
    });
}

int rpm_replicator_opts_add_replica(rpm_replicator_opts* opts, const char* uri, const char* region,
                                    const rpm_client_opts* client) {
    if (opts == nullptr) return null_argument(__func__, "opts");
    if (uri == nullptr) return null_argument(__func__, "uri");
    if (region == nullptr) return null_argument(__func__, "region");
    return guard(__func__, [&] {
        ReplicaSpec spec;
        spec.uri = uri;
        spec.region = region;
        if (client != nullptr) spec.client = client->o;
        opts->o.replicas.push_back(std::move(spec));
        return 0;
    });
}

int rpm_replicator_opts_set_durability(rpm_replicator_opts* opts, const char* policy) {
    if (opts == nullptr) return null_argument(__func__, "opts");
    if (policy == nullptr) return null_argument(__func__, "policy");
    return guard(__func__, [&] { return status(parse_durability(policy), &opts->o.durability); });
}

int rpm_replicator_opts_set_fencing_term(rpm_replicator_opts* opts, uint64_t term) {
    if (opts == nullptr) return null_argument(__func__, "opts");
    opts->o.fencing_term = term;
    return 0;
}

int rpm_replicator_opts_set_timing(rpm_replicator_opts* opts, int64_t heartbeat_ms, int64_t failure_ms,
                                   int64_t reconnect_ms) {
    if (opts == nullptr) return null_argument(__func__, "opts");
    if (heartbeat_ms <= 0 || failure_ms <= 0 || reconnect_ms <= 0)
        return fail(errc::invalid_argument, "rpm_replicator_opts_set_timing: every interval must be positive");
    opts->o.heartbeat_interval = std::chrono::milliseconds(heartbeat_ms);
    opts->o.failure_timeout = std::chrono::milliseconds(failure_ms);
    opts->o.reconnect_interval = std::chrono::milliseconds(reconnect_ms);
    return 0;
}

int rpm_replicator_opts_set_sysfs_root(rpm_replicator_opts* opts, const char* root) {
    if (opts == nullptr) return null_argument(__func__, "opts");
    if (root == nullptr) return null_argument(__func__, "root");
    return guard(__func__, [&] {
        opts->o.sysfs_root = root;
        return 0;
    });
}

int rpm_replicator_opts_set_event_fn(rpm_replicator_opts* opts, rpm_replica_event_fn fn, void* ctx) {
    if (opts == nullptr) return null_argument(__func__, "opts");
    return guard(__func__, [&] {
        opts->o.on_event = fn != nullptr ? event_callback(fn, ctx) : nullptr;
        return 0;
    });
}

int rpm_replicator_opts_set_adopt_foreign(rpm_replicator_opts* opts, int adopt) {
    if (opts == nullptr) return null_argument(__func__, "opts");
    opts->o.adopt_foreign = adopt != 0;
    return 0;
}

int rpm_replicator_open(const rpm_replicator_opts* opts, rpm_replicator** out) {
    if (opts == nullptr) return null_argument(__func__, "opts");
    if (out == nullptr) return null_argument(__func__, "replicator_out");
    return guard(__func__, [&] {
        auto r = Replicator::open(opts->o);
        if (!r) return fail(r.error());
        *out = new rpm_replicator{std::move(*r)};
        return 0;
    });
}

int rpm_replicator_close(rpm_replicator** r) { return delete_handle(__func__, r); }

int rpm_replicator_write(rpm_replicator* r, uint64_t offset, const void* buf, size_t len, uint64_t* lsn) {
    if (r == nullptr) return null_argument(__func__, "replicator");
    if (buf == nullptr && len != 0) return null_argument(__func__, "buf");
    return guard(__func__, [&] { return status(r->r.write(offset, bytes(buf, len)), lsn); });
}

int rpm_replicator_atomic_write(rpm_replicator* r, uint64_t offset, uint64_t value, uint64_t* lsn) {
    if (r == nullptr) return null_argument(__func__, "replicator");
    return guard(__func__, [&] { return status(r->r.atomic_write(offset, value), lsn); });
}

int rpm_replicator_commit(rpm_replicator* r, uint64_t* lsn) {
    if (r == nullptr) return null_argument(__func__, "replicator");
    return guard(__func__, [&] { return status(r->r.commit(), lsn); });
}

int rpm_replicator_persist(rpm_replicator* r, uint64_t offset, const void* buf, size_t len, uint64_t* lsn) {
    if (r == nullptr) return null_argument(__func__, "replicator");
    if (buf == nullptr && len != 0) return null_argument(__func__, "buf");
    return guard(__func__, [&] { return status(r->r.persist(offset, bytes(buf, len)), lsn); });
}

int rpm_replicator_persistv(rpm_replicator* r, const rpm_slice* slices, size_t count, uint64_t* lsn) {
    if (r == nullptr) return null_argument(__func__, "replicator");
    return guard(__func__, [&] {
        std::vector<WriteSlice> s;
        if (const int rc = to_slices(__func__, slices, count, s)) return rc;
        return status(r->r.persist(std::span<const WriteSlice>(s)), lsn);
    });
}

int rpm_replicator_wait(rpm_replicator* r, int frontier, uint64_t lsn, int64_t timeout_ms) {
    if (r == nullptr) return null_argument(__func__, "replicator");
    if (const int rc = check_frontier(__func__, frontier)) return rc;
    if (timeout_ms < 0) return fail(errc::invalid_argument, "rpm_replicator_wait: timeout_ms is negative");
    return guard(__func__, [&] {
        return status(r->r.wait(static_cast<Frontier>(frontier), lsn, std::chrono::milliseconds(timeout_ms)));
    });
}

int rpm_replicator_get_frontier(const rpm_replicator* r, int frontier, uint64_t* lsn) {
    if (r == nullptr) return null_argument(__func__, "replicator");
    if (lsn == nullptr) return null_argument(__func__, "lsn");
    if (const int rc = check_frontier(__func__, frontier)) return rc;
    *lsn = r->r.frontier(static_cast<Frontier>(frontier));
    return 0;
}

int rpm_replicator_get_last_lsn(const rpm_replicator* r, uint64_t* lsn) {
    if (r == nullptr) return null_argument(__func__, "replicator");
    if (lsn == nullptr) return null_argument(__func__, "lsn");
    *lsn = r->r.last_lsn();
    return 0;
}

int rpm_replicator_get_data(const rpm_replicator* r, const void** data, size_t* size) {
    if (r == nullptr) return null_argument(__func__, "replicator");
    if (data == nullptr) return null_argument(__func__, "data");
    if (size == nullptr) return null_argument(__func__, "size");
    *data = r->r.data().data();
    *size = r->r.size();
    return 0;
}

int rpm_replicator_get_members(const rpm_replicator* r, unsigned* members, unsigned* needed) {
    if (r == nullptr) return null_argument(__func__, "replicator");
    if (members == nullptr) return null_argument(__func__, "members");
    if (needed == nullptr) return null_argument(__func__, "needed");
    *members = r->r.members();
    *needed = r->r.needed();
    return 0;
}

int rpm_replicator_get_generation(const rpm_replicator* r, uint64_t* generation) {
    if (r == nullptr) return null_argument(__func__, "replicator");
    if (generation == nullptr) return null_argument(__func__, "generation");
    *generation = r->r.generation();
    return 0;
}

int rpm_replicator_get_replica_count(const rpm_replicator* r, size_t* count) {
    if (r == nullptr) return null_argument(__func__, "replicator");
    if (count == nullptr) return null_argument(__func__, "count");
    return guard(__func__, [&] {
        *count = r->r.replicas().size();
        return 0;
    });
}

int rpm_replicator_get_replica_status(const rpm_replicator* r, size_t index, rpm_replica_status* out) {
    if (r == nullptr) return null_argument(__func__, "replicator");
    if (out == nullptr) return null_argument(__func__, "status");
    return guard(__func__, [&] {
        const auto all = r->r.replicas();
        if (index >= all.size())
            return fail(errc::invalid_argument, ("rpm_replicator_get_replica_status: replica " + std::to_string(index) +
                                             " of " + std::to_string(all.size()))
                                                .c_str());
        fill(all[index], *out);
        return 0;
    });
}

} // extern "C"
