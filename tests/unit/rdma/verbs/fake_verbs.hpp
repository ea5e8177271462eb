// A fake rdma-core for the verbs layer's unit tests (no RDMA device here).
//
// fake_verbs() is a verbs::Verbs table whose functions build fake objects
// (device context, PD, MRs, completion channels with real eventfds, CQs,
// cm ids, queue pairs), record every call by name and DEEP-COPY every work
// request they are handed: the layer reuses its own structs for the next
// chain, so a test reading the layer's memory later would see the wrong
// thing. Like a real device it also checks what it can (an sge inside a
// registered region with the right lkey, inline data within the granted
// size, objects destroyed in an order rdma-core accepts) and lists each
// misuse in violations(), which the fixture requires to be empty.
//
// State is static (the table is a set of plain function pointers): reset()
// frees whatever is left and restores the defaults. Single-threaded.
#pragma once

#include "transport/rdma/verbs/verbs.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rpm::rdma::verbs {

/// The fake table, for make_api<&fake_verbs>().
const Verbs& fake_verbs() noexcept;
/// The same without post_chain_ex: a build whose rdma-core has no
/// ibv_wr_flush (Debian 12's v44), for make_api<&fake_verbs_without_flush>().
const Verbs& fake_verbs_without_flush() noexcept;

namespace fake {

/// One work request of a posted chain, copied field by field.
struct SendWr {
    std::uint64_t wr_id = 0;
    ibv_wr_opcode opcode{};
    unsigned send_flags = 0;
    int num_sge = 0;
    std::vector<ibv_sge> sge;
    std::uint64_t remote_addr = 0;  ///< wr.rdma.remote_addr
    std::uint32_t rkey = 0;         ///< wr.rdma.rkey
    /// With IBV_SEND_INLINE: the bytes the sges named at posting time (a
    /// device copies them then, so later changes must not matter).
    std::vector<char> inline_data;
    // A FLUSH (opcode kWrFlush, posted by post_chain_ex): ibv_wr_flush's arguments.
    std::uint64_t flush_len = 0;
    std::uint8_t flush_type = 0;
    std::uint8_t flush_level = 0;
};
/// One ibv_post_send call, or one post_chain_ex (ibv_wr_start ...
/// ibv_wr_complete): one doorbell, the whole chain it carried.
struct PostSend {
    ibv_qp* qp = nullptr;
    std::vector<SendWr> chain;
    int result = 0;  ///< what the call returned (fail_next)
    bool extended = false;  ///< by post_chain_ex, the extended post API
};
struct RecvWr {
    std::uint64_t wr_id = 0;
    int num_sge = 0;
    std::vector<ibv_sge> sge;
};
struct PostRecv {
    ibv_qp* qp = nullptr;
    std::vector<RecvWr> chain;
};
struct AtomicWrite {
    ibv_qp* qp = nullptr;
    std::uint64_t wr_id = 0;
    unsigned wr_flags = 0;
    std::uint32_t rkey = 0;
    std::uint64_t remote_addr = 0;
    std::array<char, 8> value{};
    int result = 0;
};
struct Registration {
    const ibv_mr* mr = nullptr;  ///< dangling once deregistered: compare, do not read
    void* addr = nullptr;
    std::size_t length = 0;
    int access = 0;
    std::uint32_t lkey = 0;
    std::uint32_t rkey = 0;
};
/// rdma_connect or rdma_accept.
struct Connect {
    std::string call;
    rdma_cm_id* id = nullptr;
    rdma_conn_param param{};
};
/// The last arguments of the rdma_cm calls that take settings.
struct CmArgs {
    int resolve_addr_timeout = -1;
    int resolve_route_timeout = -1;
    int backlog = -1;
    int cqe = -1;
    std::uint16_t bound_port = 0;     ///< host order, from bind_addr
    std::uint16_t resolved_port = 0;  ///< host order, from resolve_addr's destination
};

struct Config {
    std::uint64_t device_cap_flags_ex = 0;  ///< what query_device_ex reports
    /// What create_qp_ex writes back in cap.max_inline_data; < 0: what was asked.
    long granted_inline = -1;
    /// The device bind_addr / resolve_addr / incoming_id land on; nullptr: device().
    ibv_context* route_device = nullptr;
    std::uint16_t src_port = 0;  ///< get_src_port's answer (host order)
    /// Registrations asking for IBV_ACCESS_FLUSH_PERSISTENT fail with
    /// EINVAL, as rxe's do on memory that is not persistent memory.
    bool refuse_flush_persistent = false;
};

Config& config();
/// Free every object still alive, close its fds, forget every record.
void reset();

/// The next `times` calls of `call` (a Verbs member name) fail with `err`,
/// each the way that call reports it: NULL + errno, -1 + errno, or err.
void fail_next(std::string_view call, int err, int times = 1);

/// The fake device (and a second one, for a route to another NIC).
ibv_context* device();
ibv_context* other_device();

// What was called.
const std::vector<std::string>& calls();
std::size_t count(std::string_view call);
/// Position of the first `call` at or after `from` in calls(), or -1.
long index_of(std::string_view call, std::size_t from = 0);
void clear_calls();
/// Every ibv_post_send and post_chain_ex, failed ones too (result).
const std::vector<PostSend>& sends();
const std::vector<PostRecv>& recvs();  ///< the ibv_post_recv calls that succeeded
const std::vector<AtomicWrite>& atomic_writes();  ///< every post_atomic_write (result)
const std::vector<ibv_qp_init_attr_ex>& qp_attrs();  ///< every create_qp_ex attempt
const std::vector<Registration>& registrations();
const std::vector<Registration>& deregistrations();
const std::vector<Connect>& connects();
const std::vector<rdma_cm_id*>& rejects();
const std::vector<rdma_cm_id*>& disconnects();
const std::vector<rdma_cm_event_type>& acked_events();
const CmArgs& cm_args();
unsigned cq_events_acked();
const std::vector<std::string>& violations();

/// The live registration starting at addr, or nullptr.
const ibv_mr* find_mr(const void* addr);
/// The queue pair of a cm id (nullptr when none).
ibv_qp* qp_of(const rdma_cm_id* id);
/// A live queue pair's qp_access_flags (rdma_cm's, or as modify_qp left them).
unsigned qp_access(const ibv_qp* qp);

// Events the tests raise.
/// A new cm id as rdma_cm makes for an incoming connection (on `dev`, or
/// the route device).
rdma_cm_id* incoming_id(ibv_context* dev = nullptr);
/// Queue a cm event on the event channel whose fd is `channel_fd`. The
/// id defaults to the only id on that channel; a CONNECT_REQUEST's id
/// joins the channel and its listen_id is the listening id.
void queue_cm_event(int channel_fd, rdma_cm_event_type type, rdma_cm_id* id = nullptr);
/// A completion event on the completion channel whose fd is `comp_fd`:
/// false (and no event) when that CQ is not armed, as on a device.
bool raise_cq_event(int comp_fd);
/// A completion for ibv_poll_cq on the CQ of that completion channel.
void push_wc(int comp_fd, const ibv_wc& wc);
/// Whether that CQ is armed (req_notify_cq since its last event).
bool armed(int comp_fd);

/// Objects created and not yet destroyed (cm events handed out and not
/// acknowledged count too), and a list of them for failure messages.
int live();
std::string live_report();

} // namespace fake
} // namespace rpm::rdma::verbs
