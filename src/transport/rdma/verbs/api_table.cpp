// The Api table of the verbs layer, and real_api(): the layer over the
// real rdma-core.
#include "transport/rdma/verbs/entries.hpp"
#include "transport/rdma/verbs/objects.hpp"

namespace rpm::rdma {
namespace verbs {

Api base_api() noexcept {
    return Api{
        .utils_get_ibv_context = nullptr,  // make_api sets the entries that need a Verbs table
        .peer_new = nullptr,
        .peer_delete = &peer_delete,
        .peer_cfg_new = &peer_cfg_new,
        .peer_cfg_delete = &peer_cfg_delete,
        .peer_cfg_set_direct_write_to_pmem = &peer_cfg_set_direct,
        .peer_cfg_get_direct_write_to_pmem = &peer_cfg_get_direct,
        .peer_cfg_get_descriptor_size = &peer_cfg_descriptor_size,
        .peer_cfg_get_descriptor = &peer_cfg_descriptor,
        .peer_cfg_from_descriptor = &peer_cfg_from_descriptor,
        .mr_reg = &mr_reg,
        .mr_dereg = &mr_dereg,
        .mr_get_native_flush = &mr_get_native_flush,
        .mr_get_descriptor_size = &mr_get_descriptor_size,
        .mr_get_descriptor = &mr_get_descriptor,
        .mr_remote_from_descriptor = &mr_remote_from_descriptor,
        .mr_remote_get_size = &mr_remote_get_size,
        .mr_remote_get_flush_type = &mr_remote_get_flush_type,
        .mr_remote_delete = &mr_remote_delete,
        .conn_cfg_new = &conn_cfg_new,
        .conn_cfg_delete = &conn_cfg_delete,
        .conn_cfg_set_sq_size = &conn_cfg_set_sq_size,
        .conn_cfg_set_rq_size = &conn_cfg_set_rq_size,
        .conn_cfg_set_cq_size = &conn_cfg_set_cq_size,
        .conn_cfg_set_timeout = &conn_cfg_set_timeout,
        .conn_req_new = &conn_req_new,
        .conn_req_delete = &conn_req_delete,
        .conn_req_recv = &conn_req_recv,
        .conn_req_connect = &conn_req_connect,
        .ep_listen = &ep_listen,
        .ep_get_fd = &ep_get_fd,
        .ep_next_conn_req = &ep_next_conn_req,
        .ep_shutdown = &ep_shutdown,
        .conn_get_event_fd = &conn_get_event_fd,
        .conn_next_event = &conn_next_event,
        .conn_apply_remote_peer_cfg = &conn_apply_remote_peer_cfg,
        .conn_get_cq = &conn_get_cq,
        .conn_atomic_write_kind = &conn_atomic_write_kind,
        .conn_native_flush = &conn_native_flush,
        .conn_disconnect = &conn_disconnect,
        .conn_delete = &conn_delete,
        .write = &write,
        .read = &read,
        .atomic_write = &atomic_write,
        .flush = &flush,
        .flush_native = &flush_native,
        .send = &send,
        .recv = &recv,
        .ring = &ring,
        .cq_get_fd = &cq_get_fd,
        .cq_wait = &cq_wait,
        .cq_get_wc = &cq_get_wc,
        .cm_create_id = nullptr,
        .cm_bind_addr = nullptr,
        .cm_get_src_port = nullptr,
        .cm_destroy_id = nullptr,
    };
}

} // namespace verbs

const Api& real_api() noexcept {
    static const Api api = verbs::make_api<&verbs::real_verbs>();
    return api;
}

} // namespace rpm::rdma
