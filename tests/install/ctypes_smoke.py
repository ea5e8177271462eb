#!/usr/bin/env python3
"""The C API from another language: Python's ctypes loads librpmpm.so by
path, starts an in-process server on a tmpfs file region, connects, persists
bytes and reads them back, checks that an out-of-range persist fails with
RPM_E_OUT_OF_RANGE and a message, and that rpm_version() is the source's.

usage: ctypes_smoke.py LIBRPMPM.so [VERSION | SOURCE_DIR]
  VERSION     "MAJOR.MINOR.PATCH" to expect from rpm_version()
  SOURCE_DIR  the checkout, whose include/rpm/version.hpp gives it
              (default: this script's ../..)
Exit status 0 on success; 1 with a message on the first failure."""
import ctypes
import os
import re
import shutil
import sys
import tempfile

RPM_E_OUT_OF_RANGE = -22
RPM_SCHEME_TCP = 0
REGION_SIZE = 1 << 20


class Failure(Exception):
    pass


def expected_version(arg):
    if arg and re.fullmatch(r"\d+\.\d+\.\d+", arg):
        return arg
    src = arg or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    text = open(os.path.join(src, "include", "rpm", "version.hpp")).read()
    parts = [re.search(r"^#define RPM_VERSION_%s (\d+)$" % p, text, re.M) for p in ("MAJOR", "MINOR", "PATCH")]
    if not all(parts):
        raise Failure("no RPM_VERSION_MAJOR/MINOR/PATCH in %s/include/rpm/version.hpp" % src)
    return ".".join(m.group(1) for m in parts)


def declare(lib):
    """argtypes and restypes of every function used below."""
    P, c_int, c_char_p = ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p
    PP = ctypes.POINTER(ctypes.c_void_p)
    sigs = {
        "rpm_version": ([], c_char_p),
        "rpm_errormsg": ([], c_char_p),
        "rpm_err_2str": ([c_int], c_char_p),
        "rpm_server_opts_new": ([PP], c_int),
        "rpm_server_opts_delete": ([PP], c_int),
        "rpm_server_opts_add_listen": ([P, c_char_p], c_int),
        "rpm_server_opts_add_client": ([P, c_char_p, c_char_p], c_int),
        "rpm_server_opts_add_region": ([P, c_char_p, c_char_p, ctypes.c_size_t, c_int], c_int),
        "rpm_server_start": ([P, PP], c_int),
        "rpm_server_stop": ([PP], c_int),
        "rpm_server_get_port": ([P, c_int, ctypes.POINTER(ctypes.c_uint16)], c_int),
        "rpm_client_opts_new": ([PP], c_int),
        "rpm_client_opts_delete": ([PP], c_int),
        "rpm_client_opts_set_id": ([P, c_char_p], c_int),
        "rpm_client_opts_set_secret": ([P, c_char_p], c_int),
        "rpm_conn_new": ([c_char_p, P, PP], c_int),
        "rpm_conn_delete": ([PP], c_int),
        "rpm_region_open": ([P, c_char_p, P, PP], c_int),
        "rpm_region_delete": ([PP], c_int),
        "rpm_region_get_size": ([P, ctypes.POINTER(ctypes.c_uint64)], c_int),
        "rpm_region_persist": ([P, ctypes.c_uint64, P, ctypes.c_size_t], c_int),
        "rpm_region_read": ([P, ctypes.c_uint64, P, ctypes.c_size_t], c_int),
    }
    for name, (args, res) in sigs.items():
        fn = getattr(lib, name)
        fn.argtypes = args
        fn.restype = res


def run(lib, want_version, workdir):
    def ok(rc, what):
        if rc != 0:
            raise Failure("%s: %d (%s)" % (what, rc, lib.rpm_errormsg().decode()))

    got = lib.rpm_version().decode()
    if got != want_version:
        raise Failure("rpm_version() is %r, the source says %r" % (got, want_version))
    handles = []  # (delete function, pointer), freed in reverse order
    try:
        sopts = ctypes.c_void_p()
        ok(lib.rpm_server_opts_new(ctypes.byref(sopts)), "rpm_server_opts_new")
        handles.append((lib.rpm_server_opts_delete, sopts))
        ok(lib.rpm_server_opts_add_listen(sopts, b"tcp://127.0.0.1:0"), "rpm_server_opts_add_listen")
        ok(lib.rpm_server_opts_add_client(sopts, b"py", b"sesame"), "rpm_server_opts_add_client")
        path = os.path.join(workdir, "r0").encode()
        ok(lib.rpm_server_opts_add_region(sopts, b"r0", path, REGION_SIZE, 1), "rpm_server_opts_add_region")
        server = ctypes.c_void_p()
        ok(lib.rpm_server_start(sopts, ctypes.byref(server)), "rpm_server_start")
        handles.append((lib.rpm_server_stop, server))
        port = ctypes.c_uint16()
        ok(lib.rpm_server_get_port(server, RPM_SCHEME_TCP, ctypes.byref(port)), "rpm_server_get_port")
        if port.value == 0:
            raise Failure("rpm_server_get_port gave port 0")

        copts = ctypes.c_void_p()
        ok(lib.rpm_client_opts_new(ctypes.byref(copts)), "rpm_client_opts_new")
        handles.append((lib.rpm_client_opts_delete, copts))
        ok(lib.rpm_client_opts_set_id(copts, b"py"), "rpm_client_opts_set_id")
        ok(lib.rpm_client_opts_set_secret(copts, b"sesame"), "rpm_client_opts_set_secret")
        conn = ctypes.c_void_p()
        uri = ("tcp://127.0.0.1:%d" % port.value).encode()
        ok(lib.rpm_conn_new(uri, copts, ctypes.byref(conn)), "rpm_conn_new")
        handles.append((lib.rpm_conn_delete, conn))
        region = ctypes.c_void_p()
        ok(lib.rpm_region_open(conn, b"r0", None, ctypes.byref(region)), "rpm_region_open")
        handles.append((lib.rpm_region_delete, region))
        check_region(lib, ok, region)
    finally:
        for delete, p in reversed(handles):
            if p.value:
                rc = delete(ctypes.byref(p))
                if rc != 0 or p.value:
                    raise Failure("%s: %d, pointer %r" % (delete.__name__, rc, p.value))


def check_region(lib, ok, region):
    size = ctypes.c_uint64()
    ok(lib.rpm_region_get_size(region, ctypes.byref(size)), "rpm_region_get_size")
    if size.value != REGION_SIZE:
        raise Failure("region size %d, expected %d" % (size.value, REGION_SIZE))
    data = bytes((i * 37 + 11) & 0xFF for i in range(4096))
    src = ctypes.create_string_buffer(data, len(data))
    ok(lib.rpm_region_persist(region, 8192, src, len(data)), "rpm_region_persist")
    back = ctypes.create_string_buffer(len(data))
    ok(lib.rpm_region_read(region, 8192, back, len(data)), "rpm_region_read")
    if back.raw != data:
        raise Failure("the bytes read back differ from those persisted")
    rc = lib.rpm_region_persist(region, REGION_SIZE - 8, src, 64)
    if rc != RPM_E_OUT_OF_RANGE:
        raise Failure("persist past the end returned %d, expected %d" % (rc, RPM_E_OUT_OF_RANGE))
    msg = lib.rpm_errormsg().decode()
    if not msg:
        raise Failure("rpm_errormsg() is empty after a failed call")
    if not lib.rpm_err_2str(rc).decode().startswith("out of range"):
        raise Failure("rpm_err_2str(%d) is %r" % (rc, lib.rpm_err_2str(rc).decode()))
    tail = ctypes.create_string_buffer(8)
    ok(lib.rpm_region_read(region, REGION_SIZE - 8, tail, 8), "rpm_region_read")
    if tail.raw != b"\0" * 8:
        raise Failure("the refused persist changed the region")


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    base = "/dev/shm" if os.path.isdir("/dev/shm") else None
    workdir = tempfile.mkdtemp(prefix="rpm-ctypes-", dir=base)
    try:
        want = expected_version(argv[2] if len(argv) > 2 else None)
        lib = ctypes.CDLL(os.path.abspath(argv[1]))
        declare(lib)
        run(lib, want, workdir)
    except (Failure, OSError, AttributeError) as e:
        print("ctypes_smoke: FAIL: %s" % e, file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print("ctypes_smoke: ok (rpm %s, %s)" % (want, argv[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
