/* rpm's C API, part 1 of 4: errors, version, logging and the names of
 * rpm's enumerations. Include <rpm/rpm.h>, not this file.
 *
 * Every function returns 0 on success or a negative rpm_errc value (the
 * C++ API's rpm::errc, negated); the detail of the calling thread's last
 * failed call is rpm_errormsg()'s (librpma's rpma_err_2str, PMDK's
 * pmem2_errormsg). No C++ exception crosses this boundary. Man pages:
 * rpm(3) and one per function. */
#ifndef RPM_C_BASE_H
#define RPM_C_BASE_H

#include <rpm/export.hpp>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

RPM_API_BEGIN

/* The errors, as negative numbers: -rpm::errc (include/rpm/error.hpp says
 * what each means). */
enum rpm_errc {
    RPM_E_INVALID_ARGUMENT = -1,
    RPM_E_PATH_NOT_FOUND = -2,
    RPM_E_PERMISSION_DENIED = -3,
    RPM_E_BAD_SIZE = -4,
    RPM_E_NOT_PMEM = -5,
    RPM_E_GRANULARITY_NOT_SUPPORTED = -6,
    RPM_E_PMEM_FAILED = -7,
    RPM_E_DEEP_FLUSH_FAILED = -8,
    RPM_E_IO_ERROR = -9,
    RPM_E_SYSFS_UNREADABLE = -10,
    RPM_E_BAD_OVERRIDE = -11,
    RPM_E_BAD_CONFIG = -12,
    RPM_E_RDMA_UNAVAILABLE = -13,
    RPM_E_UNSUPPORTED = -14,
    RPM_E_QUORUM_LOST = -15,
    RPM_E_MR_BUDGET_EXHAUSTED = -16,
    RPM_E_NO_P2P_MEMORY = -17,
    RPM_E_NVME_STATUS = -18,
    RPM_E_PROTOCOL_ERROR = -19,
    RPM_E_FENCED = -20,
    RPM_E_AUTH_FAILED = -21,
    RPM_E_OUT_OF_RANGE = -22,
    RPM_E_MISALIGNED = -23,
    RPM_E_WOULD_DEADLOCK = -24,
    /* The C layer's own: memory for a handle or a copy could not be had. */
    RPM_E_NOMEM = -100
};

/* The detail of the calling thread's last failed call ("<detail>: <what the
 * code means>"); "" when none failed yet. Inside a completion callback: the
 * detail of the status it was given. Valid until the thread's next failing
 * call. */
const char *rpm_errormsg(void);
/* What an error code means (the C++ category's message); "success" for 0,
 * "unknown rpm error" for a value that is none of these. */
const char *rpm_err_2str(int err);

/* The library's version, "MAJOR.MINOR.PATCH", and as RPM_VERSION's number
 * (include/rpm/version.hpp). */
const char *rpm_version(void);
int rpm_version_number(void);

/* How flush and persist make a region's writes durable. */
enum rpm_method {
    RPM_METHOD_READ_AFTER_WRITE = 0,
    RPM_METHOD_SEND_FLUSH = 1,
    RPM_METHOD_NATIVE_FLUSH = 2
};
/* The persist step a server runs for a grant. */
enum rpm_server_persist {
    RPM_SERVER_PERSIST_NONE = 0,
    RPM_SERVER_PERSIST_SFENCE = 1,
    RPM_SERVER_PERSIST_CACHE_FLUSH_SFENCE = 2,
    RPM_SERVER_PERSIST_CACHE_FLUSH_SFENCE_DEEP_FLUSH = 3,
    RPM_SERVER_PERSIST_MSYNC = 4
};
/* A region's persistence domain. */
enum rpm_domain {
    RPM_DOMAIN_CPU_CACHE = 0,
    RPM_DOMAIN_MEMORY_CONTROLLER = 1,
    RPM_DOMAIN_NONE = 2,
    RPM_DOMAIN_UNKNOWN = 3,
    RPM_DOMAIN_NOT_PMEM = 4
};
/* The names rpm-probe and the C++ to_string give ("read_after_write",
 * "memory_controller", ...); NULL for a value outside the enumeration. */
const char *rpm_method_name(int method);
const char *rpm_server_persist_name(int server_persist);
const char *rpm_domain_name(int domain);

/* Logging: rpm's lines (servers' refusals, connections served, decisions)
 * go to stderr unless a function is set. */
enum rpm_log_level {
    RPM_LOG_ERROR = 0,
    RPM_LOG_WARNING = 1,
    RPM_LOG_INFO = 2,
    RPM_LOG_DEBUG = 3,
    RPM_LOG_TRACE = 4
};
/* Called from any of rpm's threads, one line at a time; must not block
 * long nor call back into rpm. component and message are NUL-terminated
 * and valid during the call only. */
typedef void (*rpm_log_fn)(void *ctx, int level, const char *component, const char *message);
/* fn NULL: back to stderr. */
int rpm_log_set_function(rpm_log_fn fn, void *ctx);
/* Lines above `level` are dropped. */
int rpm_log_set_level(int level);
int rpm_log_get_level(int *level);

/* A completion callback: status 0 or a negative rpm_errc, exactly once per
 * started operation; rpm_errormsg() inside it gives the detail. */
typedef void (*rpm_completion_fn)(void *ctx, int status);

/* One piece of a vectored persist: `length` bytes at `data` stored at
 * `offset`. */
typedef struct rpm_slice {
    uint64_t offset;
    const void *data;
    size_t length;
} rpm_slice;
/* The most slices one persist takes. */
#define RPM_MAX_SLICES 256

RPM_API_END

#ifdef __cplusplus
}
#endif

#endif
