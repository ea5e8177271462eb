#include "baselines.hpp"

#include "baseline_rdma.hpp"

namespace rpmbench {
namespace {

constexpr std::size_t kStreamMessage = 1 << 20;
constexpr std::size_t kSmallReply = 16;  // about an rpm response frame without data
constexpr std::size_t kOpening = static_cast<std::size_t>(-1);

std::string host_of(const std::string& uri) {
    const auto begin = uri.find("://");
    const auto from = begin == std::string::npos ? 0 : begin + 3;
    return uri.substr(from, uri.rfind(':') - from);
}

bool loopback(const std::string& host) {
    return host == "localhost" || host == "[::1]" || host == "::1" || host.rfind("127.", 0) == 0;
}

std::string test_tag(std::size_t test) { return test == kOpening ? "opening" : "test" + std::to_string(test); }

} // namespace

void accumulate(Measurement& into, const Measurement& m) {
    into.latency.merge(m.latency);
    into.ops += m.ops;
    into.bytes += m.bytes;
    into.errors += m.errors;
    if (into.first_error.empty()) into.first_error = m.first_error;
    into.seconds += m.seconds;
    into.cpu_seconds += m.cpu_seconds;
}

Baselines::Baselines(Report& report, std::string transport, const std::string& server_uri,
                     const std::string& external, double warmup, Progress& progress)
    : report_(report), transport_(std::move(transport)), server_host_(host_of(server_uri)), warmup_(warmup),
      progress_(progress) {
    if (transport_ != "tcp") return;
    if (!external.empty()) {
        if (!parse_endpoint(external, endpoint_)) error_ = "--baseline-server " + external + ": expected HOST:PORT";
        path_ = "external baseline server " + external + " (rpm-bench --serve-baseline; blocking sockets, TCP_NODELAY)";
        return;
    }
    endpoint_ = {"127.0.0.1", 0};
    server_ = TcpBaselineServer::start(endpoint_, error_);
    if (server_) endpoint_.port = server_->port();
    path_ = "loopback 127.0.0.1, rpm-bench's own echo/sink server thread (blocking sockets, TCP_NODELAY)";
    if (!loopback(server_host_))
        report_.notes.push_back("the rpm server is on " + server_host_ +
                                " but the TCP baselines ran on loopback; run `rpm-bench --serve-baseline "
                                "0.0.0.0:PORT` there and pass --baseline-server HOST:PORT for a like-for-like "
                                "baseline");
}

Baselines::~Baselines() = default;

std::size_t Baselines::add(Baseline b) {
    if (transport_ != "tcp") {
        RdmaReadSpec spec{server_host_, 0, std::max(b.request_bytes, b.reply_bytes), b.qd, b.threads};
        auto r = b.kind == "rdma_read_round_trip" ? rdma_read_round_trip(spec, {0, 0}) : rdma_write_stream(spec, {0, 0});
        b.unavailable = std::move(r.unavailable);
        b.path = "rdma to " + server_host_;
    } else {
        b.m.emplace();
        b.path = path_;
    }
    report_.baselines.push_back(std::move(b));
    const std::size_t index = report_.baselines.size() - 1;
    if (warmup_ > 0 && report_.baselines[index].m) {
        const auto saved = *report_.baselines[index].m;  // the warm-up is not measured
        measure(index, {warmup_, 0});
        report_.baselines[index].m = saved;
    }
    return index;
}

std::size_t Baselines::latency(std::size_t test, Op op, std::size_t size, unsigned qd, unsigned threads) {
    Baseline b;
    b.qd = qd;
    b.threads = threads;
    if (transport_ == "tcp") {
        b.kind = "tcp_round_trip";
        b.request_bytes = op == Op::read ? kSmallReply : size;
        b.reply_bytes = op == Op::read ? size : kSmallReply;
    } else {
        // A one-sided read of the tested size stands for every rdma:// op.
        b.kind = "rdma_read_round_trip";
        b.reply_bytes = size;
    }
    b.id = b.kind + "/req=" + std::to_string(b.request_bytes) + "/rep=" + std::to_string(b.reply_bytes) +
           "/qd=" + std::to_string(qd) + "/t=" + std::to_string(threads) + "/" + test_tag(test);
    return add(std::move(b));
}

std::optional<std::size_t> Baselines::fanout(std::size_t size, unsigned fanout, unsigned quorum) {
    if (transport_ != "tcp") return std::nullopt;
    Baseline b;
    b.kind = "tcp_fanout_round_trip";
    b.request_bytes = size;
    b.reply_bytes = kSmallReply;
    b.fanout = fanout;
    b.quorum = quorum;
    b.id = b.kind + "/req=" + std::to_string(size) + "/rep=" + std::to_string(kSmallReply) + "/fanout=" +
           std::to_string(fanout) + "/quorum=" + std::to_string(quorum);
    return add(std::move(b));
}

std::size_t Baselines::stream(std::size_t test) {
    Baseline b;
    b.kind = transport_ == "tcp" ? "tcp_stream" : "rdma_write_stream";
    b.request_bytes = kStreamMessage;
    b.id = b.kind + "/msg=" + std::to_string(kStreamMessage) + "/" + test_tag(test);
    return add(std::move(b));
}

void Baselines::measure(std::size_t index, const StopRule& slice, const std::string& label_suffix) {
    auto& b = report_.baselines[index];
    if (!b.m || interrupted()) return;
    Measurement m;
    if (b.kind == "tcp_stream") {
        m = tcp_stream(endpoint_, b.request_bytes, slice, progress_, "baseline " + b.id + label_suffix);
    } else {
        const RoundTripSpec spec{b.request_bytes, b.reply_bytes, b.qd, b.threads, b.fanout, b.quorum};
        m = tcp_round_trip(endpoint_, spec, slice, progress_, "baseline " + b.id + label_suffix);
    }
    accumulate(*report_.baselines[index].m, m);
}

} // namespace rpmbench
