// The real librpma / rdma_cm table and the translation of librpma's
// return codes into rpm errors.
#include "transport/rdma/api.hpp"

namespace rpm::rdma {

const Api& real_api() noexcept {
    static const Api api{
        .utils_get_ibv_context = &::rpma_utils_get_ibv_context,
        .peer_new = &::rpma_peer_new,
        .peer_delete = &::rpma_peer_delete,
        .peer_cfg_new = &::rpma_peer_cfg_new,
        .peer_cfg_delete = &::rpma_peer_cfg_delete,
        .peer_cfg_set_direct_write_to_pmem = &::rpma_peer_cfg_set_direct_write_to_pmem,
        .peer_cfg_get_direct_write_to_pmem = &::rpma_peer_cfg_get_direct_write_to_pmem,
        .peer_cfg_get_descriptor_size = &::rpma_peer_cfg_get_descriptor_size,
        .peer_cfg_get_descriptor = &::rpma_peer_cfg_get_descriptor,
        .peer_cfg_from_descriptor = &::rpma_peer_cfg_from_descriptor,
        .mr_reg = &::rpma_mr_reg,
        .mr_dereg = &::rpma_mr_dereg,
        .mr_get_descriptor_size = &::rpma_mr_get_descriptor_size,
        .mr_get_descriptor = &::rpma_mr_get_descriptor,
        .mr_remote_from_descriptor = &::rpma_mr_remote_from_descriptor,
        .mr_remote_get_size = &::rpma_mr_remote_get_size,
        .mr_remote_get_flush_type = &::rpma_mr_remote_get_flush_type,
        .mr_remote_delete = &::rpma_mr_remote_delete,
        .conn_cfg_new = &::rpma_conn_cfg_new,
        .conn_cfg_delete = &::rpma_conn_cfg_delete,
        .conn_cfg_set_sq_size = &::rpma_conn_cfg_set_sq_size,
        .conn_cfg_set_rq_size = &::rpma_conn_cfg_set_rq_size,
        .conn_cfg_set_cq_size = &::rpma_conn_cfg_set_cq_size,
        .conn_cfg_set_timeout = &::rpma_conn_cfg_set_timeout,
        .conn_req_new = &::rpma_conn_req_new,
        .conn_req_delete = &::rpma_conn_req_delete,
        .conn_req_recv = &::rpma_conn_req_recv,
        .conn_req_connect = &::rpma_conn_req_connect,
        .ep_listen = &::rpma_ep_listen,
        .ep_get_fd = &::rpma_ep_get_fd,
        .ep_next_conn_req = &::rpma_ep_next_conn_req,
        .ep_shutdown = &::rpma_ep_shutdown,
        .conn_get_event_fd = &::rpma_conn_get_event_fd,
        .conn_next_event = &::rpma_conn_next_event,
        .conn_apply_remote_peer_cfg = &::rpma_conn_apply_remote_peer_cfg,
        .conn_get_cq = &::rpma_conn_get_cq,
        .conn_disconnect = &::rpma_conn_disconnect,
        .conn_delete = &::rpma_conn_delete,
        .write = &::rpma_write,
        .read = &::rpma_read,
        .atomic_write = &::rpma_atomic_write,
        .flush = &::rpma_flush,
        .send = &::rpma_send,
        .recv = &::rpma_recv,
        .cq_get_fd = &::rpma_cq_get_fd,
        .cq_wait = &::rpma_cq_wait,
        .cq_get_wc = &::rpma_cq_get_wc,
        .cm_create_id = &::rdma_create_id,
        .cm_bind_addr = &::rdma_bind_addr,
        .cm_get_src_port = &::rdma_get_src_port,
        .cm_destroy_id = &::rdma_destroy_id,
    };
    return api;
}

std::string rpma_error_name(int ret) {
    // Our own table rather than rpma_err_2str(): it needs no library call,
    // so error paths read the same under the fake table.
    switch (ret) {
    case RPMA_E_UNKNOWN: return "RPMA_E_UNKNOWN (unknown error)";
    case RPMA_E_NOSUPP: return "RPMA_E_NOSUPP (not supported)";
    case RPMA_E_PROVIDER: return "RPMA_E_PROVIDER (provider error: rdma_cm or verbs failed)";
    case RPMA_E_NOMEM: return "RPMA_E_NOMEM (out of memory)";
    case RPMA_E_INVAL: return "RPMA_E_INVAL (invalid argument)";
    case RPMA_E_NO_COMPLETION: return "RPMA_E_NO_COMPLETION (no completion available)";
    case RPMA_E_NO_EVENT: return "RPMA_E_NO_EVENT (no event available)";
    case RPMA_E_AGAIN: return "RPMA_E_AGAIN (temporary error)";
    default: return "librpma error " + std::to_string(ret);
    }
}

std::error_code rpma_code(int ret) noexcept {
    switch (ret) {
    case 0: return {};
    case RPMA_E_INVAL: return errc::invalid_argument;
    case RPMA_E_NOSUPP: return errc::unsupported;
    default: return errc::io_error;
    }
}

Error rpma_failure(errc code, std::string_view what, std::string_view call, int ret) {
    return Error(code, std::string(what) + ": " + std::string(call) + " failed: " + rpma_error_name(ret));
}

} // namespace rpm::rdma
