// The fake rdma_cm: event channels with real (eventfd) descriptors, cm ids
// that resolve to the fake device, queue pairs, and the connection calls,
// each recorded. An event queue per channel stands in for the kernel's.
#include "fake_state.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <netinet/in.h>
#include <unistd.h>

namespace rpm::rdma::verbs::fake::detail {
namespace {

std::uint16_t port_of(const sockaddr* a) {
    if (a == nullptr) return 0;
    if (a->sa_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(a)->sin_port);
    if (a->sa_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6*>(a)->sin6_port);
    return 0;
}

ibv_context* route() { return st().cfg.route_device != nullptr ? st().cfg.route_device : device(); }

bool known(const rdma_cm_id* id, const char* call) {
    if (st().ids.count(const_cast<rdma_cm_id*>(id)) != 0) return true;
    violation(std::string(call) + ": unknown cm id");
    return false;
}

bool known(const rdma_event_channel* ch, const char* call) {
    if (st().channels.count(const_cast<rdma_event_channel*>(ch)) != 0) return true;
    violation(std::string(call) + ": unknown event channel");
    return false;
}

/// rdma_connect and rdma_accept: both need the queue pair they connect.
int connect_call(const char* call, rdma_cm_id* id, rdma_conn_param* param, bool passive) {
    if (int e = enter(call)) return fail_errno(e);
    if (!known(id, call)) return fail_errno(EINVAL);
    if (param == nullptr) violation(std::string(call) + ": no rdma_conn_param");
    if (id->qp == nullptr) violation(std::string(call) + ": the id has no queue pair");
    const bool incoming = st().incoming.count(id) != 0;
    if (passive && !incoming) violation("accept: the id is not a connection request's");
    if (!passive && (incoming || st().resolved.count(id) == 0)) violation("connect: the id has no resolved route");
    st().connects.push_back({call, id, param != nullptr ? *param : rdma_conn_param{}});
    return 0;
}

} // namespace

rdma_event_channel* create_event_channel() {
    if (int e = enter("create_event_channel")) {
        errno = e;
        return nullptr;
    }
    auto* ch = new rdma_event_channel{new_fd()};
    st().channels.insert(ch);
    return ch;
}

void destroy_event_channel(rdma_event_channel* ch) {
    (void)enter("destroy_event_channel");
    auto& s = st();
    if (s.channels.erase(ch) == 0) return violation("destroy_event_channel: unknown channel");
    for (const auto* id : s.ids)
        if (id->channel == ch) violation("destroy_event_channel: a cm id still reports on it");
    if (auto it = s.cm_queue.find(ch->fd); it != s.cm_queue.end()) {
        for (auto* ev : it->second) delete ev;
        s.cm_queue.erase(it);
    }
    ::close(ch->fd);
    delete ch;
}

int create_id(rdma_event_channel* ch, rdma_cm_id** id, void* ctx, rdma_port_space ps) {
    if (int e = enter("create_id")) return fail_errno(e);
    if (ch != nullptr) (void)known(ch, "create_id");  // NULL: a synchronous id
    auto* i = new rdma_cm_id{};
    i->channel = ch;
    i->context = ctx;
    i->ps = ps;
    st().ids.insert(i);
    *id = i;
    return 0;
}

int destroy_id(rdma_cm_id* id) {
    if (int e = enter("destroy_id")) return fail_errno(e);
    auto& s = st();
    if (s.ids.erase(id) == 0) {
        violation("destroy_id: unknown cm id");
        return fail_errno(EINVAL);
    }
    if (id->qp != nullptr) violation("destroy_id: its queue pair was not destroyed (rdma_destroy_qp first)");
    for (const auto* ev : s.events_out)
        if (ev->id == id) violation("destroy_id: an event of this id is not acknowledged (rdma_destroy_id would hang)");
    for (auto& [fd, q] : s.cm_queue) {  // the kernel drops the id's undelivered events
        std::erase_if(q, [id](rdma_cm_event* ev) {
            if (ev->id != id) return false;
            delete ev;
            return true;
        });
    }
    s.resolved.erase(id);
    s.bound.erase(id);
    s.listening.erase(id);
    s.incoming.erase(id);
    delete id;
    return 0;
}

int bind_addr(rdma_cm_id* id, sockaddr* addr) {
    if (int e = enter("bind_addr")) return fail_errno(e);
    if (!known(id, "bind_addr")) return fail_errno(EINVAL);
    st().cm.bound_port = port_of(addr);
    id->verbs = route();
    st().bound.insert(id);
    return 0;
}

int resolve_addr(rdma_cm_id* id, sockaddr* src, sockaddr* dst, int timeout_ms) {
    (void)src;
    if (int e = enter("resolve_addr")) return fail_errno(e);
    if (!known(id, "resolve_addr")) return fail_errno(EINVAL);
    st().cm.resolve_addr_timeout = timeout_ms;
    st().cm.resolved_port = port_of(dst);
    id->verbs = route();
    st().resolved.insert(id);
    return 0;
}

int resolve_route(rdma_cm_id* id, int timeout_ms) {
    if (int e = enter("resolve_route")) return fail_errno(e);
    if (!known(id, "resolve_route")) return fail_errno(EINVAL);
    if (st().resolved.count(id) == 0) violation("resolve_route: the address was not resolved first");
    st().cm.resolve_route_timeout = timeout_ms;
    return 0;
}

int listen(rdma_cm_id* id, int backlog) {
    if (int e = enter("listen")) return fail_errno(e);
    if (!known(id, "listen")) return fail_errno(EINVAL);
    if (st().bound.count(id) == 0) violation("listen: the id is not bound");
    st().cm.backlog = backlog;
    st().listening.insert(id);
    return 0;
}

int get_cm_event(rdma_event_channel* ch, rdma_cm_event** ev) {
    if (int e = enter("get_cm_event")) return fail_errno(e);
    if (!known(ch, "get_cm_event")) return fail_errno(EINVAL);
    auto& q = st().cm_queue[ch->fd];
    if (q.empty()) {
        if (blocking(ch->fd)) violation("get_cm_event: nothing pending on a blocking channel (would block for ever)");
        return fail_errno(EAGAIN);
    }
    *ev = q.front();
    q.pop_front();
    st().events_out.insert(*ev);
    return 0;
}

int ack_cm_event(rdma_cm_event* ev) {
    if (int e = enter("ack_cm_event")) return fail_errno(e);
    if (st().events_out.erase(ev) == 0) {
        violation("ack_cm_event: not an event handed out (or acknowledged twice)");
        return fail_errno(EINVAL);
    }
    st().acked.push_back(ev->event);
    delete ev;
    return 0;
}

int migrate_id(rdma_cm_id* id, rdma_event_channel* ch) {
    if (int e = enter("migrate_id")) return fail_errno(e);
    if (!known(id, "migrate_id") || !known(ch, "migrate_id")) return fail_errno(EINVAL);
    // The kernel moves the id's undelivered events along with it.
    auto& s = st();
    if (id->channel != nullptr && id->channel != ch) {
        auto& from = s.cm_queue[id->channel->fd];
        auto& to = s.cm_queue[ch->fd];
        std::erase_if(from, [&](rdma_cm_event* ev) {
            if (ev->id != id) return false;
            to.push_back(ev);
            return true;
        });
    }
    id->channel = ch;
    return 0;
}

int create_qp_ex(rdma_cm_id* id, ibv_qp_init_attr_ex* attr) {
    auto& s = st();
    s.qp_attrs.push_back(*attr);  // every attempt, failed ones too
    if (int e = enter("create_qp_ex")) return fail_errno(e);
    if (!known(id, "create_qp_ex")) return fail_errno(EINVAL);
    if (id->verbs == nullptr) violation("create_qp_ex: the id has no device (address not resolved)");
    if (id->qp != nullptr) violation("create_qp_ex: the id already has a queue pair");
    if ((attr->comp_mask & IBV_QP_INIT_ATTR_PD) == 0 || s.pds.count(attr->pd) == 0)
        violation("create_qp_ex: no protection domain of this fake");
    else if (attr->pd->context != id->verbs)
        violation("create_qp_ex: the protection domain belongs to another device");
    if (s.cqs.count(attr->send_cq) == 0 || s.cqs.count(attr->recv_cq) == 0)
        violation("create_qp_ex: a CQ that is not alive");
    if (s.cfg.granted_inline >= 0) attr->cap.max_inline_data = static_cast<std::uint32_t>(s.cfg.granted_inline);
    auto* qp = new ibv_qp{};
    qp->context = id->verbs;
    qp->qp_context = attr->qp_context;
    qp->pd = attr->pd;
    qp->send_cq = attr->send_cq;
    qp->recv_cq = attr->recv_cq;
    qp->handle = s.next;
    qp->qp_num = s.next++;
    qp->state = IBV_QPS_INIT;
    qp->qp_type = attr->qp_type;
    s.qps[qp] = QpInfo{id, attr->cap.max_inline_data, attr->cap.max_send_wr,
                       (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) != 0 ? attr->send_ops_flags : 0,
                       attr->comp_mask};
    id->qp = qp;
    return 0;
}

int query_qp(ibv_qp* qp, ibv_qp_attr* attr, int mask, ibv_qp_init_attr* init) {
    if (int e = enter("query_qp")) return e;
    const auto it = st().qps.find(qp);
    if (it == st().qps.end() || attr == nullptr || init == nullptr) {
        violation("query_qp: unknown queue pair or no attributes to fill");
        return EINVAL;
    }
    *attr = ibv_qp_attr{};
    if ((mask & IBV_QP_ACCESS_FLAGS) != 0) attr->qp_access_flags = it->second.access;
    return 0;
}

int modify_qp(ibv_qp* qp, ibv_qp_attr* attr, int mask) {
    if (int e = enter("modify_qp")) return e;
    const auto it = st().qps.find(qp);
    if (it == st().qps.end() || attr == nullptr) {
        violation("modify_qp: unknown queue pair");
        return EINVAL;
    }
    // rdma_cm drives the state transitions; the layer may change access only.
    if (mask != IBV_QP_ACCESS_FLAGS) violation("modify_qp: more than the access flags");
    it->second.access = attr->qp_access_flags;
    return 0;
}

void destroy_qp(rdma_cm_id* id) {
    (void)enter("destroy_qp");
    if (id == nullptr || id->qp == nullptr || st().qps.erase(id->qp) == 0)
        return violation("destroy_qp: the id has no queue pair");
    delete id->qp;
    id->qp = nullptr;
}

int connect(rdma_cm_id* id, rdma_conn_param* param) { return connect_call("connect", id, param, false); }

int accept(rdma_cm_id* id, rdma_conn_param* param) { return connect_call("accept", id, param, true); }

int reject(rdma_cm_id* id, const void* pdata, std::uint8_t len) {
    (void)pdata;
    (void)len;
    if (int e = enter("reject")) return fail_errno(e);
    if (!known(id, "reject")) return fail_errno(EINVAL);
    if (st().incoming.count(id) == 0) violation("reject: the id is not a connection request's");
    st().rejects.push_back(id);
    return 0;
}

int disconnect(rdma_cm_id* id) {
    if (int e = enter("disconnect")) return fail_errno(e);
    if (!known(id, "disconnect")) return fail_errno(EINVAL);
    st().disconnects.push_back(id);
    return 0;
}

std::uint16_t get_src_port(rdma_cm_id* id) {
    (void)enter("get_src_port");
    (void)known(id, "get_src_port");
    return htons(st().cfg.src_port);
}

} // namespace rpm::rdma::verbs::fake::detail
