// rpm/c/base.h: errors, version, names of enumerations, logging.
#include "capi/handles.hpp"
#include "capi/status.hpp"

#include <rpm/flush.hpp>
#include <rpm/log.hpp>
#include <rpm/persistence.hpp>
#include <rpm/version.hpp>

#include <mutex>
#include <string>

using namespace rpm;
using namespace rpm::capi;

namespace rpm::capi {

// Called inside a guard(): it may throw (std::bad_alloc).
int to_slices(const char* function, const rpm_slice* slices, std::size_t count, std::vector<WriteSlice>& out) {
    if (slices == nullptr) return null_argument(function, "slices");
    if (count == 0 || count > RPM_MAX_SLICES)
        return fail(errc::invalid_argument,
                    (std::string(function) + ": " + std::to_string(count) + " slices (1 to 256)").c_str());
    out.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
        if (slices[i].data == nullptr && slices[i].length != 0)
            return fail(errc::invalid_argument,
                        (std::string(function) + ": slice " + std::to_string(i) + "'s data is NULL").c_str());
        out.push_back({slices[i].offset, bytes(slices[i].data, slices[i].length)});
    }
    return 0;
}

} // namespace rpm::capi

namespace {

// Values of the C enumerations are the C++ ones' (checked here, once).
static_assert(RPM_METHOD_NATIVE_FLUSH == static_cast<int>(flush::Method::native_flush));
static_assert(RPM_SERVER_PERSIST_MSYNC == static_cast<int>(flush::ServerPersist::msync));
static_assert(RPM_DOMAIN_NOT_PMEM == static_cast<int>(PersistenceDomain::not_pmem));
static_assert(RPM_LOG_TRACE == static_cast<int>(LogLevel::trace));
static_assert(RPM_E_WOULD_DEADLOCK == -static_cast<int>(errc::would_deadlock));
static_assert(RPM_E_FENCED == -static_cast<int>(errc::fenced));

// A name as a static NUL-terminated string: every to_string of these
// enumerations returns a view of a string literal.
const char* c_name(std::string_view v) noexcept { return v.data(); }

} // namespace

extern "C" {

const char* rpm_errormsg(void) { return last_message(); }

const char* rpm_err_2str(int err) {
    if (err == 0) return "success";
    if (err == RPM_E_NOMEM) return "out of memory";
    // The category's messages are static strings behind std::string; keep
    // one copy per code, made once.
    static const std::vector<std::string> messages = [] {
        std::vector<std::string> m;
        for (int i = 0; i <= static_cast<int>(errc::would_deadlock); ++i) m.push_back(rpm_category().message(i));
        return m;
    }();
    if (err < 0 && -err < static_cast<int>(messages.size())) return messages[-err].c_str();
    return "unknown rpm error";
}

const char* rpm_version(void) { return rpm::version(); }
int rpm_version_number(void) { return rpm::version_number(); }

const char* rpm_method_name(int m) {
    if (m < RPM_METHOD_READ_AFTER_WRITE || m > RPM_METHOD_NATIVE_FLUSH) return nullptr;
    return c_name(flush::to_string(static_cast<flush::Method>(m)));
}
const char* rpm_server_persist_name(int p) {
    if (p < RPM_SERVER_PERSIST_NONE || p > RPM_SERVER_PERSIST_MSYNC) return nullptr;
    return c_name(flush::to_string(static_cast<flush::ServerPersist>(p)));
}
const char* rpm_domain_name(int d) {
    if (d < RPM_DOMAIN_CPU_CACHE || d > RPM_DOMAIN_NOT_PMEM) return nullptr;
    return c_name(to_string(static_cast<PersistenceDomain>(d)));
}

int rpm_log_set_function(rpm_log_fn fn, void* ctx) {
    return guard(__func__, [&] {
        if (fn == nullptr) {
            set_log_handler({});
            return 0;
        }
        // The views rpm hands a handler are not NUL-terminated: copy each
        // into strings for C.
        set_log_handler([fn, ctx](LogLevel level, std::string_view component, std::string_view message) {
            const std::string c(component), m(message);
            fn(ctx, static_cast<int>(level), c.c_str(), m.c_str());
        });
        return 0;
    });
}

int rpm_log_set_level(int level) {
    return guard(__func__, [&] {
        if (level < RPM_LOG_ERROR || level > RPM_LOG_TRACE)
            return fail(errc::invalid_argument, ("rpm_log_set_level: level " + std::to_string(level) +
                                                 " is not RPM_LOG_ERROR to RPM_LOG_TRACE").c_str());
        set_log_level(static_cast<LogLevel>(level));
        return 0;
    });
}

int rpm_log_get_level(int* level) {
    if (level == nullptr) return null_argument(__func__, "level");
    *level = static_cast<int>(log_level());
    return 0;
}

} // extern "C"
