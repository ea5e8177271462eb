#include "baseline_tcp.hpp"

#include "socket_io.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace rpmbench {
namespace {

constexpr std::size_t kHeader = 8;
constexpr std::uint32_t kStreamStart = 0xffffffff;  // request_bytes of the header that opens a stream

std::array<std::byte, kHeader> header(std::uint32_t request_bytes, std::uint32_t reply_bytes) {
    std::array<std::byte, kHeader> h{};
    std::memcpy(h.data(), &request_bytes, 4);
    std::memcpy(h.data() + 4, &reply_bytes, 4);
    return h;
}

std::vector<std::byte> request(std::size_t request_bytes, std::size_t reply_bytes) {
    std::vector<std::byte> r(kHeader + request_bytes, std::byte{0x5a});
    const auto h = header(static_cast<std::uint32_t>(request_bytes), static_cast<std::uint32_t>(reply_bytes));
    std::copy(h.begin(), h.end(), r.begin());
    return r;
}

// A stream: read whatever arrives, as fast as it arrives, until the sender
// shuts its side down; then one byte says everything was read.
void sink(int fd, std::vector<std::byte>& scratch) {
    while (true) {
        const ssize_t n = ::recv(fd, scratch.data(), scratch.size(), 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
    }
    const std::array<std::byte, 1> ack{};
    (void)sock::send_all(fd, ack);
}

// One connection: read each request whole, answer with the asked bytes.
void serve(int fd) {
    std::vector<std::byte> scratch(1 << 20), reply;
    std::array<std::byte, kHeader> head{};
    while (sock::recv_all(fd, head)) {
        std::uint32_t req = 0, rep = 0;
        std::memcpy(&req, head.data(), 4);
        std::memcpy(&rep, head.data() + 4, 4);
        if (req == kStreamStart) return sink(fd, scratch);
        for (std::size_t left = req; left > 0;) {
            const std::size_t n = std::min(left, scratch.size());
            if (!sock::recv_all(fd, std::span(scratch).first(n))) return;
            left -= n;
        }
        if (rep == 0) continue;
        if (reply.size() < rep) reply.resize(rep);
        if (!sock::send_all(fd, std::span(reply).first(rep))) return;
    }
}

Clock::time_point deadline_of(const StopRule& stop) {
    return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(stop.seconds));
}

bool should_stop(Clock::time_point now, Clock::time_point deadline, OpBudget& budget) {
    return interrupted().load(std::memory_order_relaxed) || now >= deadline || !budget.claim();
}

struct ThreadResult {
    Histogram latency;
    std::uint64_t ops = 0;
    std::string error;
    Clock::time_point last_done{};
    OpCounter counter;
};

// One client connection keeping spec.qd requests in flight. Replies come
// back in order, so the oldest send time belongs to the next reply.
void round_trip_thread(const Endpoint& ep, const RoundTripSpec& spec, Clock::time_point deadline,
                       OpBudget& budget, ThreadResult& out) {
    int fd = sock::connect_to(ep.host, ep.port, out.error);
    if (fd < 0) return;
    const auto req = request(spec.request_bytes, spec.reply_bytes);
    std::vector<std::byte> reply(spec.reply_bytes);
    std::vector<Clock::time_point> sent(spec.qd);
    std::size_t head = 0, inflight = 0;
    auto issue = [&](Clock::time_point now) {
        if (should_stop(now, deadline, budget)) return true;
        sent[(head + inflight) % spec.qd] = Clock::now();
        ++inflight;
        return sock::send_all(fd, req);
    };
    bool ok = true;
    while (ok && inflight < spec.qd && !should_stop(Clock::now(), deadline, budget)) {
        sent[inflight++] = Clock::now();
        ok = sock::send_all(fd, req);
    }
    while (ok && inflight > 0) {
        if (!(ok = sock::recv_all(fd, reply))) break;
        const auto now = Clock::now();
        out.latency.record(now - sent[head]);
        head = (head + 1) % spec.qd;
        --inflight;
        out.last_done = now;
        out.counter.done.store(++out.ops, std::memory_order_relaxed);
        ok = issue(now);
    }
    if (!ok) out.error = "baseline connection to " + ep.host + ":" + std::to_string(ep.port) + " failed";
    ::close(fd);
}

// One client thread with spec.fanout connections: each operation sends the
// request on all of them, then polls until spec.quorum answered it. A
// connection's replies come in order, so one still owing an older reply
// answers that first (read, not counted).
void fanout_thread(const Endpoint& ep, const RoundTripSpec& spec, Clock::time_point deadline, OpBudget& budget,
                   ThreadResult& out) {
    std::vector<int> fds;
    for (unsigned i = 0; i < spec.fanout; ++i) {
        const int fd = sock::connect_to(ep.host, ep.port, out.error);
        if (fd < 0) break;
        fds.push_back(fd);
    }
    const auto req = request(spec.request_bytes, spec.reply_bytes);
    std::vector<std::byte> reply(spec.reply_bytes);
    std::vector<unsigned> owed(fds.size(), 0);
    std::vector<pollfd> polled;
    std::vector<std::size_t> which;
    bool ok = fds.size() == spec.fanout;
    while (ok && !should_stop(Clock::now(), deadline, budget)) {
        const auto start = Clock::now();
        for (std::size_t i = 0; ok && i < fds.size(); ++i) ok = sock::send_all(fds[i], req), ++owed[i];
        unsigned answered = 0;
        while (ok && answered < spec.quorum) {
            polled.clear();
            which.clear();
            for (std::size_t i = 0; i < fds.size(); ++i)
                if (owed[i] > 0) polled.push_back({fds[i], POLLIN, 0}), which.push_back(i);
            const int rc = ::poll(polled.data(), polled.size(), 10000);
            if (rc < 0 && errno == EINTR) continue;
            if (rc <= 0) {
                ok = false;
                break;
            }
            for (std::size_t k = 0; ok && k < polled.size(); ++k) {
                if (polled[k].revents == 0) continue;
                const std::size_t i = which[k];
                ok = sock::recv_all(fds[i], reply);
                if (ok && --owed[i] == 0) ++answered;
            }
        }
        if (!ok) break;
        const auto now = Clock::now();
        out.latency.record(now - start);
        out.last_done = now;
        out.counter.done.store(++out.ops, std::memory_order_relaxed);
    }
    if (!ok && out.error.empty())
        out.error = "fan-out baseline connection to " + ep.host + ":" + std::to_string(ep.port) + " failed";
    for (int fd : fds) ::close(fd);
}

} // namespace

bool parse_endpoint(const std::string& s, Endpoint& out) {
    const auto colon = s.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == s.size()) return false;
    try {
        std::size_t used = 0;
        const unsigned long port = std::stoul(s.substr(colon + 1), &used);
        if (used != s.size() - colon - 1 || port > 65535) return false;
        out.host = s.substr(0, colon);
        out.port = static_cast<std::uint16_t>(port);
        return true;
    } catch (...) {
        return false;
    }
}

std::unique_ptr<TcpBaselineServer> TcpBaselineServer::start(const Endpoint& at, std::string& error) {
    std::uint16_t bound = 0;
    int fd = sock::listen_on(at.host, at.port, bound, error);
    if (fd < 0) return nullptr;
    return std::unique_ptr<TcpBaselineServer>(new TcpBaselineServer(fd, bound));
}

TcpBaselineServer::TcpBaselineServer(int fd, std::uint16_t port) : listen_fd_(fd), port_(port) {
    acceptor_ = std::thread([this] { accept_loop(); });
}

TcpBaselineServer::~TcpBaselineServer() { stop(); }

void TcpBaselineServer::accept_loop() {
    while (true) {
        int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            return;  // shut down by stop()
        }
        sock::set_nodelay(fd);
        std::lock_guard lock(mu_);
        if (stopped_) {
            ::close(fd);
            return;
        }
        session_fds_.push_back(fd);
        sessions_.emplace_back([fd] { serve(fd); });
    }
}

void TcpBaselineServer::stop() noexcept {
    {
        std::lock_guard lock(mu_);
        if (stopped_) return;
        stopped_ = true;
        // shutdown() wakes the threads blocked in accept and recv; the fds
        // are closed only after their threads are gone.
        ::shutdown(listen_fd_, SHUT_RDWR);
        for (int fd : session_fds_) ::shutdown(fd, SHUT_RDWR);
    }
    if (acceptor_.joinable()) acceptor_.join();
    for (auto& t : sessions_) t.join();
    for (int fd : session_fds_) ::close(fd);
    ::close(listen_fd_);
}

Measurement tcp_round_trip(const Endpoint& server, const RoundTripSpec& spec, const StopRule& stop,
                           Progress& progress, const std::string& label) {
    OpBudget budget(stop.ops);
    std::vector<std::unique_ptr<ThreadResult>> results;
    for (unsigned t = 0; t < spec.threads; ++t) results.push_back(std::make_unique<ThreadResult>());
    progress.begin(label, [&results] {
        std::uint64_t n = 0;
        for (const auto& r : results) n += r->counter.done.load(std::memory_order_relaxed);
        return n;
    });
    const auto start = Clock::now();
    const auto deadline = deadline_of(stop);
    const double cpu_start = process_cpu();
    std::vector<std::thread> threads;
    for (auto& r : results)
        threads.emplace_back([&, rp = r.get()] {
            if (spec.fanout > 1) fanout_thread(server, spec, deadline, budget, *rp);
            else round_trip_thread(server, spec, deadline, budget, *rp);
        });
    for (auto& t : threads) t.join();
    const double cpu = process_cpu() - cpu_start;
    progress.end();

    Measurement m;
    Clock::time_point end = start;
    for (const auto& r : results) {
        m.latency.merge(r->latency);
        m.ops += r->ops;
        if (!r->error.empty()) {
            ++m.errors;
            if (m.first_error.empty()) m.first_error = r->error;
        }
        end = std::max(end, r->last_done);
    }
    m.bytes = m.ops * std::max(spec.request_bytes, spec.reply_bytes);
    m.seconds = std::chrono::duration<double>(end - start).count();
    m.cpu_seconds = cpu;  // an in-process echo server's too; an external one's is not seen
    return m;
}

Measurement tcp_stream(const Endpoint& server, std::size_t message_bytes, const StopRule& stop,
                       Progress& progress, const std::string& label) {
    Measurement m;
    int fd = sock::connect_to(server.host, server.port, m.first_error);
    if (fd < 0) return m.errors = 1, m;
    OpBudget budget(stop.ops);
    OpCounter counter;
    progress.begin(label, [&counter] { return counter.done.load(std::memory_order_relaxed); });
    const std::vector<std::byte> msg(message_bytes, std::byte{0x5a});
    std::array<std::byte, 1> ack{};
    const auto start = Clock::now();
    const auto deadline = deadline_of(stop);
    bool ok = sock::send_all(fd, header(kStreamStart, 0));
    while (ok && !should_stop(Clock::now(), deadline, budget)) {
        ok = sock::send_all(fd, msg);
        if (ok) counter.done.store(++m.ops, std::memory_order_relaxed);
    }
    ok = ok && ::shutdown(fd, SHUT_WR) == 0 && sock::recv_all(fd, ack);
    m.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    progress.end();
    ::close(fd);
    if (!ok) m.errors = 1, m.first_error = "baseline stream to " + server.host + " failed";
    m.bytes = m.ops * message_bytes;
    return m;
}

} // namespace rpmbench
