// Identify: the controller data structure (CNS 1), a namespace (CNS 0), the
// active namespace list (CNS 2) and a namespace's identification
// descriptors (CNS 3). Offsets are those of the NVMe Base specification
// (Linux's struct nvme_id_ctrl / nvme_id_ns agree).
#include "nvmf/controller/state.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

namespace rpm::nvmf::target {

namespace {

using wire::put16;
using wire::put32;
using wire::put64;

constexpr char firmware_revision[] = "1.0";
constexpr std::uint32_t sgls_supported = 1u << 0;         // SGLs, no alignment requirement
constexpr std::uint32_t sgls_keyed = 1u << 2;             // keyed SGL data blocks (NVMe/RDMA requires them)
constexpr std::uint32_t sgls_offset = 1u << 20;           // offset addressing (in-capsule data)
constexpr std::uint8_t cmic_multi_controller = 1u << 1;   // several hosts may connect at once
constexpr std::uint16_t oncs_dataset_management = 1u << 2;
constexpr std::uint16_t oncs_write_zeroes = 1u << 3;
constexpr std::uint8_t dlfeat_reads_zeroes = 0x01;          // deallocated blocks read as 0
constexpr std::uint8_t lpa_extended_data = 1u << 2;       // NUMDU and offsets in Get Log Page
constexpr std::uint8_t nmic_shared = 1u << 0;             // several controllers share namespaces
constexpr std::size_t max_ns_list = 1024;

Outcome with_data(std::vector<std::uint8_t> data) {
    Outcome o;
    o.data = std::move(data);
    return o;
}

// MDTS is a power of two in units of CAP.MPSMIN (4 KiB); 0 means no limit.
std::uint8_t mdts(std::uint32_t max_io_size) {
    const std::uint32_t pages = max_io_size / 4096;
    return pages == 0 ? 0 : std::uint8_t(std::bit_width(pages) - 1);
}

// Bytes 0..511: identity, limits and capabilities.
void fill_controller_head(std::span<std::uint8_t> d, const ControllerView& v) {
    const auto& spec = v.subsystem->spec();
    put_string(d.subspan(4, 20), spec.serial, ' ');
    put_string(d.subspan(24, 40), spec.model, ' ');
    put_string(d.subspan(64, 8), firmware_revision, ' ');
    d[72] = 6;                                            // RAB
    d[76] = v.discovery() ? 0 : cmic_multi_controller;
    d[77] = mdts(v.limits->max_io_size);
    put16(&d[78], v.cntlid);
    put32(&d[80], nvme_version);
    put32(&d[92], 0);                                     // OAES: no async events to enable
    d[111] = v.discovery() ? 2 : 1;                       // CNTRLTYPE
    d[258] = 3;                                           // ACL (0's based)
    d[259] = std::uint8_t(max_aers - 1);                  // AERL (0's based)
    d[261] = lpa_extended_data;
    d[262] = std::uint8_t(error_log_entries - 1);         // ELPE (0's based)
    put16(&d[320], std::uint16_t(kas_ms / 100));          // KAS
}

// Bytes 512..2047: queue entry sizes, namespaces, command support, NVMe-oF.
void fill_controller_tail(std::span<std::uint8_t> d, const ControllerView& v, std::uint32_t nn) {
    d[512] = 0x66;                                        // SQES: 64 bytes
    d[513] = 0x44;                                        // CQES: 16 bytes
    put16(&d[514], v.limits->max_queue_size);             // MAXCMD
    put32(&d[516], nn);
    put16(&d[520], v.discovery() ? 0 : oncs_dataset_management | oncs_write_zeroes);
    d[525] = v.discovery() ? 0 : 1;                       // VWC: Flush is honoured
    put32(&d[536], sgls_supported | sgls_offset | (v.limits->trtype == trtype_rdma ? sgls_keyed : 0));
    put_string(d.subspan(768, 256), v.subsystem->nqn(), 0);
    // The discovery controller has only the admin queue: a bare SQE / CQE.
    const std::uint32_t icd = v.discovery() ? 0 : v.limits->in_capsule_data;
    put32(&d[1792], std::uint32_t((wire::sqe_len + icd) / 16));  // IOCCSZ
    put32(&d[1796], std::uint32_t(wire::cqe_len / 16));    // IORCSZ
    put16(&d[1800], 0);                                   // ICDOFF
    d[1802] = 0;                                          // FCATT: dynamic controllers
    d[1803] = 1;                                          // MSDBD
}

Outcome identify_controller(const ControllerView& v) {
    std::vector<std::uint8_t> d(identify_len);
    const std::uint32_t nn = v.discovery() ? 0 : highest_nsid(*v.subsystem, v.subsystem->namespaces());
    fill_controller_head(d, v);
    fill_controller_tail(d, v, nn);
    return with_data(std::move(d));
}

const NamespaceView* find_view(const std::vector<NamespaceView>& views, std::uint32_t nsid) {
    auto it = std::find_if(views.begin(), views.end(), [&](const NamespaceView& n) { return n.nsid == nsid; });
    return it == views.end() ? nullptr : &*it;
}

// An inactive nsid within 1..NN reads as zeros (the spec's "inactive
// namespace"); outside that range it is invalid.
Outcome identify_namespace(const ControllerView& v, std::uint32_t nsid) {
    const auto views = v.subsystem->namespaces();
    if (nsid == 0 || nsid > highest_nsid(*v.subsystem, views)) return failed(wire::sc::invalid_ns);
    std::vector<std::uint8_t> d(identify_len);
    if (const auto* n = find_view(views, nsid)) {
        put64(&d[0], n->blocks);                          // NSZE
        put64(&d[8], n->blocks);                          // NCAP
        put64(&d[16], n->blocks);                         // NUSE
        d[25] = 0;                                        // NLBAF: one format
        d[26] = 0;                                        // FLBAS: format 0
        d[30] = nmic_shared;
        d[33] = n->deallocated_reads_zeroes ? dlfeat_reads_zeroes : 0;  // DLFEAT
        std::memcpy(&d[104], n->nguid.data(), n->nguid.size());
        put16(&d[128], 0);                                // LBAF0.MS
        d[130] = n->block_size ? std::uint8_t(std::bit_width(n->block_size) - 1) : 0;  // LBAF0.LBADS
    }
    return with_data(std::move(d));
}

Outcome active_namespaces(const ControllerView& v, std::uint32_t after) {
    if (after >= 0xFFFFFFFE) return failed(wire::sc::invalid_ns);
    std::vector<std::uint32_t> ids;
    for (const auto& n : v.subsystem->namespaces())
        if (n.nsid > after) ids.push_back(n.nsid);
    std::sort(ids.begin(), ids.end());
    ids.resize(std::min(ids.size(), max_ns_list));
    std::vector<std::uint8_t> d(identify_len);
    for (std::size_t i = 0; i < ids.size(); ++i) put32(&d[i * 4], ids[i]);
    return with_data(std::move(d));
}

// One NGUID descriptor (NIDT 2, NIDL 16); the zeros after it end the list.
Outcome namespace_descriptors(const ControllerView& v, std::uint32_t nsid) {
    const auto views = v.subsystem->namespaces();
    const auto* n = find_view(views, nsid);
    if (!n) return failed(wire::sc::invalid_ns);
    std::vector<std::uint8_t> d(identify_len);
    d[0] = 2;
    d[1] = 16;
    std::memcpy(&d[4], n->nguid.data(), n->nguid.size());
    return with_data(std::move(d));
}

} // namespace

std::uint32_t highest_nsid(const Subsystem& sub, const std::vector<NamespaceView>& views) {
    std::uint32_t nn = 0;
    for (const auto& n : views) nn = std::max(nn, n.nsid);
    for (const auto& n : sub.spec().namespaces) nn = std::max(nn, n.nsid);
    return nn;
}

void put_string(std::span<std::uint8_t> out, std::string_view s, std::uint8_t pad) {
    const auto n = std::min(out.size(), s.size());
    std::memcpy(out.data(), s.data(), n);
    std::fill(out.begin() + std::ptrdiff_t(n), out.end(), pad);
}

Outcome identify(const ControllerView& v, const wire::Sqe& sqe) {
    const auto cns = std::uint8_t(sqe.cdw(10) & 0xFF);
    if (cns == wire::cns::ctrl) return identify_controller(v);
    // A discovery controller has no namespaces to describe.
    if (v.discovery()) return failed(wire::sc::invalid_field);
    switch (cns) {
    case wire::cns::ns: return identify_namespace(v, sqe.nsid());
    case wire::cns::active_ns_list: return active_namespaces(v, sqe.nsid());
    case wire::cns::ns_desc_list: return namespace_descriptors(v, sqe.nsid());
    default: return failed(wire::sc::invalid_field);
    }
}

} // namespace rpm::nvmf::target
