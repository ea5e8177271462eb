#include "common.hpp"

#include <poll.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace lrb {

void fail_rpma(const std::string& what, int rc) {
  throw Error(what + ": " + rpma_err_2str(rc) + " (" + std::to_string(rc) + ")");
}

std::vector<std::uint8_t> Descriptors::pack() const {
  // rdma_cm carries at most 196 bytes in an accept's private data.
  if (mr.size() > 255 || peer_cfg.size() > 255 || 2 + mr.size() + peer_cfg.size() > 196)
    throw Error("descriptors too large for the connection's private data");
  std::vector<std::uint8_t> out{static_cast<std::uint8_t>(mr.size()), static_cast<std::uint8_t>(peer_cfg.size())};
  out.insert(out.end(), mr.begin(), mr.end());
  out.insert(out.end(), peer_cfg.begin(), peer_cfg.end());
  return out;
}

Descriptors Descriptors::unpack(const void* data, std::size_t len) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  if (p == nullptr || len < 2 || len < 2u + p[0] + p[1])
    throw Error("the server's private data holds no descriptors (is it librpma-bench server?)");
  Descriptors d;
  d.mr.assign(p + 2, p + 2 + p[0]);
  d.peer_cfg.assign(p + 2 + p[0], p + 2 + p[0] + p[1]);
  return d;
}

namespace {
std::atomic<bool> no_native_flush{false};

void log_to_stderr(rpma_log_level level, const char* file, const int line, const char* func, const char* fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  // librpma ends its messages with a newline of its own.
  std::size_t n = std::strlen(msg);
  while (n > 0 && msg[n - 1] == '\n') msg[--n] = '\0';
  // librpma 1.3 says this when the device lacks FLUSH; the completion's
  // opcode (client.cpp) is what the report trusts, this is a second witness.
  if (std::strstr(msg, "Native flush is not supported") != nullptr) no_native_flush = true;
  std::fprintf(stderr, "librpma[%d] %s:%d %s: %s\n", static_cast<int>(level), file, line, func, msg);
}
}  // namespace

void install_log() {
  check(rpma_log_set_function(log_to_stderr), "rpma_log_set_function");
  // NOTICE: the fallback and connection messages, not one line per write.
  check(rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_NOTICE), "rpma_log_set_threshold");
}

bool log_said_no_native_flush() { return no_native_flush; }

rpma_conn_event next_event(rpma_conn* conn, int timeout_ms, const char* waiting_for) {
  int fd = -1;
  check(rpma_conn_get_event_fd(conn, &fd), "rpma_conn_get_event_fd");
  pollfd pfd{fd, POLLIN, 0};
  int n = ::poll(&pfd, 1, timeout_ms);
  if (n < 0) throw Error(std::string("poll on the connection's event fd: ") + std::strerror(errno));
  if (n == 0) throw Error(std::string("no connection event within ") + std::to_string(timeout_ms) + " ms while waiting for " + waiting_for);
  rpma_conn_event ev = RPMA_CONN_UNDEFINED;
  check(rpma_conn_next_event(conn, &ev), "rpma_conn_next_event");
  return ev;
}

std::chrono::steady_clock::time_point now() { return std::chrono::steady_clock::now(); }

}  // namespace lrb
