// The fake rdma-core's state, its control functions and its Verbs table.
#include "fake_state.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <stdexcept>
#include <sys/eventfd.h>
#include <unistd.h>

namespace rpm::rdma::verbs {
namespace fake {
namespace detail {

State& st() {
    static State s;
    return s;
}

int enter(const char* call) {
    State& s = st();
    s.calls.emplace_back(call);
    const auto it = s.failures.find(call);
    if (it == s.failures.end()) return 0;
    const int err = it->second.err;
    if (--it->second.times <= 0) s.failures.erase(it);
    return err;
}

void violation(std::string what) { st().violations.push_back(std::move(what)); }

bool blocking(int fd) {
    const int flags = ::fcntl(fd, F_GETFL);
    return flags >= 0 && (flags & O_NONBLOCK) == 0;
}

int new_fd() {
    // Blocking, as rdma-core's are: the layer must set O_NONBLOCK itself.
    const int fd = ::eventfd(0, EFD_CLOEXEC);
    if (fd < 0) throw std::runtime_error(std::string("eventfd: ") + std::strerror(errno));
    return fd;
}

int fail_errno(int err) {
    errno = err;
    return -1;
}

} // namespace detail

using detail::st;

namespace {

// Every member of Verbs, so that a misspelt fail_next cannot pass silently.
constexpr const char* kCalls[] = {
    "create_event_channel", "destroy_event_channel", "create_id", "destroy_id", "bind_addr", "resolve_addr",
    "resolve_route", "listen", "get_cm_event", "ack_cm_event", "migrate_id", "create_qp_ex", "destroy_qp",
    "connect", "accept", "reject", "disconnect", "get_src_port", "query_qp", "modify_qp", "query_device_ex", "alloc_pd", "dealloc_pd",
    "reg_mr", "dereg_mr", "create_comp_channel", "destroy_comp_channel", "create_cq", "destroy_cq",
    "req_notify_cq", "get_cq_event", "ack_cq_events", "poll_cq", "post_send", "post_recv", "post_atomic_write",
    "post_chain_ex",
};

struct Devices {
    ibv_device dev[2]{};
    ibv_context ctx[2]{};
    Devices() {
        for (int i = 0; i < 2; ++i) {
            std::snprintf(dev[i].name, sizeof dev[i].name, "fake%d", i);
            dev[i].node_type = IBV_NODE_CA;
            dev[i].transport_type = IBV_TRANSPORT_IB;
            ctx[i].device = &dev[i];
            ctx[i].cmd_fd = -1;
            ctx[i].async_fd = -1;
            ctx[i].num_comp_vectors = 1;
        }
    }
};

Devices& devices() {
    static Devices d;
    return d;
}

rdma_event_channel* channel_of(int fd) {
    for (auto* ch : st().channels)
        if (ch->fd == fd) return ch;
    throw std::logic_error("fake: no event channel with fd " + std::to_string(fd));
}

ibv_cq* cq_of(int comp_fd) {
    for (auto& [cq, info] : st().cqs)
        if (cq->channel != nullptr && cq->channel->fd == comp_fd) return cq;
    throw std::logic_error("fake: no CQ on completion channel fd " + std::to_string(comp_fd));
}

} // namespace

Config& config() { return st().cfg; }

void reset() {
    auto& s = st();
    for (auto& [fd, q] : s.cm_queue)
        for (auto* ev : q) delete ev;
    for (auto* ev : s.events_out) delete ev;
    for (auto& [qp, info] : s.qps) delete qp;
    for (auto* id : s.ids) delete id;
    for (auto* ch : s.channels) {
        ::close(ch->fd);
        delete ch;
    }
    for (auto& [cq, info] : s.cqs) delete cq;
    for (auto* ch : s.comp_channels) {
        ::close(ch->fd);
        delete ch;
    }
    for (auto& [mr, access] : s.mrs) delete mr;
    for (auto* pd : s.pds) delete pd;
    s = detail::State{};
}

void fail_next(std::string_view call, int err, int times) {
    if (std::find(std::begin(kCalls), std::end(kCalls), call) == std::end(kCalls))
        throw std::invalid_argument("fail_next: no Verbs call named " + std::string(call));
    st().failures[std::string(call)] = {err, times};
}

ibv_context* device() { return &devices().ctx[0]; }
ibv_context* other_device() { return &devices().ctx[1]; }

const std::vector<std::string>& calls() { return st().calls; }
std::size_t count(std::string_view call) {
    return static_cast<std::size_t>(std::count(st().calls.begin(), st().calls.end(), call));
}
long index_of(std::string_view call, std::size_t from) {
    const auto& c = st().calls;
    for (std::size_t i = from; i < c.size(); ++i)
        if (c[i] == call) return static_cast<long>(i);
    return -1;
}
void clear_calls() { st().calls.clear(); }
const std::vector<PostSend>& sends() { return st().sends; }
const std::vector<PostRecv>& recvs() { return st().recvs; }
const std::vector<AtomicWrite>& atomic_writes() { return st().atomics; }
const std::vector<ibv_qp_init_attr_ex>& qp_attrs() { return st().qp_attrs; }
const std::vector<Registration>& registrations() { return st().regs; }
const std::vector<Registration>& deregistrations() { return st().deregs; }
const std::vector<Connect>& connects() { return st().connects; }
const std::vector<rdma_cm_id*>& rejects() { return st().rejects; }
const std::vector<rdma_cm_id*>& disconnects() { return st().disconnects; }
const std::vector<rdma_cm_event_type>& acked_events() { return st().acked; }
const CmArgs& cm_args() { return st().cm; }
unsigned cq_events_acked() { return st().cq_acks; }
const std::vector<std::string>& violations() { return st().violations; }

const ibv_mr* find_mr(const void* addr) {
    for (auto& [mr, access] : st().mrs)
        if (mr->addr == addr) return mr;
    return nullptr;
}

ibv_qp* qp_of(const rdma_cm_id* id) { return id != nullptr ? id->qp : nullptr; }

unsigned qp_access(const ibv_qp* qp) {
    const auto it = st().qps.find(const_cast<ibv_qp*>(qp));
    if (it == st().qps.end()) throw std::logic_error("fake: no such queue pair");
    return it->second.access;
}

rdma_cm_id* incoming_id(ibv_context* dev) {
    auto* id = new rdma_cm_id{};
    id->verbs = dev != nullptr ? dev : (st().cfg.route_device != nullptr ? st().cfg.route_device : device());
    id->ps = RDMA_PS_TCP;
    st().ids.insert(id);
    st().incoming.insert(id);
    return id;
}

void queue_cm_event(int channel_fd, rdma_cm_event_type type, rdma_cm_id* id) {
    auto& s = st();
    rdma_event_channel* ch = channel_of(channel_fd);
    auto* ev = new rdma_cm_event{};
    ev->event = type;
    if (type == RDMA_CM_EVENT_CONNECT_REQUEST) {
        if (id == nullptr) throw std::logic_error("queue_cm_event: a CONNECT_REQUEST needs incoming_id()");
        for (const auto* l : s.listening)
            if (l->channel == ch) ev->listen_id = const_cast<rdma_cm_id*>(l);
        id->channel = ch;  // a new id reports on its listener's channel until migrated
    } else if (id == nullptr) {
        for (auto* i : s.ids) {
            if (i->channel != ch) continue;
            if (id != nullptr) throw std::logic_error("queue_cm_event: several ids on that channel: name one");
            id = i;
        }
        if (id == nullptr) throw std::logic_error("queue_cm_event: no cm id on that channel");
    }
    ev->id = id;
    s.cm_queue[channel_fd].push_back(ev);
}

bool raise_cq_event(int comp_fd) {
    auto& info = st().cqs.at(cq_of(comp_fd));
    // A CQ raises one event per arming (ibv_req_notify_cq): unarmed, the
    // completion would go unnoticed.
    if (!info.armed) return false;
    info.armed = false;
    ++st().cq_event_queue[comp_fd];
    return true;
}

void push_wc(int comp_fd, const ibv_wc& wc) { st().cqs.at(cq_of(comp_fd)).wcs.push_back(wc); }

bool armed(int comp_fd) { return st().cqs.at(cq_of(comp_fd)).armed; }

int live() {
    const auto& s = st();
    return static_cast<int>(s.pds.size() + s.mrs.size() + s.comp_channels.size() + s.cqs.size() +
                            s.channels.size() + s.ids.size() + s.qps.size() + s.events_out.size());
}

std::string live_report() {
    const auto& s = st();
    return "pd=" + std::to_string(s.pds.size()) + " mr=" + std::to_string(s.mrs.size()) +
           " comp_channel=" + std::to_string(s.comp_channels.size()) + " cq=" + std::to_string(s.cqs.size()) +
           " event_channel=" + std::to_string(s.channels.size()) + " cm_id=" + std::to_string(s.ids.size()) +
           " qp=" + std::to_string(s.qps.size()) + " unacked_cm_event=" + std::to_string(s.events_out.size());
}

} // namespace fake

namespace {

Verbs make_table() {
    using namespace fake::detail;
    return Verbs{
        .create_event_channel = &create_event_channel,
        .destroy_event_channel = &destroy_event_channel,
        .create_id = &create_id,
        .destroy_id = &destroy_id,
        .bind_addr = &bind_addr,
        .resolve_addr = &resolve_addr,
        .resolve_route = &resolve_route,
        .listen = &listen,
        .get_cm_event = &get_cm_event,
        .ack_cm_event = &ack_cm_event,
        .migrate_id = &migrate_id,
        .create_qp_ex = &create_qp_ex,
        .query_qp = &query_qp,
        .modify_qp = &modify_qp,
        .destroy_qp = &destroy_qp,
        .connect = &connect,
        .accept = &accept,
        .reject = &reject,
        .disconnect = &disconnect,
        .get_src_port = &get_src_port,
        .query_device_ex = &query_device_ex,
        .alloc_pd = &alloc_pd,
        .dealloc_pd = &dealloc_pd,
        .reg_mr = &reg_mr,
        .dereg_mr = &dereg_mr,
        .create_comp_channel = &create_comp_channel,
        .destroy_comp_channel = &destroy_comp_channel,
        .create_cq = &create_cq,
        .destroy_cq = &destroy_cq,
        .req_notify_cq = &req_notify_cq,
        .get_cq_event = &get_cq_event,
        .ack_cq_events = &ack_cq_events,
        .poll_cq = &poll_cq,
        .post_send = &post_send,
        .post_recv = &post_recv,
        .post_atomic_write = &post_atomic_write,
        .post_chain_ex = &post_chain_ex,
        // The verbs layer makes no shared receive queue (only nvmf's RDMA target does).
        .create_srq = nullptr,
        .destroy_srq = nullptr,
        .post_srq_recv = nullptr,
    };
}

} // namespace

const Verbs& fake_verbs() noexcept {
    static const Verbs v = make_table();
    return v;
}

const Verbs& fake_verbs_without_flush() noexcept {
    static const Verbs v = [] {
        Verbs t = make_table();
        t.post_chain_ex = nullptr;  // as real_verbs() where RPM_HAVE_IBV_WR_FLUSH is 0
        return t;
    }();
    return v;
}

} // namespace rpm::rdma::verbs
