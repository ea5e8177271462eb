// The floor's server: registers the region, accepts one client, sends it
// the region's descriptor and then answers send_flush requests from its
// busy-polling thread: persist the named range (pmem2's persist: CLWB or
// CLFLUSHOPT and SFENCE on PM), repost the receive, send 8 bytes back.
#include "floor.hpp"
#include "transport/rdma/handles.hpp"
#include "transport/rdma/loop.hpp"
#include "transport/rdma/server.hpp"

#include <rpm/pmem.hpp>

#include <sys/mman.h>

#include <poll.h>

#include <cstdio>
#include <cstring>
#include <optional>

namespace rpm::floor {
namespace {

using rdma::Api;
using Clock = std::chrono::steady_clock;

/// The served memory: a PM region, or anonymous memory (no persist step).
struct Memory {
    std::optional<pmem::Region> region;
    void* anon = nullptr;
    std::size_t anon_size = 0;
    ~Memory() {
        if (anon != nullptr) munmap(anon, anon_size);
    }
    [[nodiscard]] std::byte* base() const {
        return static_cast<std::byte*>(region ? region->data() : anon);
    }
    [[nodiscard]] std::size_t size() const { return region ? region->size() : anon_size; }
    void persist(const void* p, std::size_t n) const {
        if (region) region->persist(p, n);
    }
};

Result<void> open_memory(const ServerOptions& o, Memory& m) {
    if (!o.region.empty()) {
        auto r = pmem::Region::open(o.region);
        if (!r) return Error(r.error().code(), "--region " + o.region + ": " + r.error().detail());
        m.region.emplace(std::move(*r));
        return {};
    }
    void* p = mmap(nullptr, o.size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return Error(errc::io_error, "mmap of " + std::to_string(o.size) + " bytes failed");
    m.anon = p;
    m.anon_size = o.size;
    return {};
}

struct Served {
    const Api& api;
    rdma::ConnHandle conn;
    rdma::Cq* cq = nullptr;
    rdma::LocalMr* msg_mr = nullptr;
    std::byte* msgs = nullptr;
    unsigned sends = 0;
};

Result<void> post_send(Served& s, std::size_t len) {
    const int flags = (s.sends++ % kSignalEvery == 0) ? rdma::kCompletionAlways : rdma::kCompletionOnError;
    if (int ret = s.api.send(s.conn.get(), s.msg_mr, kSendOffset, len, flags, nullptr); ret != 0)
        return rdma::call_failure(errc::io_error, "answering", "send", ret);
    return {};
}

Result<void> send_hello(Served& s, const Api& api, rdma::LocalMr* region_mr) {
    std::size_t mr_n = 0;
    if (int ret = api.mr_get_descriptor_size(region_mr, &mr_n); ret != 0)
        return rdma::call_failure(errc::io_error, "the region", "mr_get_descriptor_size", ret);
    auto cfg = rdma::peer_cfg_descriptor(api, flush::Method::read_after_write);
    if (!cfg) return cfg.error();
    const std::uint32_t head[3] = {kHelloMagic, static_cast<std::uint32_t>(mr_n),
                                   static_cast<std::uint32_t>(cfg->size())};
    if (sizeof head + mr_n + cfg->size() > kMsgSize) return Error(errc::io_error, "descriptors too large");
    std::byte* out = s.msgs + kSendOffset;
    std::memcpy(out, head, sizeof head);
    if (int ret = api.mr_get_descriptor(region_mr, out + sizeof head); ret != 0)
        return rdma::call_failure(errc::io_error, "the region", "mr_get_descriptor", ret);
    std::memcpy(out + sizeof head + mr_n, cfg->data(), cfg->size());
    return post_send(s, sizeof head + mr_n + cfg->size());
}

/// One received request: persist, repost the receive, answer.
Result<void> answer(Served& s, const Memory& m, const ibv_wc& wc) {
    const auto slot = static_cast<std::uint32_t>(wc.wr_id);
    if (slot >= kRecvs || wc.byte_len < sizeof(FlushRequest))
        return Error(errc::io_error, "a receive completion for no slot, or a short request");
    FlushRequest req{};
    std::memcpy(&req, s.msgs + slot * kMsgSize, sizeof req);
    if (req.offset > m.size() || req.length > m.size() - req.offset)
        return Error(errc::invalid_argument, "a flush request beyond the region");
    m.persist(m.base() + req.offset, req.length);
    if (int ret = s.api.recv(s.conn.get(), s.msg_mr, slot * kMsgSize, kMsgSize, slot_tag(slot)); ret != 0)
        return rdma::call_failure(errc::io_error, "reposting a receive", "recv", ret);
    return post_send(s, 8);
}

/// True once the client has gone (the connection's event says so).
bool client_gone(Served& s) {
    rdma::ConnEvent ev = rdma::kConnUndefined;
    return s.api.conn_next_event(s.conn.get(), &ev) == 0 && ev != rdma::kConnEstablished;
}

/// Sleep until the completion channel has an event (then acknowledge it
/// and re-arm), or 100 ms pass. RETURN VALUE: an error when the channel fails.
Result<void> sleep_on_channel(Served& s) {
    int fd = -1;
    if (int ret = s.api.cq_get_fd(s.cq, &fd); ret != 0) return rdma::call_failure(errc::io_error, "waiting", "cq_get_fd", ret);
    pollfd pfd{fd, POLLIN, 0};
    if (::poll(&pfd, 1, 100) != 1) return {};
    const int ret = s.api.cq_wait(s.cq);
    if (ret != 0 && ret != rdma::kErrNoCompletion) return rdma::call_failure(errc::io_error, "waiting", "cq_wait", ret);
    return {};
}

Result<void> serve_loop(Served& s, const Memory& m, Clock::time_point deadline, bool sleep) {
    ibv_wc wc[16];
    for (unsigned idle = 0;;) {
        int got = 0;
        const int ret = s.api.cq_get_wc(s.cq, 16, wc, &got);
        if (ret != 0 && ret != rdma::kErrNoCompletion)
            return rdma::call_failure(errc::io_error, "polling", "cq_get_wc", ret);
        for (int i = 0; i < got; ++i) {
            if (wc[i].status != IBV_WC_SUCCESS) {
                if (client_gone(s)) return {};
                return Error(errc::io_error, std::string("a work completion failed: ") +
                                                 ibv_wc_status_str(wc[i].status));
            }
            if (wc[i].opcode != IBV_WC_RECV) continue;
            if (auto r = answer(s, m, wc[i]); !r) return r;
        }
        if (got > 0) { idle = 0; continue; }
        // Sleeping: the channel is armed (at creation, and by each cq_wait),
        // so a completion after the empty poll above raises an event.
        if (sleep) {
            if (auto r = sleep_on_channel(s); !r) return r;
            if ((++idle & 63) != 0) continue;
        } else if ((++idle & 4095) != 0) {
            continue;
        }
        if (client_gone(s)) return {};
        if (Clock::now() > deadline) return Error(errc::io_error, "the server's --timeout ended the run");
    }
}

/// Wait for the one client's connection request (until `deadline`).
Result<void> next_request(const Api& api, rdma::Ep* ep, Clock::time_point deadline, rdma::ConnCfg* cfg,
                          rdma::ConnReqHandle& req) {
    int ep_fd = -1;
    if (int ret = api.ep_get_fd(ep, &ep_fd); ret != 0) return rdma::call_failure(errc::io_error, "listening", "ep_get_fd", ret);
    pollfd pfd{ep_fd, POLLIN, 0};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (::poll(&pfd, 1, rdma::to_ms(left)) != 1) return Error(errc::io_error, "no client connected within --timeout");
    if (int ret = api.ep_next_conn_req(ep, cfg, req.out()); ret != 0)
        return rdma::call_failure(errc::io_error, "accepting", "ep_next_conn_req", ret);
    return {};
}

/// Receives posted, the connection accepted and established.
Result<void> accept(Served& s, rdma::ConnReqHandle& req) {
    for (std::uint32_t i = 0; i < kRecvs; ++i)
        if (int ret = s.api.conn_req_recv(req.get(), s.msg_mr, i * kMsgSize, kMsgSize, slot_tag(i)); ret != 0)
            return rdma::call_failure(errc::io_error, "accepting", "conn_req_recv", ret);
    if (int ret = s.api.conn_req_connect(req.consume(), nullptr, s.conn.out()); ret != 0)
        return rdma::call_failure(errc::io_error, "accepting", "conn_req_connect", ret);
    if (auto r = await_established(s.api, s.conn.get()); !r) return r;
    if (int ret = s.api.conn_get_cq(s.conn.get(), &s.cq); ret != 0)
        return rdma::call_failure(errc::io_error, "accepting", "conn_get_cq", ret);
    return {};
}

} // namespace

Result<void> serve(const ServerOptions& o) {
    const Api& api = rdma::real_api();
    const auto deadline = Clock::now() + o.timeout;
    Memory mem;
    if (auto r = open_memory(o, mem); !r) return r;
    rdma::PeerHandle peer(api);
    if (auto r = open_peer(api, o.addr, rdma::kContextLocal, peer.out()); !r) return r;
    rdma::MrHandle region_mr(api), msg_mr(api);
    if (int ret = api.mr_reg(peer.get(), mem.base(), mem.size(), rdma::kRegionUsage, region_mr.out()); ret != 0)
        return rdma::call_failure(errc::io_error, "registering the region", "mr_reg", ret);
    std::vector<std::byte> msgs((kRecvs + 1) * kMsgSize);
    if (int ret = api.mr_reg(peer.get(), msgs.data(), msgs.size(), rdma::kUsageSend | rdma::kUsageRecv, msg_mr.out());
        ret != 0)
        return rdma::call_failure(errc::io_error, "registering the messages", "mr_reg", ret);
    rdma::EpHandle ep(api);
    const std::string port = std::to_string(o.port);
    if (int ret = api.ep_listen(peer.get(), o.addr.c_str(), port.c_str(), ep.out()); ret != 0)
        return rdma::call_failure(errc::io_error, "listening on " + o.addr + ":" + port, "ep_listen", ret);
    std::printf("rpm-floor: listening on %s:%s, %s (%zu bytes)\n", o.addr.c_str(), port.c_str(),
                o.region.empty() ? "anonymous memory, no persist step" : o.region.c_str(), mem.size());
    std::fflush(stdout);
    rdma::ConnCfgHandle cfg(api);
    if (auto r = make_conn_cfg(api, cfg.out()); !r) return r;
    rdma::ConnReqHandle req(api);
    if (auto r = next_request(api, ep.get(), deadline, cfg.get(), req); !r) return r;
    Served s{api, rdma::ConnHandle(api), nullptr, msg_mr.get(), msgs.data()};
    if (auto r = accept(s, req); !r) return r;
    if (auto r = send_hello(s, api, region_mr.get()); !r) return r;
    if (o.sleep) {
        int fd = -1;
        if (int ret = api.cq_get_fd(s.cq, &fd); ret != 0) return rdma::call_failure(errc::io_error, "accepting", "cq_get_fd", ret);
        if (auto r = rdma::set_nonblocking(fd); !r) return r;
    }
    return serve_loop(s, mem, deadline, o.sleep);
}

} // namespace rpm::floor
