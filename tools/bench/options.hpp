// rpm-bench's settings, as parsed from the command line (main.cpp).
#pragma once

#include "rpm_driver.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace rpmbench {

struct Options {
    // (b) an external server; empty connect = (a) start one in-process.
    std::string connect, id = "bench", secret, secret_file, region;
    // (a) the in-process server.
    std::string listen = "tcp://127.0.0.1:0", pool_dir = "/dev/shm";
    rpm::CompletionMode completion = rpm::CompletionMode::adaptive;  ///< rdma://: client and in-process server
    std::string completion_name = "adaptive";                        ///< as given; completion parsed from it
    unsigned server_io_threads = 0;  ///< in-process server's I/O threads per tcp:// listener; 0 = one per CPU
    std::uint64_t pool_size = 0;  ///< 0: large enough for every slot, at least 64 MiB

    std::vector<Op> ops{Op::write, Op::read, Op::persist, Op::atomic_write};
    std::vector<std::size_t> sizes{8, 64, 4096, 65536, 1 << 20};
    std::vector<unsigned> qds{1}, threads{1};
    double duration = 1.0, warmup = 0.2;
    std::uint64_t op_count = 0;  ///< per test, over all threads; 0 = until duration
    unsigned rounds = 3;         ///< alternating baseline/rpm slices per test
    Api api = Api::callback;
    bool registered = false;  ///< buffers registered with the connection (Connection::register_memory)
    bool forced = true;  ///< also run persist with every other method the transport accepts

    std::vector<unsigned> cpus;   ///< pin every thread (ours, the in-process server's, the baselines') here; empty = no pinning
    std::string baseline_server;  ///< HOST:PORT of `rpm-bench --serve-baseline`; empty = our own on loopback
    bool json = false, self_check = false, quiet = false;
    std::string output;  ///< also write the JSON here
    std::string plot;    ///< --plot: write the latency CDFs here as SVG (plot.hpp); empty = none
    std::string command_line;

    // --replication: rpm::Replicator against 1..3 replicas (replication.hpp).
    struct Replication {
        bool enabled = false;
        std::vector<unsigned> replicas{1, 2, 3};  ///< replica counts to measure
        std::vector<std::string> durability{"all-local", "majority-local", "1-local"};
        std::vector<std::string> uris;            ///< external replicas (--replica); empty = in-process
        unsigned batch = 8;                       ///< writes per commit of the throughput test; 0 = none
        bool log = false;                         ///< the persist test appends ReplicatedLog records instead
    } replication;

    // --mr-pool: rpm::MrPool against static per-connection MRs, in virtual
    // time (tools/bench/mr_pool/bench.hpp); defaults documented in docs/man/rpm-bench.1.
    struct MrPool {
        bool enabled = false;
        double iops = 28250;          ///< mean I/Os per second per connection
        double latency_us = 1000;     ///< an I/O holds its MR this long
        double burst_factor = 4;      ///< rate in a burst / mean rate
        double burst_fraction = 0.1;  ///< share of the time each connection spends in bursts
        double burst_ms = 10;         ///< mean length of a burst
        double duration = 10;         ///< virtual seconds per run
        std::uint64_t seed = 1;
        unsigned tick_us = 10;
        unsigned budget = 2048;       ///< registered entries the device allows
        unsigned per_connection = 113;  ///< the static scheme's share (iSER's)
        unsigned l1 = 16;             ///< the pool's L1 entries per connection
    } mr_pool;
};

/// Run everything; returns the exit status.
int run(const Options& o);

/// --replication (tools/bench/replication/run.cpp); returns the exit status.
int run_replication(const Options& o);

/// --mr-pool (tools/bench/mr_pool/run.cpp); returns the exit status.
int run_mr_pool(const Options& o);

} // namespace rpmbench
