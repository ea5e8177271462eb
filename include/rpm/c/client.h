/* rpm's C API, part 2 of 4: connections to rpm-server and their regions
 * (the C++ rpm::Client, rpm::Connection, rpm::RemoteRegion; their
 * semantics, include/rpm/client.hpp). Include <rpm/rpm.h>. */
#ifndef RPM_C_CLIENT_H
#define RPM_C_CLIENT_H

#include <rpm/c/base.h>

#ifdef __cplusplus
extern "C" {
#endif

RPM_API_BEGIN

/* Options of a connection (rpm::ClientOptions); a fresh one holds the
 * defaults: id "default", no secret, no TLS, a 10 s timeout, adaptive
 * completions. */
typedef struct rpm_client_opts rpm_client_opts;
int rpm_client_opts_new(rpm_client_opts **opts_out);
/* Frees *opts and sets it to NULL; *opts NULL does nothing. */
int rpm_client_opts_delete(rpm_client_opts **opts);
int rpm_client_opts_set_id(rpm_client_opts *opts, const char *client_id);
int rpm_client_opts_set_secret(rpm_client_opts *opts, const char *secret);
/* tcp:// over TLS; ca_file: the PEM CA to verify the server with, NULL for
 * no verification. */
int rpm_client_opts_set_tls(rpm_client_opts *opts, int enable, const char *ca_file);
/* Bounds the connect, the handshake and every synchronous call (ms > 0;
 * over ten years counts as ten years: INT64_MAX waits "forever"). */
int rpm_client_opts_set_timeout(rpm_client_opts *opts, int64_t timeout_ms);
enum rpm_completion_mode {
    RPM_COMPLETION_ADAPTIVE = 0,
    RPM_COMPLETION_BUSY = 1,
    RPM_COMPLETION_EVENT = 2
};
/* How an rdma:// connection waits for completions (tcp:// ignores it). */
int rpm_client_opts_set_completion(rpm_client_opts *opts, int mode);

/* One authenticated connection. */
typedef struct rpm_conn rpm_conn;
/* uri: tcp://host:port or rdma://host:port; opts NULL: the defaults. */
int rpm_conn_new(const char *uri, const rpm_client_opts *opts, rpm_conn **conn_out);
/* Closes the connection: every pending operation fails (its callback has
 * run when this returns), and so does every later one, also on its
 * regions; the handle stays valid until rpm_conn_delete. */
int rpm_conn_close(rpm_conn *conn);
/* Closes (as rpm_conn_close) and frees *conn, then sets it to NULL; *conn
 * NULL does nothing. Its regions and registered memory stay valid handles
 * (to be deleted on their own), whose operations fail. */
int rpm_conn_delete(rpm_conn **conn);
enum rpm_scheme { RPM_SCHEME_TCP = 0, RPM_SCHEME_RDMA = 1 };
int rpm_conn_get_scheme(const rpm_conn *conn, int *scheme);
/* The server's platform profile (JSON), valid while conn lives. */
int rpm_conn_get_server_profile(const rpm_conn *conn, const char **json);

/* Application messages (rpm::Connection::send and recv). */
int rpm_conn_send(rpm_conn *conn, const void *buf, size_t len);
int rpm_conn_send_async(rpm_conn *conn, const void *buf, size_t len, rpm_completion_fn done, void *ctx);
/* Receives one message into buf (capacity cap); *len_out its size. */
int rpm_conn_recv(rpm_conn *conn, void *buf, size_t cap, size_t *len_out);
/* status: the message's size (>= 0) or a negative rpm_errc. */
typedef void (*rpm_recv_fn)(void *ctx, int64_t status);
int rpm_conn_recv_async(rpm_conn *conn, void *buf, size_t cap, rpm_recv_fn done, void *ctx);

/* Memory registered for zero-copy transfers (rpm::LocalMemory): writes,
 * reads and persists whose buffers lie inside it skip rpm's copies
 * (rdma://; tcp:// registers nothing and works the same). */
typedef struct rpm_mem rpm_mem;
int rpm_mem_register(rpm_conn *conn, void *ptr, size_t len, rpm_mem **mem_out);
/* *registered: 1 when the transport registered it (rdma://), else 0. */
int rpm_mem_get_registered(const rpm_mem *mem, int *registered);
/* Ends this handle's registration (once no operation uses it) and sets
 * *mem to NULL; *mem NULL does nothing. */
int rpm_mem_deregister(rpm_mem **mem);

/* Options of a region's open (rpm::RegionOptions): none by default. */
typedef struct rpm_region_opts rpm_region_opts;
int rpm_region_opts_new(rpm_region_opts **opts_out);
int rpm_region_opts_delete(rpm_region_opts **opts);
/* This opener's fencing term (0 = none). */
int rpm_region_opts_set_fencing_term(rpm_region_opts *opts, uint64_t term);
/* Use `method` (enum rpm_method) instead of the server's decision; unsafe
 * nonzero allows one that cannot guarantee durability. */
int rpm_region_opts_force_method(rpm_region_opts *opts, int method, int unsafe);

/* A region the server granted. */
typedef struct rpm_region rpm_region;
/* opts NULL: the defaults. */
int rpm_region_open(rpm_conn *conn, const char *name, const rpm_region_opts *opts, rpm_region **region_out);
/* Frees *region and sets it to NULL (its pending operations go on until
 * the connection ends them); *region NULL does nothing. */
int rpm_region_delete(rpm_region **region);
int rpm_region_get_size(const rpm_region *region, uint64_t *size);
/* enum rpm_method, enum rpm_server_persist, enum rpm_domain. */
int rpm_region_get_method(const rpm_region *region, int *method);
int rpm_region_get_server_persist(const rpm_region *region, int *server_persist);
int rpm_region_get_domain(const rpm_region *region, int *domain);
/* Why this method, in the server's words; valid while region lives. */
int rpm_region_get_reason(const rpm_region *region, const char **reason);

/* Synchronous: each returns once done, or fails. write and atomic_write
 * are NOT durable until a flush or persist covering them returns. */
int rpm_region_write(rpm_region *region, uint64_t offset, const void *buf, size_t len);
int rpm_region_read(rpm_region *region, uint64_t offset, void *buf, size_t len);
int rpm_region_atomic_write(rpm_region *region, uint64_t offset, uint64_t value);
int rpm_region_flush(rpm_region *region, uint64_t offset, uint64_t len);
int rpm_region_persist(rpm_region *region, uint64_t offset, const void *buf, size_t len);
int rpm_region_persistv(rpm_region *region, const rpm_slice *slices, size_t count);

/* Asynchronous: 0 once started, and then done(ctx, status) runs exactly
 * once (on the connection's I/O thread, or before this returns when the
 * range is refused); a negative value (a NULL pointer or callback) starts
 * nothing and never calls done. Buffers (and the slices) stay valid until
 * done runs. */
int rpm_region_write_async(rpm_region *region, uint64_t offset, const void *buf, size_t len,
                           rpm_completion_fn done, void *ctx);
int rpm_region_read_async(rpm_region *region, uint64_t offset, void *buf, size_t len,
                          rpm_completion_fn done, void *ctx);
int rpm_region_atomic_write_async(rpm_region *region, uint64_t offset, uint64_t value,
                                  rpm_completion_fn done, void *ctx);
int rpm_region_flush_async(rpm_region *region, uint64_t offset, uint64_t len, rpm_completion_fn done,
                           void *ctx);
int rpm_region_persist_async(rpm_region *region, uint64_t offset, const void *buf, size_t len,
                             rpm_completion_fn done, void *ctx);
int rpm_region_persistv_async(rpm_region *region, const rpm_slice *slices, size_t count,
                              rpm_completion_fn done, void *ctx);

RPM_API_END

#ifdef __cplusplus
}
#endif

#endif
