// librpma-bench: our own harness over librpma 1.3's public API (librpma.h),
// to put librpma's persist (rpma_write + rpma_flush(PERSISTENT)) beside
// rpm's in one lab VM run. Not part of rpm: nothing here links rpm.
#pragma once

#include <librpma.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace lrb {

// A failed step, with librpma's own words for the code when there is one.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
[[noreturn]] void fail_rpma(const std::string& what, int rc);
inline void check(int rc, const std::string& what) {
  if (rc != 0) fail_rpma(what, rc);
}

struct ServerOptions {
  std::string addr, port = "7800", pm;
  std::size_t map_size = 2u << 20;  // a devdax maps in 2 MiB pages
  int accept_timeout_s = 120;       // until a client connects
  int session_timeout_s = 600;      // until that client disconnects
};

struct ClientOptions {
  std::string addr, port = "7800";
  std::vector<std::size_t> sizes{8, 64, 4096};
  std::size_t ops = 2000, warmup = 200;
  int connect_timeout_ms = 10000;
  int op_timeout_ms = 5000;  // one write + flush; rxe under TCG takes ~50 us
  // "auto": the path librpma chooses; "read_after_write": the QP made
  // without FLUSH (qp_shim.cpp), and the run fails unless the flushes then
  // complete as reads.
  std::string flush_path = "auto";
};

// Queue pairs made from now on cannot post FLUSH (qp_shim.cpp).
void create_qps_without_flush();

// What the server sends in the connection's private data: the region's and
// the peer configuration's descriptors, each after a length byte.
struct Descriptors {
  std::vector<std::uint8_t> mr, peer_cfg;
  std::vector<std::uint8_t> pack() const;
  static Descriptors unpack(const void* data, std::size_t len);
};

// librpma's log, to stderr, remembering whether it said it falls back from
// native FLUSH to a read after the write.
void install_log();
bool log_said_no_native_flush();

// The next connection event within timeout_ms (poll on its event fd), so no
// wait is unbounded; throws when none comes.
rpma_conn_event next_event(rpma_conn* conn, int timeout_ms, const char* waiting_for);

std::chrono::steady_clock::time_point now();

int run_server(const ServerOptions& o);
int run_client(const ClientOptions& o);

}  // namespace lrb
