/* rpm-c-persist: a C client that persists a record into a region of an
 * rpm-server and reads it back.
 *
 *   rpm-c-persist URI ID SECRET REGION [TEXT]
 *
 * URI: tcp://HOST:PORT (or rdma://) of an rpm-server serving REGION to
 * client ID with SECRET, e.g.
 *   rpm-server --listen tcp://127.0.0.1:7001 --region data=/dev/shm/data.pool:1M --secrets-file secrets
 * Prints how the server makes the region's writes durable and why, then
 * "read back 'TEXT'". Exit status 0, 1 on a failed call (with
 * rpm_errormsg()'s detail), 2 for a bad command line. */
#include <rpm/rpm.h>

#include <stdio.h>
#include <string.h>

/* Prints the failed call and the library's detail; returns 1. */
static int failed(const char *what, int rc) {
    fprintf(stderr, "rpm-c-persist: %s: %s (%d: %s)\n", what, rpm_errormsg(), rc, rpm_err_2str(rc));
    return 1;
}

/* Persists `text` at offset 0 of the region and reads it back. */
static int persist_and_read(rpm_region *region, const char *text) {
    char back[256] = {0};
    size_t len = strlen(text);
    int rc;
    if (len >= sizeof back) len = sizeof back - 1;
    /* Returns once the bytes are durable in the server's region. */
    if ((rc = rpm_region_persist(region, 0, text, len)) != 0) return failed("persist", rc);
    if ((rc = rpm_region_read(region, 0, back, len)) != 0) return failed("read", rc);
    printf("read back '%s'\n", back);
    return memcmp(back, text, len) == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
    rpm_client_opts *opts = NULL;
    rpm_conn *conn = NULL;
    rpm_region *region = NULL;
    const char *reason = NULL;
    int method = 0, rc, status = 1;
    if (argc < 5 || argc > 6) {
        fprintf(stderr, "usage: rpm-c-persist URI ID SECRET REGION [TEXT]\n");
        return 2;
    }
    if ((rc = rpm_client_opts_new(&opts)) != 0 || (rc = rpm_client_opts_set_id(opts, argv[2])) != 0 ||
        (rc = rpm_client_opts_set_secret(opts, argv[3])) != 0 || (rc = rpm_client_opts_set_timeout(opts, 5000)) != 0)
        return failed("options", rc);
    if ((rc = rpm_conn_new(argv[1], opts, &conn)) != 0) {
        status = failed("connect", rc);
    } else if ((rc = rpm_region_open(conn, argv[4], NULL, &region)) != 0) {
        status = failed("open region", rc);
    } else {
        rpm_region_get_method(region, &method);
        rpm_region_get_reason(region, &reason);
        printf("region %s: %s (%s)\n", argv[4], rpm_method_name(method), reason);
        status = persist_and_read(region, argc == 6 ? argv[5] : "hello from C");
    }
    /* Each delete takes the handle's address and sets it to NULL; a NULL
     * handle is fine, so one clean-up path serves every outcome. */
    rpm_region_delete(&region);
    rpm_conn_delete(&conn);
    rpm_client_opts_delete(&opts);
    return status;
}
