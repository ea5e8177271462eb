// The NVMe/RDMA port (port.hpp): listen, and the connection
// manager's events: a request checked as the RDMA transport binding says
// (its private data), a queue pair made on the port's SRQ, accepted with
// CRQSIZE; a disconnect ends its queue. NVMe/RDMA's entry in the fabric table
// (serve/fabric.hpp): rdma_fabric.
#include "nvmf/rdma/port.hpp"
#include "core/log.hpp"

#include "nvmf/rdma/queue.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace rpm::nvmf::target {

namespace {

// Capsule buffers the port's SRQ holds: Linux nvmet-rdma's default SRQ
// size. Hosts whose capsules find none get RNR NAKs and retry.
constexpr std::uint32_t srq_entries = 1024;
// The admin queue's depth (the Linux host's NVME_AQ_DEPTH; CAP.MQES bounds I/O queues).
constexpr std::uint32_t admin_depth = 32;

Error failed(const std::string& what, int err) {
    return Error(errc::io_error, "nvmf rdma: " + what + ": " + std::strerror(err ? err : EIO));
}

} // namespace

Result<std::unique_ptr<RdmaPort>> RdmaPort::listen(const RdmaEnv& env, const std::string& address, std::uint16_t port,
                                                   Admit admit) {
    std::unique_ptr<RdmaPort> p(new RdmaPort());
    p->env_ = env;
    p->admit_ = std::move(admit);
    const auto& v = *env.v;
    if (!(p->channel_ = v.create_event_channel())) return failed("rdma_create_event_channel", errno);
    if (::fcntl(p->channel_->fd, F_SETFL, ::fcntl(p->channel_->fd, F_GETFL) | O_NONBLOCK) != 0)
        return failed("fcntl O_NONBLOCK", errno);
    if (v.create_id(p->channel_, &p->listen_id_, nullptr, RDMA_PS_TCP) != 0) return failed("rdma_create_id", errno);
    addrinfo hints{};
    hints.ai_family = AF_INET;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST;
    addrinfo* ai = nullptr;
    const auto service = std::to_string(port);
    if (int rc = ::getaddrinfo(address.c_str(), service.c_str(), &hints, &ai); rc != 0)
        return Error(errc::invalid_argument, "nvmf rdma: address " + address + ": " + ::gai_strerror(rc));
    const int bound = v.bind_addr(p->listen_id_, ai->ai_addr);
    const int bind_err = errno;
    ::freeaddrinfo(ai);
    if (bound != 0) return failed("rdma_bind_addr " + address + ":" + service, bind_err);
    if (!p->listen_id_->verbs)
        return Error(errc::io_error, "nvmf rdma: " + address + " is not the address of an RDMA device (rdma link show)");
    ibv_device_attr_ex attr{};
    if (int rc = v.query_device_ex(p->listen_id_->verbs, &attr); rc != 0) return failed("ibv_query_device_ex", rc);
    p->max_rd_atom_ = std::uint8_t(std::clamp(attr.orig_attr.max_qp_init_rd_atom, 1, 255));
    const auto entries = std::min<std::uint32_t>(srq_entries, std::uint32_t(std::max(attr.orig_attr.max_srq_wr, 1)));
    auto pool = CapsulePool::make(v, p->listen_id_->verbs, entries, std::uint32_t(wire::sqe_len) + env.in_capsule_data);
    if (!pool) return pool.error();
    p->pool_ = std::move(*pool);
    if (v.listen(p->listen_id_, 64) != 0) return failed("rdma_listen", errno);
    p->port_ = ntohs(::rdma_get_src_port(p->listen_id_));
    return p;
}

namespace {

Result<std::unique_ptr<FabricPort>> listen_rdma(const TargetOptions& o, SharedStats* stats, AdmitQueue admit) {
    const RdmaEnv env{&rdma::verbs::real_verbs(), {nullptr, stats}, o.max_io_queues, o.max_queue_size, o.in_capsule_data};
    auto port = RdmaPort::listen(env, o.address, o.port,
                                 [admit = std::move(admit)](const std::shared_ptr<RdmaQueue>& q) { return admit(q); });
    if (!port) return port.error();
    return std::unique_ptr<FabricPort>(std::move(*port));
}

} // namespace

const Fabric rdma_fabric{listen_rdma};

void RdmaPort::start(Registry* registry) {
    env_.queue.registry = registry;
    thread_ = std::thread([this] { run(); });
}

RdmaPort::~RdmaPort() {
    stop();
    queues_.clear();
    if (listen_id_) env_.v->destroy_id(listen_id_);
    pool_.reset();
    if (channel_) env_.v->destroy_event_channel(channel_);
}

void RdmaPort::stop() {
    stopping_ = true;
    if (thread_.joinable()) thread_.join();
}

void RdmaPort::run() {
    while (!stopping_.load()) {
        std::erase_if(queues_, [](const auto& q) { return q->finished(); });
        pollfd pfd{channel_->fd, POLLIN, 0};
        if (::poll(&pfd, 1, 100) <= 0) continue;
        rdma_cm_event* ev = nullptr;
        while (env_.v->get_cm_event(channel_, &ev) == 0) {
            // Copy what the handlers need and ack at once: a queue's
            // rdma_destroy_id (on another thread) waits for its events' acks.
            const auto type = ev->event;
            auto* id = ev->id;
            std::vector<std::uint8_t> pdata;
            std::uint8_t ird = 0, ord = 0;
            if (type == RDMA_CM_EVENT_CONNECT_REQUEST) {
                const auto* d = static_cast<const std::uint8_t*>(ev->param.conn.private_data);
                if (d) pdata.assign(d, d + ev->param.conn.private_data_len);
                ird = ev->param.conn.initiator_depth;
                ord = ev->param.conn.responder_resources;
            }
            env_.v->ack_cm_event(ev);
            on_event(type, id, pdata, ird, ord);
        }
    }
}

RdmaQueue* RdmaPort::find(rdma_cm_id* id) const {
    for (const auto& q : queues_)
        if (q->id() == id) return q.get();
    return nullptr;
}

void RdmaPort::on_event(rdma_cm_event_type type, rdma_cm_id* id, std::span<const std::uint8_t> pdata,
                        std::uint8_t initiator_depth, std::uint8_t responder_resources) {
    if (type == RDMA_CM_EVENT_CONNECT_REQUEST) return on_request(id, pdata, initiator_depth, responder_resources);
    rpm::detail::logf(LogLevel::trace, "nvmf rdma", "%s", ::rdma_event_str(type));
    switch (type) {
    case RDMA_CM_EVENT_DISCONNECTED:
    case RDMA_CM_EVENT_CONNECT_ERROR:
    case RDMA_CM_EVENT_UNREACHABLE:
    case RDMA_CM_EVENT_REJECTED:
        if (auto* q = find(id)) q->close();
        break;
    case RDMA_CM_EVENT_DEVICE_REMOVAL:
        for (auto& q : queues_) q->close();
        break;
    default:
        break;  // ESTABLISHED: capsules already flow; TIMEWAIT_EXIT: nothing held
    }
}

void RdmaPort::reject(rdma_cm_id* id, rdma_wire::CmStatus status, const char* why) {
    rpm::detail::logf(LogLevel::info, "nvmf rdma", "rejected a connection: %s", why);
    const auto rej = rdma_wire::cm_reject(status);
    env_.v->reject(id, rej.data(), std::uint8_t(rej.size()));
    env_.v->destroy_id(id);
}

void RdmaPort::on_request(rdma_cm_id* id, std::span<const std::uint8_t> pdata, std::uint8_t initiator_depth,
                          std::uint8_t responder_resources) {
    const auto check = rdma_wire::parse_cm_request(pdata, env_.max_io_queues, admin_depth, env_.max_queue_size);
    if (!check.request) return reject(id, check.reject, "its private data (RECFMT, QID, HSQSIZE, HRQSIZE)");
    if (stopping_.load() || id->verbs != pool_->context())
        return reject(id, rdma_wire::CmStatus::no_resources, "not on the port's device");
    auto q = std::make_shared<RdmaQueue>(env_, id, pool_, *check.request);
    if (!q->ok()) {
        rpm::detail::logf(LogLevel::info, "nvmf rdma", "%s", q->error().c_str());
        q->release_id();
        return reject(id, rdma_wire::CmStatus::no_resources, "no queue pair");
    }
    if (!admit_(q)) {
        q->release_id();
        return reject(id, rdma_wire::CmStatus::no_resources, "over the target's connection limits");
    }
    queues_.push_back(q);
    const auto rep = rdma_wire::cm_accept(std::uint16_t(check.request->depth()));
    rdma_conn_param param{};
    param.private_data = rep.data();
    param.private_data_len = std::uint8_t(rep.size());
    // The target issues the RDMA READs: as many in flight as both ends
    // allow. The event's depths are already from this side (the CM swaps
    // the host's): its initiator_depth is what the host's responder takes.
    param.initiator_depth = std::min(initiator_depth, max_rd_atom_);
    param.responder_resources = std::min(responder_resources, max_rd_atom_);
    param.rnr_retry_count = 7;
    param.flow_control = 1;
    if (env_.v->accept(id, &param) != 0) {
        rpm::detail::logf(LogLevel::info, "nvmf rdma", "rdma_accept: %s", std::strerror(errno));
        q->close();
    }
}

} // namespace rpm::nvmf::target
