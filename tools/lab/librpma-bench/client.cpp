// The client: per size, N times (after a warm-up) rpma_write, then
// rpma_flush(PERSISTENT) with a completion, then polling for that
// completion; one operation in flight (qd 1), like rpm-bench's persist.
#include "common.hpp"

#include <infiniband/verbs.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace lrb {
namespace {

struct Conn {
  rpma_peer* peer = nullptr;
  rpma_conn* conn = nullptr;
  rpma_mr_remote* remote = nullptr;
  rpma_mr_local* local = nullptr;
  rpma_cq* cq = nullptr;
  int flush_types = 0;  // rpma_mr_remote_get_flush_type
};

// Connect (bounded by connect_timeout_ms: resolving by the cfg's timeout,
// establishing by next_event), then take the region and the peer
// configuration out of the private data.
void connect(const ClientOptions& o, Conn& c) {
  rpma_conn_cfg* cfg = nullptr;
  check(rpma_conn_cfg_new(&cfg), "rpma_conn_cfg_new");
  check(rpma_conn_cfg_set_timeout(cfg, o.connect_timeout_ms), "rpma_conn_cfg_set_timeout");
  rpma_conn_req* req = nullptr;
  int rc = rpma_conn_req_new(c.peer, o.addr.c_str(), o.port.c_str(), cfg, &req);
  rpma_conn_cfg_delete(&cfg);
  check(rc, "rpma_conn_req_new to " + o.addr + ":" + o.port);
  check(rpma_conn_req_connect(&req, nullptr, &c.conn), "rpma_conn_req_connect");
  rpma_conn_event ev = next_event(c.conn, o.connect_timeout_ms, "the connection to be established");
  if (ev != RPMA_CONN_ESTABLISHED)
    throw Error(std::string("connecting to ") + o.addr + ":" + o.port + ": " + rpma_utils_conn_event_2str(ev) + " (is the server listening?)");
  rpma_conn_private_data pdata{};
  check(rpma_conn_get_private_data(c.conn, &pdata), "rpma_conn_get_private_data");
  Descriptors d = Descriptors::unpack(pdata.ptr, pdata.len);
  check(rpma_mr_remote_from_descriptor(d.mr.data(), d.mr.size(), &c.remote), "rpma_mr_remote_from_descriptor");
  rpma_peer_cfg* pcfg = nullptr;
  check(rpma_peer_cfg_from_descriptor(d.peer_cfg.data(), d.peer_cfg.size(), &pcfg), "rpma_peer_cfg_from_descriptor");
  rc = rpma_conn_apply_remote_peer_cfg(c.conn, pcfg);
  rpma_peer_cfg_delete(&pcfg);
  check(rc, "rpma_conn_apply_remote_peer_cfg");
  check(rpma_mr_remote_get_flush_type(c.remote, &c.flush_types), "rpma_mr_remote_get_flush_type");
  if (!(c.flush_types & RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT)) throw Error("the server's region does not offer persistent flushes");
  check(rpma_conn_get_cq(c.conn, &c.cq), "rpma_conn_get_cq");
}

// Busy polling (as ib_read_lat does) up to a deadline: a lost completion
// must end the run with a message, not hang it.
ibv_wc wait_one(rpma_cq* cq, int timeout_ms) {
  const auto deadline = now() + std::chrono::milliseconds(timeout_ms);
  ibv_wc wc{};
  int got = 0;
  for (;;) {
    int rc = rpma_cq_get_wc(cq, 1, &wc, &got);
    if (rc == 0 && got == 1) break;
    if (rc != 0 && rc != RPMA_E_NO_COMPLETION) fail_rpma("rpma_cq_get_wc", rc);
    if (now() > deadline) throw Error("no completion within " + std::to_string(timeout_ms) + " ms");
  }
  if (wc.status != IBV_WC_SUCCESS)
    throw Error(std::string("the flush's completion failed: ") + ibv_wc_status_str(wc.status));
  return wc;
}

// The flush's completion names the path librpma took: a FLUSH work
// request completes as IBV_WC_FLUSH, the read-after-write as a READ.
const char* method_of(ibv_wc_opcode op) {
  if (op == IBV_WC_FLUSH) return "native_flush";
  if (op == IBV_WC_RDMA_READ) return "read_after_write";
  return "unknown";
}

struct Result {
  std::vector<double> us;
  const char* method = "unknown";
};

Result measure(const ClientOptions& o, Conn& c, std::size_t size) {
  Result r;
  r.us.reserve(o.ops);
  static int marker;  // the flush's op_context, to recognise its completion
  for (std::size_t i = 0; i < o.warmup + o.ops; ++i) {
    const auto t0 = now();
    // Only the flush asks for a completion: the write's is implied by the
    // flush's (same QP, in order), as in librpma's own examples.
    check(rpma_write(c.conn, c.remote, 0, c.local, 0, size, RPMA_F_COMPLETION_ON_ERROR, nullptr), "rpma_write");
    check(rpma_flush(c.conn, c.remote, 0, size, RPMA_FLUSH_TYPE_PERSISTENT, RPMA_F_COMPLETION_ALWAYS, &marker), "rpma_flush");
    ibv_wc wc = wait_one(c.cq, o.op_timeout_ms);
    const auto t1 = now();
    if (wc.wr_id != reinterpret_cast<std::uint64_t>(&marker)) throw Error("a completion other than the flush's arrived");
    r.method = method_of(wc.opcode);
    if (o.flush_path == "read_after_write" && wc.opcode != IBV_WC_RDMA_READ)
      throw Error(std::string("--flush-path read_after_write, but the flush completed as ") + r.method);
    if (i >= o.warmup) r.us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  return r;
}

double percentile(const std::vector<double>& sorted, double p) {
  // Nearest rank: a figure that was measured, never an interpolation.
  std::size_t rank = static_cast<std::size_t>(p / 100.0 * static_cast<double>(sorted.size()) + 0.999999);
  return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

void print(const Result& r, std::size_t size, int flush_types) {
  std::vector<double> s = r.us;
  std::sort(s.begin(), s.end());
  double sum = 0;
  for (double v : s) sum += v;
  std::printf("{\"peer\":\"librpma\",\"op\":\"persist\",\"method\":\"%s\",\"size\":%zu,\"ops\":%zu,"
              "\"p50_us\":%.3f,\"p90_us\":%.3f,\"p99_us\":%.3f,\"min_us\":%.3f,\"mean_us\":%.3f,"
              "\"remote_flush_types\":%d,\"log_said_no_native_flush\":%s}\n",
              r.method, size, s.size(), percentile(s, 50), percentile(s, 90), percentile(s, 99), s.front(),
              sum / static_cast<double>(s.size()), flush_types, log_said_no_native_flush() ? "true" : "false");
  std::fflush(stdout);
}

void close_conn(Conn& c, int timeout_ms) {
  if (c.remote) rpma_mr_remote_delete(&c.remote);
  if (c.conn) {
    rpma_conn_disconnect(c.conn);
    try { next_event(c.conn, timeout_ms, "the connection to close"); } catch (const Error& e) { std::fprintf(stderr, "librpma-bench client: %s\n", e.what()); }
    rpma_conn_delete(&c.conn);
  }
  if (c.local) rpma_mr_dereg(&c.local);
  if (c.peer) rpma_peer_delete(&c.peer);
}

}  // namespace

int run_client(const ClientOptions& o) {
  Conn c;
  const std::size_t biggest = *std::max_element(o.sizes.begin(), o.sizes.end());
  std::unique_ptr<void, decltype(&std::free)> buf(std::aligned_alloc(4096, (biggest + 4095) / 4096 * 4096), &std::free);
  if (!buf) throw Error("out of memory for a " + std::to_string(biggest) + " B buffer");
  std::memset(buf.get(), 0xa5, biggest);
  int rc = 0;
  try {
    ibv_context* dev = nullptr;
    check(rpma_utils_get_ibv_context(o.addr.c_str(), RPMA_UTIL_IBV_CONTEXT_REMOTE, &dev), "no RDMA device reaches " + o.addr);
    check(rpma_peer_new(dev, &c.peer), "rpma_peer_new");
    if (o.flush_path == "read_after_write") create_qps_without_flush();
    check(rpma_mr_reg(c.peer, buf.get(), biggest, RPMA_MR_USAGE_WRITE_SRC, &c.local), "rpma_mr_reg of the source buffer");
    connect(o, c);
    std::size_t remote_size = 0;
    check(rpma_mr_remote_get_size(c.remote, &remote_size), "rpma_mr_remote_get_size");
    if (remote_size < biggest) throw Error("the server's region (" + std::to_string(remote_size) + " B) is smaller than --sizes' largest");
    for (std::size_t size : o.sizes) print(measure(o, c, size), size, c.flush_types);
  } catch (const Error& e) {
    std::fprintf(stderr, "librpma-bench client: %s\n", e.what());
    rc = 1;
  }
  close_conn(c, o.connect_timeout_ms);
  return rc;
}

}  // namespace lrb
