/* rpm-c-replicator: a primary in C that keeps its own copy of a region in
 * a file and replicates every write to rpm-server replicas; each commit
 * returns once a majority of the members (the local copy and the replicas)
 * hold the writes durably.
 *
 *   rpm-c-replicator ID SECRET LOCAL_FILE REGION URI [URI...]
 *
 * URI: tcp://HOST:PORT of an rpm-server serving REGION, of at least 1 MiB,
 * to client ID. LOCAL_FILE is created at 1 MiB if missing;
 * run again with the same file and replicas, it recovers and goes on with
 * a new generation. Prints each replica's events, the records appended to
 * a replicated log and each replica's state. Exit status 0 when every
 * commit held, 1 otherwise, 2 for a bad command line. */
#include <rpm/rpm.h>

#include <stdio.h>
#include <string.h>

static int failed(const char *what, int rc) {
    fprintf(stderr, "rpm-c-replicator: %s: %s (%d)\n", what, rpm_errormsg(), rc);
    return 1;
}

/* Told of each replica's changes: at open on this thread, later on the
 * replicator's own. */
static void on_event(void *ctx, const rpm_replica_event *e) {
    static const char *const kinds[] = {"joined", "left", "catching up", "rejoined", "degraded", "healthy"};
    (void)ctx;
    printf("event: replica %zu (%s) %s%s%s\n", e->replica, e->uri, kinds[e->kind], e->error ? ": " : "",
           e->error ? e->detail : "");
}

static int print_record(void *ctx, uint64_t index, const void *payload, size_t len) {
    (void)ctx;
    printf("record %llu: '%.*s'\n", (unsigned long long)index, (int)len, (const char *)payload);
    return 0;
}

/* Appends a record to a log in the first 64 KiB of the data area, durably. */
static int append_records(rpm_replicator *r) {
    rpm_rlog *log = NULL;
    rpm_rlog_append_info info;
    uint64_t gen = 0;
    char text[64];
    int rc = rpm_rlog_open(r, 0, 64 * 1024, &log);
    if (rc != 0) return failed("open the log", rc);
    rpm_replicator_get_generation(r, &gen);
    snprintf(text, sizeof text, "written in generation %llu", (unsigned long long)gen);
    rc = rpm_rlog_append_durable(log, text, strlen(text), &info);
    if (rc == 0) {
        printf("appended record %llu at LSN %llu, durable on a majority\n", (unsigned long long)info.index,
               (unsigned long long)info.lsn);
        rpm_rlog_foreach(log, print_record, NULL);
    }
    rpm_rlog_close(&log);
    return rc != 0 ? failed("append", rc) : 0;
}

static void print_replicas(const rpm_replicator *r) {
    static const char *const states[] = {"syncing", "live", "failed"};
    size_t n = 0, i;
    rpm_replicator_get_replica_count(r, &n);
    for (i = 0; i < n; ++i) {
        rpm_replica_status s;
        if (rpm_replicator_get_replica_status(r, i, &s) == 0)
            printf("replica %zu: %s, frontier %llu\n", i, states[s.state], (unsigned long long)s.frontier);
    }
}

/* The options: the local copy, the replicas, majority durability. */
static int make_options(int argc, char **argv, rpm_replicator_opts **out) {
    rpm_client_opts *client = NULL;
    int i, rc = rpm_client_opts_new(&client);
    if (rc == 0) rc = rpm_client_opts_set_id(client, argv[1]);
    if (rc == 0) rc = rpm_client_opts_set_secret(client, argv[2]);
    if (rc == 0) rc = rpm_replicator_opts_new(out);
    if (rc == 0) rc = rpm_replicator_opts_set_local(*out, argv[3], 1u << 20, 1);
    for (i = 5; rc == 0 && i < argc; ++i) rc = rpm_replicator_opts_add_replica(*out, argv[i], argv[4], client);
    if (rc == 0) rc = rpm_replicator_opts_set_durability(*out, "majority");
    if (rc == 0) rc = rpm_replicator_opts_set_event_fn(*out, on_event, NULL);
    rpm_client_opts_delete(&client); /* add_replica copied it */
    return rc;
}

int main(int argc, char **argv) {
    rpm_replicator_opts *opts = NULL;
    rpm_replicator *r = NULL;
    uint64_t gen = 0;
    unsigned members = 0, needed = 0;
    int rc, status = 1;
    if (argc < 6) {
        fprintf(stderr, "usage: rpm-c-replicator ID SECRET LOCAL_FILE REGION URI [URI...]\n");
        return 2;
    }
    if ((rc = make_options(argc, argv, &opts)) != 0) {
        status = failed("options", rc);
    } else if ((rc = rpm_replicator_open(opts, &r)) != 0) {
        status = failed("open", rc);
    } else {
        rpm_replicator_get_generation(r, &gen);
        rpm_replicator_get_members(r, &members, &needed);
        printf("open: generation %llu, %u members, %u needed\n", (unsigned long long)gen, members, needed);
        status = append_records(r);
        print_replicas(r);
    }
    rpm_replicator_close(&r);
    rpm_replicator_opts_delete(&opts);
    return status;
}
