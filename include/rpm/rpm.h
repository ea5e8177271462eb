/* rpm's C API (C11, usable from C++): librpmpm for engines written in C,
 * and for Rust, Go or Python through their C FFI.
 *
 *   #include <rpm/rpm.h>      cc app.c $(pkg-config --cflags --libs rpmpm-c)
 *
 * The same library as the C++ API, behind opaque handles: connections and
 * regions (rpm/c/client.h), the Replicator and its replicated log
 * (rpm/c/replicator.h), a server and the probe (rpm/c/server.h); errors,
 * version and logging (rpm/c/base.h). Conventions:
 *   - every function returns 0 or a negative rpm_errc, and checks its
 *     pointers and sizes (RPM_E_INVALID_ARGUMENT); rpm_errormsg() gives the
 *     detail of the thread's last failure;
 *   - X_new / X_open / X_register make a handle, X_delete / X_close /
 *     X_deregister / X_stop free it and set the caller's pointer to NULL;
 *   - results come back through the last pointer arguments.
 * One man page per function (section 3) gives its RETURN VALUE and ERRORS;
 * rpm(3) is the overview. Exported under RPM_1, as the C++ names. */
#ifndef RPM_RPM_H
#define RPM_RPM_H

#include <rpm/c/base.h>
#include <rpm/c/client.h>
#include <rpm/c/replicator.h>
#include <rpm/c/server.h>

#endif
