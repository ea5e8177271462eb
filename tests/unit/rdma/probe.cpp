// rdma_probe: one kind of operation in a loop on rdma://'s synchronous API,
// against the unit tests' in-process fake fabric (no device, no kernel), for
// counting rpm's own instructions per operation with callgrind, which counts
// exactly whatever the machine's load (docs/benchmarks-history.md, "Fewer clock
// reads, no allocation per call"):
//
//   for n in 100 1100; do
//     valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file=cg.$n build/tests/rdma_probe read $n
//   done
//   # per operation: (thread 1's total at 1100 - at 100) / 1000
//
// Usage: rdma_probe read|write|persist|send_flush N [event] [callback]
//   persist: read_after_write (a cpu_cache region); send_flush: a
//   memory_controller region. event: both ends in CompletionMode::event
//   (so no thread's count includes spinning). callback: the callback API,
//   one operation at a time, each issued from the last one's callback (as
//   rpm-bench's qd 1 does): count every client thread, the I/O thread runs
//   them. Not a test: not run by ctest.
#include "support.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <mutex>
#include <cstdlib>
#include <string>

using namespace rpm;
using namespace rpm::rdma;
using namespace rpm::rdma::test;
using namespace std::chrono_literals;

namespace {

struct Args {
    std::string op;
    int n = 0;
    bool event = false;
    bool callback = false;
};

bool parse(int argc, char** argv, Args& a) {
    a.op = argc > 1 ? argv[1] : "";
    a.n = argc > 2 ? std::atoi(argv[2]) : 0;
    for (int i = 3; i < argc; ++i) {
        const std::string f = argv[i];
        if (f == "event") a.event = true;
        else if (f == "callback") a.callback = true;
        else return false;
    }
    return (a.op == "read" || a.op == "write" || a.op == "persist" || a.op == "send_flush") && a.n > 0;
}

// Issue operation i of n from the callback of operation i - 1.
struct Loop {
    client::Transport& t;
    const proto::RegionGrant& g;
    const Args& a;
    std::vector<std::byte>& buf;
    std::span<const proto::Slice> slices;
    int left;
    Result<void> r;
    std::mutex mu;
    std::condition_variable cv;
    bool over = false;

    void next() {
        client::Done d = [this](Result<void> e) {
            if (!e.has_value() || --left == 0) return finish(std::move(e));
            next();
        };
        if (a.op == "read") t.read(g, 0, buf, std::move(d));
        else if (a.op == "write") t.write(g, 0, buf, std::move(d));
        else t.persist(g, slices, std::move(d));
    }
    void finish(Result<void> e) {
        std::lock_guard lock(mu);
        r = std::move(e);
        over = true;
        cv.notify_all();
    }
    Result<void> run() {
        next();
        std::unique_lock lock(mu);
        if (!cv.wait_for(lock, 60s, [this] { return over; }))
            return Error(std::make_error_code(std::errc::timed_out), "the callback loop did not end within 60 s");
        return r;
    }
};

} // namespace

int main(int argc, char** argv) {
    Args a;
    if (!parse(argc, argv, a)) {
        std::fprintf(stderr, "usage: rdma_probe read|write|persist|send_flush N [event] [callback]\n");
        return 2;
    }
    const std::string& op = a.op;
    const int n = a.n;
    const bool event = a.event;
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
    if (a.callback) {
        Loop loop{*t, g, a, buf, slices, n, {}, {}, {}, false};
        if (auto r = loop.run(); !r.has_value()) {
            std::fprintf(stderr, "rdma_probe: %s failed: %s\n", op.c_str(), r.error().message().c_str());
            return 1;
        }
    }
    for (int i = 0; i < n && !a.callback; ++i) {
        Result<void> r;
        // As RemoteRegion's synchronous read and write ask.
        if (op == "read") r = t->read_now(g, 0, buf, 5s);
        else if (op == "write") r = t->write_now(g, 0, buf, 5s);
        else r = t->call([&](client::Done d) { t->persist(g, slices, std::move(d)); }, 5s);
        if (!r.has_value()) {
            std::fprintf(stderr, "rdma_probe: %s failed: %s\n", op.c_str(), r.error().message().c_str());
            return 1;
        }
    }
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    std::printf("rdma_probe %s: %d operations, %.2f us each\n", op.c_str(), n, us / n);
    return 0;
}
