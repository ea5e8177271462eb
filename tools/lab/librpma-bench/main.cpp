// librpma-bench server|client [options]: see usage() below.
#include "common.hpp"

#include <charconv>
#include <cstdio>
#include <cstring>
#include <string_view>

namespace {

void usage(std::FILE* to) {
  std::fputs(
      "usage: librpma-bench server --addr IP --pm PATH [--port P] [--map-size BYTES]\n"
      "                            [--accept-timeout S] [--session-timeout S]\n"
      "       librpma-bench client --addr IP [--port P] [--sizes 8,64,4096] [--ops N] [--warmup N]\n"
      "                            [--connect-timeout-ms MS] [--op-timeout-ms MS]\n"
      "                            [--flush-path auto|read_after_write]\n"
      "server: registers PATH (a devdax such as /dev/dax0.0, or a file) for writes and persistent\n"
      "  flushes, sends its descriptor in the connection's private data, serves one client.\n"
      "client: per size, rpma_write + rpma_flush(RPMA_FLUSH_TYPE_PERSISTENT) + waiting for the\n"
      "  flush's completion, --ops times after --warmup; one JSON line per size on stdout.\n"
      "  --flush-path read_after_write: the queue pair is made without FLUSH, so librpma takes\n"
      "  its read-after-write path (as on an RNIC without FLUSH); auto: the path librpma picks.\n"
      "defaults: port 7800, map size 2097152, accept 120 s, session 600 s, 2000 ops, 200 warm-up,\n"
      "  connect 10000 ms, one operation 5000 ms.\n",
      to);
}

struct BadFlag : std::exception {};

template <class T>
T number(std::string_view flag, std::string_view v, T min, T max) {
  T n{};
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc{} || end != v.data() + v.size() || n < min || n > max) {
    std::fprintf(stderr, "librpma-bench: %.*s takes a whole number from %lld to %lld (got '%.*s')\n", int(flag.size()), flag.data(),
                 static_cast<long long>(min), static_cast<long long>(max), int(v.size()), v.data());
    throw BadFlag{};
  }
  return n;
}

std::vector<std::size_t> sizes(std::string_view v) {
  std::vector<std::size_t> out;
  while (!v.empty()) {
    auto comma = v.find(',');
    out.push_back(number<std::size_t>("--sizes", v.substr(0, comma), 1, 1u << 20));
    v = comma == std::string_view::npos ? std::string_view{} : v.substr(comma + 1);
  }
  if (out.empty()) { std::fputs("librpma-bench: --sizes is empty\n", stderr); throw BadFlag{}; }
  return out;
}

// Each flag takes a value; an unknown flag, a missing value or a bad
// number ends the program with status 2 before anything is touched.
bool parse_server(std::string_view f, std::string_view v, lrb::ServerOptions& s) {
  if (f == "--addr") s.addr = v;
  else if (f == "--port") s.port = std::to_string(number<int>(f, v, 1, 65535));
  else if (f == "--pm") s.pm = v;
  else if (f == "--map-size") s.map_size = number<std::size_t>(f, v, 4096, std::size_t{1} << 40);
  else if (f == "--accept-timeout") s.accept_timeout_s = number<int>(f, v, 1, 86400);
  else if (f == "--session-timeout") s.session_timeout_s = number<int>(f, v, 1, 86400);
  else return false;
  return true;
}

bool parse_client(std::string_view f, std::string_view v, lrb::ClientOptions& c) {
  if (f == "--addr") c.addr = v;
  else if (f == "--port") c.port = std::to_string(number<int>(f, v, 1, 65535));
  else if (f == "--sizes") c.sizes = sizes(v);
  else if (f == "--ops") c.ops = number<std::size_t>(f, v, 1, 100000000);
  else if (f == "--warmup") c.warmup = number<std::size_t>(f, v, 0, 100000000);
  else if (f == "--connect-timeout-ms") c.connect_timeout_ms = number<int>(f, v, 1, 3600000);
  else if (f == "--op-timeout-ms") c.op_timeout_ms = number<int>(f, v, 1, 3600000);
  else if (f == "--flush-path") {
    if (v != "auto" && v != "read_after_write") {
      std::fprintf(stderr, "librpma-bench: --flush-path is auto or read_after_write (got '%.*s')\n", int(v.size()), v.data());
      throw BadFlag{};
    }
    c.flush_path = v;
  }
  else return false;
  return true;
}

int run(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "-h") == 0 || std::strcmp(argv[1], "--help") == 0) { usage(argc < 2 ? stderr : stdout); return argc < 2 ? 2 : 0; }
  const std::string_view mode = argv[1];
  if (mode != "server" && mode != "client") { std::fprintf(stderr, "librpma-bench: the mode is server or client (got '%s')\n", argv[1]); return 2; }
  lrb::ServerOptions s;
  lrb::ClientOptions c;
  for (int i = 2; i < argc; i += 2) {
    const std::string_view f = argv[i];
    if (i + 1 >= argc) { std::fprintf(stderr, "librpma-bench: %s needs a value\n", argv[i]); return 2; }
    if (!(mode == "server" ? parse_server(f, argv[i + 1], s) : parse_client(f, argv[i + 1], c))) {
      std::fprintf(stderr, "librpma-bench %s: unknown option '%s' (see --help)\n", argv[1], argv[i]);
      return 2;
    }
  }
  if ((mode == "server" ? s.addr : c.addr).empty()) { std::fputs("librpma-bench: --addr is required\n", stderr); return 2; }
  if (mode == "server" && s.pm.empty()) { std::fputs("librpma-bench server: --pm is required\n", stderr); return 2; }
  lrb::install_log();
  return mode == "server" ? lrb::run_server(s) : lrb::run_client(c);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const BadFlag&) {
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "librpma-bench: %s\n", e.what());
    return 1;
  }
}
