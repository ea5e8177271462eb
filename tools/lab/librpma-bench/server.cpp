// The server: the PM region registered for writes and persistent flushes,
// its descriptor handed over in the accept's private data, then nothing but
// waiting for the client to disconnect (rxe answers the one-sided writes,
// reads and flushes in the kernel).
#include "common.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace lrb {
namespace {

struct Mapping {
  void* ptr = MAP_FAILED;
  std::size_t size = 0;
  ~Mapping() {
    if (ptr != MAP_FAILED) ::munmap(ptr, size);
  }
};

[[noreturn]] void fail_errno(const std::string& what) { throw Error(what + ": " + std::strerror(errno)); }

// A devdax (a character device) is mapped as it is; a file is made at
// least map_size long first. MAP_SHARED: the writes must reach the medium.
void map_pm(const ServerOptions& o, Mapping& m) {
  int fd = ::open(o.pm.c_str(), O_RDWR | O_CREAT, 0600);
  if (fd < 0) fail_errno("open " + o.pm);
  struct stat st{};
  if (::fstat(fd, &st) != 0) { ::close(fd); fail_errno("fstat " + o.pm); }
  if (S_ISREG(st.st_mode) && static_cast<std::size_t>(st.st_size) < o.map_size && ::ftruncate(fd, static_cast<off_t>(o.map_size)) != 0) {
    ::close(fd);
    fail_errno("ftruncate " + o.pm);
  }
  m.ptr = ::mmap(nullptr, o.map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (m.ptr == MAP_FAILED) fail_errno("mmap " + std::to_string(o.map_size) + " B of " + o.pm + " (a devdax needs a multiple of its alignment, 2 MiB)");
  m.size = o.map_size;
}

// The peer configuration says "direct write to PMem": librpma refuses
// rpma_flush(PERSISTENT) without it (RPMA_E_NOSUPP). In the lab the writes
// land through rxe's CPU copies into emulated ADR PM, where rxe's native
// FLUSH writes the caches back; the read-after-write path would rely on
// this declaration alone, as librpma's APM does on DDIO-off hardware.
Descriptors describe(rpma_mr_local* mr) {
  Descriptors d;
  std::size_t n = 0;
  check(rpma_mr_get_descriptor_size(mr, &n), "rpma_mr_get_descriptor_size");
  d.mr.resize(n);
  check(rpma_mr_get_descriptor(mr, d.mr.data()), "rpma_mr_get_descriptor");
  rpma_peer_cfg* pcfg = nullptr;
  check(rpma_peer_cfg_new(&pcfg), "rpma_peer_cfg_new");
  int rc = rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true);
  if (rc == 0) rc = rpma_peer_cfg_get_descriptor_size(pcfg, &n);
  if (rc == 0) {
    d.peer_cfg.resize(n);
    rc = rpma_peer_cfg_get_descriptor(pcfg, d.peer_cfg.data());
  }
  rpma_peer_cfg_delete(&pcfg);
  check(rc, "the peer configuration's descriptor");
  return d;
}

// One client: accept with the descriptors, then wait (bounded) for its end.
void serve_one(rpma_ep* ep, const ServerOptions& o, std::vector<std::uint8_t>& pdata_bytes) {
  int fd = -1;
  check(rpma_ep_get_fd(ep, &fd), "rpma_ep_get_fd");
  pollfd pfd{fd, POLLIN, 0};
  int n = ::poll(&pfd, 1, o.accept_timeout_s * 1000);
  if (n <= 0) throw Error("no client connected within " + std::to_string(o.accept_timeout_s) + " s");
  rpma_conn_req* req = nullptr;
  check(rpma_ep_next_conn_req(ep, nullptr, &req), "rpma_ep_next_conn_req");
  rpma_conn_private_data pdata{pdata_bytes.data(), static_cast<std::uint8_t>(pdata_bytes.size())};
  rpma_conn* conn = nullptr;
  check(rpma_conn_req_connect(&req, &pdata, &conn), "rpma_conn_req_connect");
  try {
    rpma_conn_event ev = next_event(conn, 30000, "the connection to be established");
    if (ev != RPMA_CONN_ESTABLISHED) throw Error(std::string("connection: ") + rpma_utils_conn_event_2str(ev));
    std::fprintf(stderr, "librpma-bench server: client connected\n");
    ev = next_event(conn, o.session_timeout_s * 1000, "the client to disconnect");
    std::fprintf(stderr, "librpma-bench server: %s\n", rpma_utils_conn_event_2str(ev));
  } catch (...) {
    rpma_conn_disconnect(conn);
    rpma_conn_delete(&conn);
    throw;
  }
  rpma_conn_disconnect(conn);
  rpma_conn_delete(&conn);
}

}  // namespace

int run_server(const ServerOptions& o) {
  ibv_context* dev = nullptr;
  check(rpma_utils_get_ibv_context(o.addr.c_str(), RPMA_UTIL_IBV_CONTEXT_LOCAL, &dev), "no RDMA device for " + o.addr);
  rpma_peer* peer = nullptr;
  check(rpma_peer_new(dev, &peer), "rpma_peer_new");
  Mapping m;
  map_pm(o, m);
  rpma_mr_local* mr = nullptr;
  const int usage = RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT |
                    RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY;
  check(rpma_mr_reg(peer, m.ptr, m.size, usage, &mr), "rpma_mr_reg of " + o.pm);
  int rc = 0;
  try {
    std::vector<std::uint8_t> pdata = describe(mr).pack();
    rpma_ep* ep = nullptr;
    check(rpma_ep_listen(peer, o.addr.c_str(), o.port.c_str(), &ep), "rpma_ep_listen on " + o.addr + ":" + o.port);
    // The line tools/lab/bench waits for before it starts the client.
    std::printf("librpma-bench server: listening on %s:%s, region %s (%zu B)\n", o.addr.c_str(), o.port.c_str(), o.pm.c_str(), m.size);
    std::fflush(stdout);
    try { serve_one(ep, o, pdata); } catch (const Error& e) { std::fprintf(stderr, "librpma-bench server: %s\n", e.what()); rc = 1; }
    rpma_ep_shutdown(&ep);
  } catch (const Error& e) {
    std::fprintf(stderr, "librpma-bench server: %s\n", e.what());
    rc = 1;
  }
  rpma_mr_dereg(&mr);
  rpma_peer_delete(&peer);
  return rc;
}

}  // namespace lrb
