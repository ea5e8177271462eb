// The floor's client: connects, takes the server's region descriptor and
// measures each pattern with exactly the work requests rpm posts for it,
// one operation at a time, busy-polling. Every operation is timed with
// std::chrono::steady_clock, as rpm-bench times rpm's, so the two are
// comparable in the same VM run whatever the clock costs there.
#include "floor.hpp"
#include "calls.hpp"
#include "transport/rdma/handles.hpp"
#include "transport/rdma/loop.hpp"

#include <algorithm>
#include <cstring>
#include <ctime>
#include <memory>

namespace rpm::floor {
namespace {

using rdma::Api;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kOffset = 4096;  // where the patterns write and read in the region

struct Client {
    explicit Client(const Api& a) : api(a), peer(a), data_mr(a), msg_mr(a), remote(a), conn(a) {}
    const Api& api;
    rdma::PeerHandle peer;
    rdma::MrHandle data_mr, msg_mr;
    rdma::RemoteMrHandle remote;
    rdma::ConnHandle conn;
    rdma::Cq* cq = nullptr;
    std::vector<std::byte> data, msgs;
    std::size_t remote_size = 0;
    unsigned sends = 0;
    Clock::time_point deadline;
};

Result<void> repost(Client& c, std::uint32_t slot) {
    if (int ret = c.api.recv(c.conn.get(), c.msg_mr.get(), slot * kMsgSize, kMsgSize, slot_tag(slot)); ret != 0)
        return rdma::call_failure(errc::io_error, "reposting a receive", "recv", ret);
    return {};
}

/// Wait for the next receive (consuming any send completions on the way).
Result<ibv_wc> next_recv(Client& c) {
    for (;;) {
        ibv_wc wc[4];
        auto got = poll_some(c.api, c.cq, wc, 1, c.deadline);
        if (!got) return got.error();
        if (wc[0].opcode == IBV_WC_RECV) return wc[0];
    }
}

Result<void> register_buffers(Client& c, const ClientOptions& o) {
    c.data.resize(std::max<std::size_t>(o.size, 8));
    c.msgs.resize((kRecvs + 1) * kMsgSize);
    const int data_usage = rdma::kUsageWriteSrc | rdma::kUsageReadDst;
    int ret = c.api.mr_reg(c.peer.get(), c.data.data(), c.data.size(), data_usage, c.data_mr.out());
    if (ret == 0)
        ret = c.api.mr_reg(c.peer.get(), c.msgs.data(), c.msgs.size(), rdma::kUsageSend | rdma::kUsageRecv,
                           c.msg_mr.out());
    if (ret != 0) return rdma::call_failure(errc::io_error, "registering", "mr_reg", ret);
    return {};
}

Result<void> open_connection(Client& c, const Endpoint& e, const ClientOptions& o) {
    const Api& api = c.api;
    if (auto r = open_peer(api, e.addr, rdma::kContextRemote, c.peer.out()); !r) return r;
    if (auto r = register_buffers(c, o); !r) return r;
    rdma::ConnCfgHandle cfg(api);
    if (auto r = make_conn_cfg(api, cfg.out()); !r) return r;
    rdma::ConnReqHandle req(api);
    const std::string port = std::to_string(e.port);
    if (int ret = api.conn_req_new(c.peer.get(), e.addr.c_str(), port.c_str(), cfg.get(), req.out()); ret != 0)
        return rdma::call_failure(errc::io_error, "connecting to " + e.addr + ":" + port, "conn_req_new", ret);
    for (std::uint32_t i = 0; i < kRecvs; ++i)
        if (int ret = api.conn_req_recv(req.get(), c.msg_mr.get(), i * kMsgSize, kMsgSize, slot_tag(i)); ret != 0)
            return rdma::call_failure(errc::io_error, "connecting", "conn_req_recv", ret);
    if (int ret = api.conn_req_connect(req.consume(), nullptr, c.conn.out()); ret != 0)
        return rdma::call_failure(errc::io_error, "connecting", "conn_req_connect", ret);
    if (auto r = await_established(api, c.conn.get()); !r)
        return Error(r.error().code(), r.error().detail() + " (is rpm-floor --listen running?)");
    if (int ret = api.conn_get_cq(c.conn.get(), &c.cq); ret != 0)
        return rdma::call_failure(errc::io_error, "connecting", "conn_get_cq", ret);
    return {};
}

/// The server's first message: its region's descriptor and peer configuration.
Result<void> take_hello(Client& c) {
    auto wc = next_recv(c);
    if (!wc) return wc.error();
    const auto slot = static_cast<std::uint32_t>(wc->wr_id);
    const std::byte* in = c.msgs.data() + slot * kMsgSize;
    std::uint32_t head[3];
    if (wc->byte_len < sizeof head) return Error(errc::io_error, "a short hello");
    std::memcpy(head, in, sizeof head);
    if (head[0] != kHelloMagic || sizeof head + head[1] + head[2] > wc->byte_len)
        return Error(errc::io_error, "the server is not rpm-floor (bad hello)");
    const Api& api = c.api;
    int ret = api.mr_remote_from_descriptor(in + sizeof head, head[1], c.remote.out());
    if (ret == 0) ret = api.mr_remote_get_size(c.remote.get(), &c.remote_size);
    if (ret != 0) return rdma::call_failure(errc::io_error, "the region's descriptor", "mr_remote_from_descriptor", ret);
    rdma::PeerCfgHandle cfg(api);
    ret = api.peer_cfg_from_descriptor(in + sizeof head + head[1], head[2], cfg.out());
    if (ret == 0) ret = api.conn_apply_remote_peer_cfg(c.conn.get(), cfg.get());
    if (ret != 0) return rdma::call_failure(errc::io_error, "the peer configuration", "conn_apply_remote_peer_cfg", ret);
    return repost(c, slot);
}

} // namespace

namespace {

constexpr int kDefer = rdma::kDeferDoorbell;

Result<void> check(int ret, const char* call) {
    if (ret == 0) return {};
    return rdma::call_failure(errc::io_error, "posting", call, ret);
}

/// Post one operation of the pattern: exactly rpm's work requests for it.
Result<void> post_op(Client& c, Pattern p, std::size_t size) {
    const Api& api = c.api;
    rdma::Conn* const conn = c.conn.get();
    switch (p) {
    case Pattern::write:
        return check(api.write(conn, c.remote.get(), kOffset, c.data_mr.get(), 0, size, rdma::kCompletionAlways, nullptr), "write");
    case Pattern::read:
        return check(api.read(conn, c.data_mr.get(), 0, c.remote.get(), kOffset, size, rdma::kCompletionAlways, nullptr), "read");
    case Pattern::read_after_write: {
        // rpm's persist by read_after_write: the write unsignaled, the
        // 8-byte read behind it signaled, one doorbell.
        int ret = api.write(conn, c.remote.get(), kOffset, c.data_mr.get(), 0, size, rdma::kCompletionOnError | kDefer, nullptr);
        if (ret == 0) ret = api.flush(conn, c.remote.get(), kOffset, size, rdma::kFlushPersistent, rdma::kCompletionAlways | kDefer, nullptr);
        if (ret == 0) ret = api.ring(conn);
        return check(ret, "write+flush+ring");
    }
    case Pattern::send_flush: {
        // rpm's persist by send_flush: the write unsignaled, a send naming
        // the range behind it (one doorbell); done when the answer arrives.
        const FlushRequest req{kOffset, size};
        std::memcpy(c.msgs.data() + kSendOffset, &req, sizeof req);
        const int signal = (c.sends++ % kSignalEvery == 0) ? rdma::kCompletionAlways : rdma::kCompletionOnError;
        int ret = api.write(conn, c.remote.get(), kOffset, c.data_mr.get(), 0, size, rdma::kCompletionOnError | kDefer, nullptr);
        if (ret == 0) ret = api.send(conn, c.msg_mr.get(), kSendOffset, sizeof req, signal | kDefer, nullptr);
        if (ret == 0) ret = api.ring(conn);
        return check(ret, "write+send+ring");
    }
    case Pattern::native_flush: {
        // rpm's persist by native_flush: the write unsignaled, one FLUSH
        // (persistent, the range) signaled, one doorbell; no server work.
        // kErrNoSupp: the device, this build or the server's registration
        // cannot take a FLUSH (the message says which call refused).
        int ret = api.write(conn, c.remote.get(), kOffset, c.data_mr.get(), 0, size, rdma::kCompletionOnError | kDefer, nullptr);
        if (ret == 0)
            ret = api.flush_native(conn, c.remote.get(), kOffset, size, rdma::kFlushPersistent, rdma::kCompletionAlways | kDefer, nullptr);
        if (ret == 0) ret = api.ring(conn);
        return check(ret, "write+flush_native+ring");
    }
    }
    return Error(errc::invalid_argument, "unknown pattern");
}

/// Poll once: has the posted operation completed? (send_flush: its answer
/// arrived, and the receive is posted again; a send's own completion, one
/// in kSignalEvery, is consumed on the way.)
Result<bool> op_done(Client& c, Pattern p) {
    ibv_wc wc[1];
    auto got = poll_once(c.api, c.cq, wc, 1);
    if (!got) return got.error();
    if (*got == 0) return false;
    if (p != Pattern::send_flush) return true;
    if (wc[0].opcode != IBV_WC_RECV) return false;
    if (auto r = repost(c, static_cast<std::uint32_t>(wc[0].wr_id)); !r) return r.error();
    return true;
}

/// One operation on every connection, from the first post to the
/// quorum-th completion. RETURN VALUE: its microseconds; the rest of the
/// completions are awaited (untimed) so the next operation starts clean.
std::uint64_t g_mixed = 1;  // run_calls' result, kept so the calls stay

Result<double> one_op(std::vector<std::unique_ptr<Client>>& cs, Pattern p, std::size_t size, unsigned quorum,
                      unsigned calls) {
    const auto t0 = Clock::now();
    if (calls > 0) g_mixed = run_calls(calls, g_mixed);
    for (auto& c : cs)
        if (auto r = post_op(*c, p, size); !r) return r.error();
    std::uint64_t pending = (std::uint64_t{1} << cs.size()) - 1;  // at most kMaxServers
    unsigned done = 0;
    double us = 0;
    for (unsigned spins = 0; pending != 0; ++spins) {
        for (std::size_t i = 0; i < cs.size(); ++i) {
            if ((pending & (std::uint64_t{1} << i)) == 0) continue;
            auto d = op_done(*cs[i], p);
            if (!d) return d.error();
            if (!*d) continue;
            pending &= ~(std::uint64_t{1} << i);
            if (++done == quorum) us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
        }
        if ((spins & 4095) == 4095 && Clock::now() > cs.front()->deadline)
            return Error(errc::io_error, "no completion before the time limit");
    }
    return us;
}

double cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

Figures summarize(Pattern p, unsigned round, std::size_t size, std::vector<double>& us, double cpu_s,
                  unsigned servers, unsigned quorum) {
    std::sort(us.begin(), us.end());
    auto at = [&](double q) { return us[std::min(us.size() - 1, static_cast<std::size_t>(q * static_cast<double>(us.size())))]; };
    double sum = 0;
    for (double v : us) sum += v;
    const auto n = static_cast<double>(us.size());
    return Figures{p,       round,   size,     static_cast<unsigned>(us.size()), servers, quorum, at(0.5), at(0.9),
                   at(0.99), sum / n, cpu_s * 1e6 / n};
}

Result<Figures> run_pattern(std::vector<std::unique_ptr<Client>>& cs, Pattern p, const ClientOptions& o,
                            unsigned round, unsigned quorum) {
    for (unsigned i = 0; i < o.warmup; ++i)
        if (auto r = one_op(cs, p, o.size, quorum, o.calls); !r) return r.error();
    std::vector<double> us;
    us.reserve(o.ops);
    const double cpu0 = cpu_seconds();
    for (unsigned i = 0; i < o.ops; ++i) {
        auto r = one_op(cs, p, o.size, quorum, o.calls);
        if (!r) return r.error();
        us.push_back(*r);
    }
    return summarize(p, round, o.size, us, cpu_seconds() - cpu0, static_cast<unsigned>(cs.size()), quorum);
}

} // namespace

Result<std::vector<Figures>> measure(const ClientOptions& o) {
    if (o.ops == 0 || o.rounds == 0 || o.patterns.empty())
        return Error(errc::invalid_argument, "--ops, --rounds and --patterns must not be empty or 0");
    if (o.size == 0 || o.size > kMaxSize)
        return Error(errc::invalid_argument, "--size must be 1 to " + std::to_string(kMaxSize) + " bytes");
    if (o.servers.empty() || o.servers.size() > kMaxServers)
        return Error(errc::invalid_argument, "--connect names 1 to " + std::to_string(kMaxServers) + " servers");
    if (o.calls > kMaxCalls)
        return Error(errc::invalid_argument, "--calls must be 0 to " + std::to_string(kMaxCalls));
    // The calls' own time, before any connection: the code hot, nothing else running.
    const double alone_us = o.calls > 0 ? calls_alone_ns(o.calls) / 1000 : 0;
    const auto n = static_cast<unsigned>(o.servers.size());
    const unsigned quorum = o.quorum == 0 ? n : o.quorum;
    if (quorum > n)
        return Error(errc::invalid_argument, "--quorum " + std::to_string(quorum) + " is more than the " +
                                                 std::to_string(n) + " servers --connect names");
    std::vector<std::unique_ptr<Client>> cs;
    const auto deadline = Clock::now() + o.timeout;
    for (const Endpoint& e : o.servers) {
        auto c = std::make_unique<Client>(rdma::real_api());
        c->deadline = deadline;
        const std::string where = e.addr + ":" + std::to_string(e.port);
        if (auto r = open_connection(*c, e, o); !r) return r.error();
        if (auto r = take_hello(*c); !r) return Error(r.error().code(), where + ": " + r.error().detail());
        if (kOffset + o.size > c->remote_size)
            return Error(errc::invalid_argument, where + ": the server's region (" + std::to_string(c->remote_size) +
                                                     " bytes) is too small for --size " + std::to_string(o.size));
        cs.push_back(std::move(c));
    }
    std::vector<Figures> out;
    for (unsigned round = 1; round <= o.rounds; ++round)
        for (Pattern p : o.patterns) {
            auto f = run_pattern(cs, p, o, round, quorum);
            if (!f) return Error(f.error().code(), std::string(name(p)) + ": " + f.error().detail());
            f->calls = o.calls;
            f->calls_alone_us = alone_us;
            out.push_back(*f);
        }
    for (auto& c : cs) c->conn.disconnect();
    return out;
}

} // namespace rpm::floor
