// rpm/c/replicator.h, second half: the replicated log.
#include "capi/handles.hpp"
#include "capi/status.hpp"

using namespace rpm;
using namespace rpm::capi;

namespace {

int appended(const Result<LogAppend>& a, rpm_rlog_append_info* info) noexcept {
    if (!a) return fail(a.error());
    if (info != nullptr) *info = {a->index, a->position, a->lsn};
    return 0;
}

int check_append(const char* function, const rpm_rlog* log, const void* payload, std::size_t len) noexcept {
    if (log == nullptr) return null_argument(function, "log");
    if (payload == nullptr && len != 0) return null_argument(function, "payload");
    return 0;
}

} // namespace

extern "C" {

int rpm_rlog_open(rpm_replicator* r, uint64_t offset, uint64_t length, rpm_rlog** out) {
    if (r == nullptr) return null_argument(__func__, "replicator");
    if (out == nullptr) return null_argument(__func__, "log_out");
    return guard(__func__, [&] {
        auto l = ReplicatedLog::open(r->r, offset, length);
        if (!l) return fail(l.error());
        *out = new rpm_rlog{std::move(*l)};
        return 0;
    });
}

int rpm_rlog_close(rpm_rlog** log) { return delete_handle(__func__, log); }

int rpm_rlog_append(rpm_rlog* log, const void* payload, size_t len, rpm_rlog_append_info* info) {
    if (const int rc = check_append(__func__, log, payload, len)) return rc;
    return guard(__func__, [&] { return appended(log->l.append(bytes(payload, len)), info); });
}

int rpm_rlog_append_durable(rpm_rlog* log, const void* payload, size_t len, rpm_rlog_append_info* info) {
    if (const int rc = check_append(__func__, log, payload, len)) return rc;
    return guard(__func__, [&] { return appended(log->l.append_durable(bytes(payload, len)), info); });
}

int rpm_rlog_reset(rpm_rlog* log, uint64_t* lsn) {
    if (log == nullptr) return null_argument(__func__, "log");
    return guard(__func__, [&] { return status(log->l.reset(), lsn); });
}

int rpm_rlog_foreach(const rpm_rlog* log, rpm_rlog_record_fn fn, void* ctx) {
    if (log == nullptr) return null_argument(__func__, "log");
    if (fn == nullptr) return null_argument(__func__, "fn");
    return guard(__func__, [&] {
        log->l.for_each([fn, ctx](const LogRecord& rec) {
            return fn(ctx, rec.index, rec.payload.data(), rec.payload.size()) == 0;
        });
        return 0;
    });
}

int rpm_rlog_get_records(const rpm_rlog* log, uint64_t* records) {
    if (log == nullptr) return null_argument(__func__, "log");
    if (records == nullptr) return null_argument(__func__, "records");
    *records = log->l.records();
    return 0;
}

int rpm_rlog_get_used(const rpm_rlog* log, uint64_t* used, uint64_t* capacity) {
    if (log == nullptr) return null_argument(__func__, "log");
    if (used == nullptr) return null_argument(__func__, "used");
    if (capacity == nullptr) return null_argument(__func__, "capacity");
    *used = log->l.used();
    *capacity = log->l.capacity();
    return 0;
}

} // extern "C"
