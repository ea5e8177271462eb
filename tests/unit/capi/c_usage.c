/* The C API from a C compiler (C11, -Wall -Wextra -pedantic -Werror): a
 * connection, a region, a persist read back and compared, everything
 * closed. capi_test's CapiCUsage.RoundTripFromC calls it. */
#include <rpm/rpm.h>

#include <stdio.h>
#include <string.h>

int rpm_c_usage_roundtrip(uint16_t port, char *err, size_t errlen);

/* Writes "what: rc (errormsg)" into err and returns rc. */
static int fail(char *err, size_t errlen, const char *what, int rc)
{
    if (err && errlen > 0)
        snprintf(err, errlen, "%s: %d %s (%s)", what, rc, rpm_err_2str(rc), rpm_errormsg());
    return rc;
}

static int persist_and_compare(rpm_region *region, char *err, size_t errlen)
{
    static const char text[] = "written from C";
    char back[sizeof text];
    uint64_t size = 0;
    int method = -1;
    int rc;

    if ((rc = rpm_region_get_size(region, &size)) != 0)
        return fail(err, errlen, "rpm_region_get_size", rc);
    if (size < 4096 + sizeof text)
        return fail(err, errlen, "region too small", RPM_E_BAD_SIZE);
    if ((rc = rpm_region_get_method(region, &method)) != 0 || rpm_method_name(method) == NULL)
        return fail(err, errlen, "rpm_region_get_method", rc ? rc : RPM_E_PROTOCOL_ERROR);
    if ((rc = rpm_region_persist(region, 4096, text, sizeof text)) != 0)
        return fail(err, errlen, "rpm_region_persist", rc);
    memset(back, 0, sizeof back);
    if ((rc = rpm_region_read(region, 4096, back, sizeof back)) != 0)
        return fail(err, errlen, "rpm_region_read", rc);
    if (memcmp(back, text, sizeof text) != 0)
        return fail(err, errlen, "the bytes read back differ", RPM_E_IO_ERROR);
    return 0;
}

int rpm_c_usage_roundtrip(uint16_t port, char *err, size_t errlen)
{
    char uri[64];
    rpm_client_opts *opts = NULL;
    rpm_conn *conn = NULL;
    rpm_region *region = NULL;
    int rc;

    snprintf(uri, sizeof uri, "tcp://127.0.0.1:%u", (unsigned)port);
    if ((rc = rpm_client_opts_new(&opts)) != 0)
        return fail(err, errlen, "rpm_client_opts_new", rc);
    if ((rc = rpm_client_opts_set_id(opts, "app")) != 0 || (rc = rpm_client_opts_set_secret(opts, "s3cret")) != 0) {
        rpm_client_opts_delete(&opts);
        return fail(err, errlen, "rpm_client_opts_set_*", rc);
    }
    rc = rpm_conn_new(uri, opts, &conn);
    rpm_client_opts_delete(&opts);
    if (rc != 0)
        return fail(err, errlen, "rpm_conn_new", rc);
    if ((rc = rpm_region_open(conn, "r0", NULL, &region)) != 0) {
        rpm_conn_delete(&conn);
        return fail(err, errlen, "rpm_region_open", rc);
    }
    rc = persist_and_compare(region, err, errlen);
    rpm_region_delete(&region);
    if (rpm_conn_close(conn) != 0 && rc == 0)
        rc = fail(err, errlen, "rpm_conn_close", RPM_E_IO_ERROR);
    rpm_conn_delete(&conn);
    if (rc == 0 && (conn != NULL || region != NULL || opts != NULL))
        rc = fail(err, errlen, "a delete left its pointer set", RPM_E_INVALID_ARGUMENT);
    return rc;
}
