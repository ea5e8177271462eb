// rdma_probe: one kind of operation in a loop on rdma://'s synchronous API,
// against the unit tests' in-process fake fabric (no device, no kernel), for
// counting rpm's own instructions per operation with callgrind, which counts
// exactly whatever the machine's load (docs/benchmarks.md, "Fewer clock
// reads, no allocation per call"):
//
//   for n in 100 1100; do
//     valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file=cg.$n build/tests/rdma_probe read $n
//   done
//   # per operation: (thread 1's total at 1100 - at 100) / 1000
//
// Usage: rdma_probe read|write|persist|send_flush N [event]
//   persist: read_after_write (a cpu_cache region); send_flush: a
//   memory_controller region. event: both ends in CompletionMode::event
//   (so no thread's count includes spinning). Not a test: not run by ctest.
#include "support.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace rpm;
using namespace rpm::rdma;
using namespace rpm::rdma::test;
using namespace std::chrono_literals;

int main(int argc, char** argv) {
    const std::string op = argc > 1 ? argv[1] : "";
    const int n = argc > 2 ? std::atoi(argv[2]) : 0;
    const bool event = argc > 3 && std::string(argv[3]) == "event";
    if ((op != "read" && op != "write" && op != "persist" && op != "send_flush") || n <= 0 ||
        (argc > 3 && !event) || argc > 4) {
        std::fprintf(stderr, "usage: rdma_probe read|write|persist|send_flush N [event]\n");
        return 2;
    }
    const auto domain = op == "send_flush" ? PersistenceDomain::memory_controller : PersistenceDomain::cpu_cache;
    Harness h({{"pm", domain}}, "/", {}, [&](ServerOptions& o) {
        if (event) o.completion = CompletionMode::event;
    });
    h.listen();
    ClientOptions co;
    if (event) co.completion = CompletionMode::event;
    auto c = h.connect(co);
    if (!c) return 1;
    auto t = std::move(*c);
    const proto::RegionGrant g = open(*t, "pm");
    std::vector<std::byte> buf(8);
    const std::vector<proto::Slice> slices{proto::Slice{0, std::span<const std::byte>(buf)}};
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) {
        std::error_code ec;
        if (op == "read") ec = t->call([&](client::Done d) { t->read(g, 0, buf, std::move(d)); }, 5s);
        else if (op == "write") ec = t->call([&](client::Done d) { t->write(g, 0, buf, std::move(d)); }, 5s);
        else ec = t->call([&](client::Done d) { t->persist(g, slices, std::move(d)); }, 5s);
        if (ec) {
            std::fprintf(stderr, "rdma_probe: %s failed: %s\n", op.c_str(), ec.message().c_str());
            return 1;
        }
    }
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    std::printf("rdma_probe %s: %d operations, %.2f us each\n", op.c_str(), n, us / n);
    return 0;
}
