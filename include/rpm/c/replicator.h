/* rpm's C API, part 3 of 4: the Replicator (one primary, N replicas,
 * commits under a durability policy) and the replicated log over it (the
 * C++ rpm::Replicator and rpm::ReplicatedLog; their semantics,
 * include/rpm/replication.hpp and replicated_log.hpp). Include <rpm/rpm.h>. */
#ifndef RPM_C_REPLICATOR_H
#define RPM_C_REPLICATOR_H

#include <rpm/c/base.h>
#include <rpm/c/client.h>

#ifdef __cplusplus
extern "C" {
#endif

RPM_API_BEGIN

enum rpm_replica_state { RPM_REPLICA_SYNCING = 0, RPM_REPLICA_LIVE = 1, RPM_REPLICA_FAILED = 2 };
enum rpm_replica_event_kind {
    RPM_EVENT_JOINED = 0,
    RPM_EVENT_LEFT = 1,
    RPM_EVENT_CATCHING_UP = 2,
    RPM_EVENT_REJOINED = 3,
    RPM_EVENT_DEGRADED = 4,
    RPM_EVENT_HEALTHY = 5
};
/* A member's change. Pointers valid during the callback only. */
typedef struct rpm_replica_event {
    int kind;            /* enum rpm_replica_event_kind */
    size_t replica;      /* index, in the order the replicas were added */
    const char *uri;
    int error;           /* left: why (a negative rpm_errc), else 0 */
    const char *detail;  /* the error's or the degradation's text, or "" */
    uint64_t frontier;   /* the replica's persistent frontier */
} rpm_replica_event;
/* At open, on the opening thread; later on the replicator's monitor
 * thread. It must not call the replicator's commit, persist or wait. */
typedef void (*rpm_replica_event_fn)(void *ctx, const rpm_replica_event *event);

/* Options of a replicator (rpm::ReplicatorOptions). */
typedef struct rpm_replicator_opts rpm_replicator_opts;
int rpm_replicator_opts_new(rpm_replicator_opts **opts_out);
int rpm_replicator_opts_delete(rpm_replicator_opts **opts);
/* The primary's own region; size and create: make a file of that size. */
int rpm_replicator_opts_set_local(rpm_replicator_opts *opts, const char *path, size_t size, int create);
/* One replica: its URI, region name, and connection options (NULL: the
 * defaults; copied). */
int rpm_replicator_opts_add_replica(rpm_replicator_opts *opts, const char *uri, const char *region,
                                    const rpm_client_opts *client);
/* "all", "majority" or "K", each optionally with "+local"/"-local". */
int rpm_replicator_opts_set_durability(rpm_replicator_opts *opts, const char *policy);
int rpm_replicator_opts_set_fencing_term(rpm_replicator_opts *opts, uint64_t term);
/* Milliseconds, each > 0. */
int rpm_replicator_opts_set_timing(rpm_replicator_opts *opts, int64_t heartbeat_ms, int64_t failure_ms,
                                   int64_t reconnect_ms);
int rpm_replicator_opts_set_sysfs_root(rpm_replicator_opts *opts, const char *root);
int rpm_replicator_opts_set_event_fn(rpm_replicator_opts *opts, rpm_replica_event_fn fn, void *ctx);
int rpm_replicator_opts_set_adopt_foreign(rpm_replicator_opts *opts, int adopt);

typedef struct rpm_replicator rpm_replicator;
int rpm_replicator_open(const rpm_replicator_opts *opts, rpm_replicator **replicator_out);
/* Frees *replicator and sets it to NULL; commits nothing. The replicator
 * stops (connections closed) once no rpm_rlog of it remains either. */
int rpm_replicator_close(rpm_replicator **replicator);
/* Offsets are relative to the data area. *lsn_out may be NULL. */
int rpm_replicator_write(rpm_replicator *r, uint64_t offset, const void *buf, size_t len, uint64_t *lsn_out);
int rpm_replicator_atomic_write(rpm_replicator *r, uint64_t offset, uint64_t value, uint64_t *lsn_out);
int rpm_replicator_commit(rpm_replicator *r, uint64_t *lsn_out);
int rpm_replicator_persist(rpm_replicator *r, uint64_t offset, const void *buf, size_t len, uint64_t *lsn_out);
int rpm_replicator_persistv(rpm_replicator *r, const rpm_slice *slices, size_t count, uint64_t *lsn_out);
enum rpm_frontier { RPM_FRONTIER_LOCAL = 0, RPM_FRONTIER_QUORUM = 1, RPM_FRONTIER_ALL = 2 };
int rpm_replicator_wait(rpm_replicator *r, int frontier, uint64_t lsn, int64_t timeout_ms);
int rpm_replicator_get_frontier(const rpm_replicator *r, int frontier, uint64_t *lsn);
int rpm_replicator_get_last_lsn(const rpm_replicator *r, uint64_t *lsn);
/* The local copy of the data area, read-only. */
int rpm_replicator_get_data(const rpm_replicator *r, const void **data, size_t *size);
int rpm_replicator_get_members(const rpm_replicator *r, unsigned *members, unsigned *needed);
int rpm_replicator_get_generation(const rpm_replicator *r, uint64_t *generation);
int rpm_replicator_get_replica_count(const rpm_replicator *r, size_t *count);
/* One replica's status. */
typedef struct rpm_replica_status {
    int state;             /* enum rpm_replica_state */
    int method;            /* enum rpm_method, or -1 while it has no grant */
    int degraded;          /* 1 when live but slow */
    uint64_t frontier;     /* persistent up to this LSN */
    uint64_t lag;          /* LSNs issued it does not hold yet */
    uint64_t lag_bytes;
    uint64_t failures;
    uint64_t resyncs;
    uint64_t bytes_resynced;
} rpm_replica_status;
int rpm_replicator_get_replica_status(const rpm_replicator *r, size_t index, rpm_replica_status *status);

/* A replicated log in [offset, offset + length) of a replicator's data
 * area. It shares the replicator's state: either handle may be closed
 * first, and the replicator (its connections, its monitor) runs until both
 * are. */
typedef struct rpm_rlog rpm_rlog;
int rpm_rlog_open(rpm_replicator *r, uint64_t offset, uint64_t length, rpm_rlog **log_out);
int rpm_rlog_close(rpm_rlog **log);
/* Where an append went; lsn is durable once frontier quorum reaches it. */
typedef struct rpm_rlog_append_info {
    uint64_t index;
    uint64_t position;
    uint64_t lsn;
} rpm_rlog_append_info;
/* info may be NULL. */
int rpm_rlog_append(rpm_rlog *log, const void *payload, size_t len, rpm_rlog_append_info *info);
int rpm_rlog_append_durable(rpm_rlog *log, const void *payload, size_t len, rpm_rlog_append_info *info);
int rpm_rlog_reset(rpm_rlog *log, uint64_t *lsn_out);
/* Calls fn for each record in order until it returns nonzero. */
typedef int (*rpm_rlog_record_fn)(void *ctx, uint64_t index, const void *payload, size_t len);
int rpm_rlog_foreach(const rpm_rlog *log, rpm_rlog_record_fn fn, void *ctx);
int rpm_rlog_get_records(const rpm_rlog *log, uint64_t *records);
int rpm_rlog_get_used(const rpm_rlog *log, uint64_t *used, uint64_t *capacity);

RPM_API_END

#ifdef __cplusplus
}
#endif

#endif
