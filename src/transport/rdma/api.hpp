// Every librpma and rdma_cm call rpm makes, as a table of function pointers.
//
// real_api() points at the libraries. This machine class has no RDMA
// device, so the unit tests (tests/unit/rdma/) substitute a fake table that
// records every argument and simulates the fabric. Nothing outside
// src/transport/rdma/ includes librpma.h: librpma is discontinued upstream,
// and this folder is the only place to change when it is replaced.
#pragma once

#include <rpm/error.hpp>

#include <librpma.h>
#include <rdma/rdma_cma.h>

#include <string>
#include <string_view>
#include <system_error>

namespace rpm::rdma {

struct Api {
    // device and peer
    decltype(&::rpma_utils_get_ibv_context) utils_get_ibv_context;
    decltype(&::rpma_peer_new) peer_new;
    decltype(&::rpma_peer_delete) peer_delete;
    // peer configuration (direct write to PMem)
    decltype(&::rpma_peer_cfg_new) peer_cfg_new;
    decltype(&::rpma_peer_cfg_delete) peer_cfg_delete;
    decltype(&::rpma_peer_cfg_set_direct_write_to_pmem) peer_cfg_set_direct_write_to_pmem;
    decltype(&::rpma_peer_cfg_get_direct_write_to_pmem) peer_cfg_get_direct_write_to_pmem;
    decltype(&::rpma_peer_cfg_get_descriptor_size) peer_cfg_get_descriptor_size;
    decltype(&::rpma_peer_cfg_get_descriptor) peer_cfg_get_descriptor;
    decltype(&::rpma_peer_cfg_from_descriptor) peer_cfg_from_descriptor;
    // memory registration
    decltype(&::rpma_mr_reg) mr_reg;
    decltype(&::rpma_mr_dereg) mr_dereg;
    decltype(&::rpma_mr_get_descriptor_size) mr_get_descriptor_size;
    decltype(&::rpma_mr_get_descriptor) mr_get_descriptor;
    decltype(&::rpma_mr_remote_from_descriptor) mr_remote_from_descriptor;
    decltype(&::rpma_mr_remote_get_size) mr_remote_get_size;
    decltype(&::rpma_mr_remote_get_flush_type) mr_remote_get_flush_type;
    decltype(&::rpma_mr_remote_delete) mr_remote_delete;
    // connection configuration
    decltype(&::rpma_conn_cfg_new) conn_cfg_new;
    decltype(&::rpma_conn_cfg_delete) conn_cfg_delete;
    decltype(&::rpma_conn_cfg_set_sq_size) conn_cfg_set_sq_size;
    decltype(&::rpma_conn_cfg_set_rq_size) conn_cfg_set_rq_size;
    decltype(&::rpma_conn_cfg_set_cq_size) conn_cfg_set_cq_size;
    decltype(&::rpma_conn_cfg_set_timeout) conn_cfg_set_timeout;
    // connection set-up
    decltype(&::rpma_conn_req_new) conn_req_new;
    decltype(&::rpma_conn_req_delete) conn_req_delete;
    decltype(&::rpma_conn_req_recv) conn_req_recv;
    decltype(&::rpma_conn_req_connect) conn_req_connect;
    decltype(&::rpma_ep_listen) ep_listen;
    decltype(&::rpma_ep_get_fd) ep_get_fd;
    decltype(&::rpma_ep_next_conn_req) ep_next_conn_req;
    decltype(&::rpma_ep_shutdown) ep_shutdown;
    // connection
    decltype(&::rpma_conn_get_event_fd) conn_get_event_fd;
    decltype(&::rpma_conn_next_event) conn_next_event;
    decltype(&::rpma_conn_apply_remote_peer_cfg) conn_apply_remote_peer_cfg;
    decltype(&::rpma_conn_get_cq) conn_get_cq;
    decltype(&::rpma_conn_disconnect) conn_disconnect;
    decltype(&::rpma_conn_delete) conn_delete;
    // data path
    decltype(&::rpma_write) write;
    decltype(&::rpma_read) read;
    decltype(&::rpma_atomic_write) atomic_write;
    decltype(&::rpma_flush) flush;
    decltype(&::rpma_send) send;
    decltype(&::rpma_recv) recv;
    // completions
    decltype(&::rpma_cq_get_fd) cq_get_fd;
    decltype(&::rpma_cq_wait) cq_wait;
    decltype(&::rpma_cq_get_wc) cq_get_wc;
    // rdma_cm, only to find a free port for "port 0" (librpma cannot say
    // which port its endpoint bound)
    decltype(&::rdma_create_id) cm_create_id;
    decltype(&::rdma_bind_addr) cm_bind_addr;
    decltype(&::rdma_get_src_port) cm_get_src_port;
    decltype(&::rdma_destroy_id) cm_destroy_id;
};

/// The table of the real libraries.
const Api& real_api() noexcept;

/// "RPMA_E_PROVIDER (provider error)" for a librpma return code.
std::string rpma_error_name(int ret);

/// The rpm code for a failed data-path call: RPMA_E_INVAL -> invalid_argument,
/// RPMA_E_NOSUPP -> unsupported, anything else -> io_error.
std::error_code rpma_code(int ret) noexcept;

/// An Error whose detail names what was being done and the failing call:
/// "<what>: <call> failed: RPMA_E_PROVIDER (provider error)".
Error rpma_failure(errc code, std::string_view what, std::string_view call, int ret);

} // namespace rpm::rdma
