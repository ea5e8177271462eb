// rpm-microbench: in-process costs under rpm-bench's figures, without the
// network: frame encode/decode, the stream-to-frame reader, decide(), and
// rpm-bench's own latency histogram. Google Benchmark; run with
// --benchmark_filter=... as usual. Uses internal headers (src/), like the
// unit tests.
#include "../histogram.hpp"
#include "protocol/protocol.hpp"

#include <rpm/flush.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <vector>

namespace {

using rpm::proto::FrameReader;

std::vector<std::byte> payload(std::size_t n) { return std::vector<std::byte>(n, std::byte{0x5a}); }

// What TcpClient::write does per call: one Write frame into a fresh vector.
void BM_EncodeWrite(benchmark::State& st) {
    const auto data = payload(static_cast<std::size_t>(st.range(0)));
    for (auto _ : st) {
        std::vector<std::byte> frame;
        rpm::proto::encode(frame, 1, rpm::proto::Write{0, 4096, data});
        benchmark::DoNotOptimize(frame.data());
    }
    st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations()) * st.range(0));
}
BENCHMARK(BM_EncodeWrite)->Arg(64)->Arg(4096)->Arg(1 << 20);

void BM_DecodeWrite(benchmark::State& st) {
    std::vector<std::byte> frame;
    rpm::proto::encode(frame, 1, rpm::proto::Write{0, 4096, payload(static_cast<std::size_t>(st.range(0)))});
    const auto body = std::span<const std::byte>(frame).subspan(rpm::proto::kHeaderSize);
    for (auto _ : st) benchmark::DoNotOptimize(rpm::proto::decode_write(body));
}
BENCHMARK(BM_DecodeWrite)->Arg(64)->Arg(1 << 20);

// The server's receive path: Write frames arriving in 64 KiB reads (the
// session's read buffer) and taken out whole.
void BM_FrameReaderFeed(benchmark::State& st) {
    const auto size = static_cast<std::size_t>(st.range(0));
    std::vector<std::byte> frame;
    for (int i = 0; i < 4; ++i) rpm::proto::encode(frame, 1, rpm::proto::Write{0, 0, payload(size)});
    FrameReader reader;
    constexpr std::size_t chunk = 64 * 1024;
    for (auto _ : st) {
        for (std::size_t at = 0; at < frame.size(); at += chunk) {
            reader.feed(std::span(frame).subspan(at, std::min(chunk, frame.size() - at)));
            while (auto f = reader.next()) benchmark::DoNotOptimize(f->second.data());
        }
    }
    st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations() * frame.size()));
}
BENCHMARK(BM_FrameReaderFeed)->Arg(64)->Arg(4096)->Arg(1 << 20);

void BM_Decide(benchmark::State& st) {
    rpm::flush::Inputs in;
    in.domain = {rpm::PersistenceDomain::memory_controller, rpm::flush::Source::detected, "/sys/bus/nd/region0"};
    in.ddio = {rpm::Ddio::on, rpm::flush::Source::detected, "0000:00:00.0"};
    in.granularity = {rpm::Granularity::cache_line, rpm::flush::Source::detected, "libpmem2"};
    for (auto _ : st) benchmark::DoNotOptimize(rpm::flush::decide(in));
}
BENCHMARK(BM_Decide);

// rpm-bench's per-operation cost of recording a latency.
void BM_HistogramRecord(benchmark::State& st) {
    rpmbench::Histogram h;
    std::uint64_t v = 1000;
    for (auto _ : st) {
        h.record(v);
        v = (v * 6364136223846793005ull + 1442695040888963407ull) >> 40;  // spread over buckets
    }
    benchmark::DoNotOptimize(h.count());
}
BENCHMARK(BM_HistogramRecord);

} // namespace

BENCHMARK_MAIN();
