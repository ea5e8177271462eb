/* rpm's C API, part 4 of 4: a server in the calling process (the C++
 * rpm::Server; include/rpm/server.hpp) and the probe's flush decisions for
 * this machine (rpm-probe's). Include <rpm/rpm.h>. */
#ifndef RPM_C_SERVER_H
#define RPM_C_SERVER_H

#include <rpm/c/base.h>

#ifdef __cplusplus
extern "C" {
#endif

RPM_API_BEGIN

/* Options of a server (rpm::ServerOptions). */
typedef struct rpm_server_opts rpm_server_opts;
int rpm_server_opts_new(rpm_server_opts **opts_out);
int rpm_server_opts_delete(rpm_server_opts **opts);
/* tcp://host:port or rdma://host:port; port 0 = any (rpm_server_get_port). */
int rpm_server_opts_add_listen(rpm_server_opts *opts, const char *uri);
int rpm_server_opts_add_client(rpm_server_opts *opts, const char *client_id, const char *secret);
/* A region: a devdax device, DAX file, or regular file; size 0 = the whole
 * file; create: make a file of that size. Every authenticated client may
 * open it. */
int rpm_server_opts_add_region(rpm_server_opts *opts, const char *name, const char *path, size_t size,
                               int create);
/* Where fencing terms are kept durably (NULL: beside each region). */
int rpm_server_opts_set_fence_dir(rpm_server_opts *opts, const char *dir);
int rpm_server_opts_set_sysfs_root(rpm_server_opts *opts, const char *root);
/* TLS for tcp:// listeners: PEM certificate chain and key. */
int rpm_server_opts_set_tls(rpm_server_opts *opts, const char *certificate, const char *private_key);
/* Each client message (rpm_conn_send), on a server thread, before the
 * client is answered; payload valid during the call only. */
typedef void (*rpm_message_fn)(void *ctx, uint64_t session, const void *payload, size_t len);
int rpm_server_opts_set_message_fn(rpm_server_opts *opts, rpm_message_fn fn, void *ctx);

typedef struct rpm_server rpm_server;
int rpm_server_start(const rpm_server_opts *opts, rpm_server **server_out);
/* Stops it (connections closed) and frees *server; sets it to NULL. */
int rpm_server_stop(rpm_server **server);
/* The port it listens on for a scheme (enum rpm_scheme). */
int rpm_server_get_port(const rpm_server *server, int scheme, uint16_t *port);
/* A message to a session (a client's rpm_conn_recv). */
int rpm_server_send(rpm_server *server, uint64_t session, const void *payload, size_t len);

/* The flush decisions of this machine's PM regions, as rpm-probe takes
 * them: one per region and RDMA device (device NULL where there is none). */
typedef struct rpm_probe rpm_probe;
/* sysfs_root NULL: "/"; overrides from RPM_* and $RPM_CONFIG, as rpm-probe. */
int rpm_probe_new(const char *sysfs_root, rpm_probe **probe_out);
int rpm_probe_delete(rpm_probe **probe);
int rpm_probe_get_count(const rpm_probe *probe, size_t *count);
/* Strings valid while the probe lives. */
typedef struct rpm_decision {
    const char *region;
    const char *device;  /* NULL: no RDMA device */
    int method;          /* enum rpm_method */
    int server_persist;  /* enum rpm_server_persist */
    int domain;          /* enum rpm_domain (effective) */
    const char *reason;
} rpm_decision;
int rpm_probe_get_decision(const rpm_probe *probe, size_t index, rpm_decision *decision);

RPM_API_END

#ifdef __cplusplus
}
#endif

#endif
