// The baselines of one run. Every rpm test gets its own round-trip baseline
// (same request and reply sizes, qd and threads), measured in slices that
// alternate with the test's own slices (--rounds): on a shared, noisy
// machine both then see the same disturbances, and the ratio compares like
// with like. Bandwidth tests (>= 64 KiB) likewise get their own paired
// stream baseline; smaller ones use the stream measured at the start.
#pragma once

#include "baseline_tcp.hpp"
#include "report.hpp"

#include <memory>
#include <optional>
#include <string>

namespace rpmbench {

class Baselines {
public:
    /// transport: "tcp" or "rdma"; server_uri: where the rpm server is.
    /// external: HOST:PORT of a remote baseline server, empty = start one on loopback.
    Baselines(Report& report, std::string transport, const std::string& server_uri, const std::string& external,
              double warmup, Progress& progress);
    ~Baselines();

    /// Empty on success, else why the baselines cannot run at all.
    [[nodiscard]] const std::string& error() const noexcept { return error_; }

    /// A new latency baseline for test number `test` (op of `size` bytes at
    /// this qd and threads): its index in report.baselines, warmed up.
    std::size_t latency(std::size_t test, Op op, std::size_t size, unsigned qd, unsigned threads);
    /// tcp:// only (else nullopt): a new fan-out baseline, each operation
    /// `size` bytes sent on `fanout` connections and done when `quorum`
    /// answered (qd 1, one thread); its index, warmed up.
    std::optional<std::size_t> fanout(std::size_t size, unsigned fanout, unsigned quorum);
    /// A new stream baseline (one sender, 1 MiB messages) for test `test`,
    /// or with test == npos the run's opening one; warmed up.
    std::size_t stream(std::size_t test);
    /// Measure one more slice of baseline `index` and add it to its figures.
    void measure(std::size_t index, const StopRule& slice, const std::string& label_suffix = {});

private:
    std::size_t add(Baseline b);

    Report& report_;
    std::string transport_;
    std::string server_host_;
    Endpoint endpoint_;
    std::string path_;
    std::unique_ptr<TcpBaselineServer> server_;
    double warmup_;
    Progress& progress_;
    std::string error_;
};

/// Add slice `m` to `into` (latencies, counts, time).
void accumulate(Measurement& into, const Measurement& m);

} // namespace rpmbench
