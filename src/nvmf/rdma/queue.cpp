// One NVMe/RDMA queue pair on the target (queue.hpp): its
// completion queue and queue pair, and serving it: capsules in order
// through QueueCommands, completions accounted.
#include "nvmf/rdma/queue.hpp"
#include "core/log.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

namespace rpm::nvmf::target {

namespace {

std::string peer_of(rdma_cm_id* id) {
    const auto* sa = ::rdma_get_peer_addr(id);
    char buf[INET6_ADDRSTRLEN] = "?";
    if (sa->sa_family == AF_INET)
        ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(sa)->sin_addr, buf, sizeof buf);
    else if (sa->sa_family == AF_INET6)
        ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr, buf, sizeof buf);
    return buf;
}

} // namespace

RdmaQueue::RdmaQueue(const RdmaEnv& env, rdma_cm_id* id, std::shared_ptr<CapsulePool> pool,
                     const rdma_wire::CmRequest& req)
    : QueueBase(env.queue, peer_of(id)), env_(env), id_(id), pool_(std::move(pool)) {
    if (!build(req) && error_.empty()) error_ = "cannot make the queue pair";
    commands_.limit_sqsize(req.hsqsize);
}

bool RdmaQueue::build(const rdma_wire::CmRequest& req) {
    const auto& v = *env_.v;
    auto fail = [this](const char* what) {
        error_ = std::string(what) + ": " + std::strerror(errno ? errno : EIO);
        return false;
    };
    // A command at a time holds a READ, or a WRITE and its response SEND;
    // responses of earlier commands may still be in flight: two per entry.
    send_depth_ = 2 * req.depth() + 2;
    if (!(channel_ = v.create_comp_channel(id_->verbs))) return fail("ibv_create_comp_channel");
    if (::fcntl(channel_->fd, F_SETFL, ::fcntl(channel_->fd, F_GETFL) | O_NONBLOCK) != 0) return fail("fcntl");
    if (!(cq_ = v.create_cq(id_->verbs, int(send_depth_ + req.depth() + 1), nullptr, channel_, 0)))
        return fail("ibv_create_cq");
    if (v.req_notify_cq(cq_, 0) != 0) return fail("ibv_req_notify_cq");
    ibv_qp_init_attr_ex qa{};
    qa.qp_type = IBV_QPT_RC;
    qa.send_cq = cq_;
    qa.recv_cq = cq_;
    qa.srq = pool_->srq();
    qa.cap.max_send_wr = send_depth_;
    qa.cap.max_send_sge = 1;
    qa.cap.max_inline_data = wire::cqe_len;  // responses go inline: no buffer to keep until they complete
    qa.comp_mask = IBV_QP_INIT_ATTR_PD;
    qa.pd = pool_->pd();
    if (v.create_qp_ex(id_, &qa) != 0) return fail("rdma_create_qp_ex");
    qp_ = true;
    if ((wake_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0) return fail("eventfd");
    if ((epoll_ = ::epoll_create1(EPOLL_CLOEXEC)) < 0) return fail("epoll_create1");
    for (int fd : {channel_->fd, wake_}) {
        epoll_event e{};
        e.events = EPOLLIN;
        e.data.fd = fd;
        if (::epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &e) != 0) return fail("epoll_ctl");
    }
    return true;
}

void RdmaQueue::release_id() {
    if (qp_) env_.v->destroy_qp(id_);
    qp_ = false;
    id_ = nullptr;
}

RdmaQueue::~RdmaQueue() {
    const auto& v = *env_.v;
    if (qp_) v.destroy_qp(id_);
    // The queue pair is gone: capsules it took from the SRQ and nobody ran
    // are in arrived_ or still in the CQ; their buffers go back.
    if (cq_) {
        ibv_wc wc[16];
        int n;
        while ((n = v.poll_cq(cq_, 16, wc)) > 0)
            for (int i = 0; i < n; ++i)
                if (!is_send(wc[i].wr_id)) pool_->repost(std::uint32_t(wc[i].wr_id));
    }
    for (const auto& a : arrived_) pool_->repost(a.slot);
    consume_events();
    if (cq_) {
        if (unacked_events_) v.ack_cq_events(cq_, unacked_events_);
        v.destroy_cq(cq_);
    }
    if (channel_) v.destroy_comp_channel(channel_);
    for (auto* b : {&in_, &out_})
        if (b->mr) v.dereg_mr(b->mr);
    if (epoll_ >= 0) ::close(epoll_);
    if (wake_ >= 0) ::close(wake_);
    if (id_) v.destroy_id(id_);
}

int RdmaQueue::fd() const { return epoll_; }

void RdmaQueue::close() {
    closing_ = true;
    const std::uint64_t one = 1;
    if (wake_ >= 0) [[maybe_unused]] auto n = ::write(wake_, &one, sizeof one);
}

void RdmaQueue::consume_events() {
    if (!channel_) return;
    ibv_cq* cq = nullptr;
    void* ctx = nullptr;
    while (env_.v->get_cq_event(channel_, &cq, &ctx) == 0) ++unacked_events_;
    // Acked in batches: ibv_ack_cq_events takes a mutex.
    if (unacked_events_ >= 64) {
        env_.v->ack_cq_events(cq_, unacked_events_);
        unacked_events_ = 0;
    }
    std::uint64_t n = 0;
    if (wake_ >= 0) [[maybe_unused]] auto r = ::read(wake_, &n, sizeof n);
}

bool RdmaQueue::serve() {
    if (ended_) return false;
    consume_events();
    for (;;) {
        if (closing_.load()) return end();
        if (!arrived_.empty()) {
            // Take what else has come first: the round runs it together.
            if (poll_once() < 0 || !run_arrivals()) return end();
            continue;
        }
        int n = poll_once();
        if (n < 0) return end();
        if (n > 0) continue;
        // Nothing left: re-arm, and look once more for what came meanwhile.
        if (env_.v->req_notify_cq(cq_, 0) != 0) return end();
        n = poll_once();
        if (n < 0) return end();
        if (n == 0) return true;
    }
}

int RdmaQueue::poll_once() {
    ibv_wc wc[16];
    const int n = env_.v->poll_cq(cq_, 16, wc);
    if (n < 0) return -1;
    bool failed = false;
    for (int i = 0; i < n; ++i) {
        const auto& w = wc[i];
        // A failed completion's opcode is undefined: the wr_id says what it was.
        const bool recv = !is_send(w.wr_id);
        if (w.status != IBV_WC_SUCCESS) {
            if (!closing_.load())
                rpm::detail::logf(LogLevel::debug, "nvmf rdma", "qid %u: %s completion failed: %s", commands_.qid(),
                             recv ? "receive" : "send", ::ibv_wc_status_str(w.status));
            if (recv) pool_->repost(std::uint32_t(w.wr_id));
            else on_send_done(w.wr_id, false);
            failed = true;
            continue;
        }
        if (recv) arrived_.push_back({std::uint32_t(w.wr_id), w.byte_len});
        else on_send_done(w.wr_id, true);
    }
    return failed ? -1 : n;
}

bool RdmaQueue::wait_cq() {
    for (;;) {
        if (closing_.load()) return false;
        if (env_.v->req_notify_cq(cq_, 0) != 0) return false;
        const int n = poll_once();
        if (n != 0) return n > 0;
        pollfd p{epoll_, POLLIN, 0};
        ::poll(&p, 1, 1000);
        consume_events();
    }
}

bool RdmaQueue::run_arrivals() {
    round_.assign(arrived_.begin(), arrived_.end());
    arrived_.clear();
    capsules_.clear();
    bool whole = true;
    for (const auto& a : round_) {
        const auto capsule = pool_->capsule(a.slot, a.len);
        if (capsule.size() < wire::sqe_len) {
            // Not even an SQE: nothing to answer (no cid); the binding leaves
            // the queue to the target, which ends it after the ones before.
            rpm::detail::logf(LogLevel::debug, "nvmf rdma", "qid %u: a capsule of %u bytes", commands_.qid(), a.len);
            whole = false;
            break;
        }
        Capsule c;
        std::memcpy(c.sqe.b.data(), capsule.data(), wire::sqe_len);
        c.data = rdma_wire::decode_sgl(c.sqe, capsule.subspan(wire::sqe_len)).data;
        capsules_.push_back(c);
    }
    const bool ok = commands_.on_commands(capsules_);
    // The round ran: its in-capsule data is no longer read.
    bool reposted = true;
    for (const auto& a : round_) reposted = pool_->repost(a.slot) && reposted;
    return ok && whole && reposted;
}

void RdmaQueue::drain_sends() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
    while (sends_out_ > 0 && !closing_.load() && std::chrono::steady_clock::now() < deadline) {
        const int n = poll_once();
        if (n < 0) return;
        if (n == 0) ::poll(nullptr, 0, 1);
    }
}

bool RdmaQueue::end() {
    if (!ended_) {
        ended_ = true;
        drain_sends();
        commands_.release();
        for (const auto& a : arrived_) pool_->repost(a.slot);
        arrived_.clear();
        if (id_) env_.v->disconnect(id_);
    }
    return false;
}

} // namespace rpm::nvmf::target
