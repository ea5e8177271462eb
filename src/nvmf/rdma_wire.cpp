// NVMe/RDMA's connection private data and keyed SGLs (wire.hpp).
#include "nvmf/rdma_wire.hpp"

namespace rpm::nvmf::rdma_wire {

using wire::get16;
using wire::get32;
using wire::get64;
using wire::put16;

CmCheck parse_cm_request(std::span<const std::uint8_t> pdata, std::uint16_t max_qid, std::uint32_t admin_depth,
                         std::uint32_t io_depth) {
    CmCheck c;
    if (pdata.size() < cm_req_len) return c;  // invalid_length
    if (get16(&pdata[0]) != 0) {
        c.reject = CmStatus::invalid_recfmt;
        return c;
    }
    CmRequest r{get16(&pdata[2]), get16(&pdata[4]), get16(&pdata[6]), get16(&pdata[8])};
    const auto most = r.qid == 0 ? admin_depth : io_depth;
    if (r.qid > max_qid) c.reject = CmStatus::invalid_qid;
    // HSQSIZE is 0's based: 0 would be a queue of one entry, which NVMe
    // does not allow (a queue needs two, one always empty).
    else if (r.hsqsize == 0 || r.depth() > most) c.reject = CmStatus::invalid_hsqsize;
    // The host must be able to take a response for every command it may send.
    else if (r.hrqsize < r.depth() || r.hrqsize > most + 1) c.reject = CmStatus::invalid_hrqsize;
    else c.request = r;
    return c;
}

std::array<std::uint8_t, cm_rep_len> cm_accept(std::uint16_t crqsize) {
    std::array<std::uint8_t, cm_rep_len> a{};
    put16(&a[2], crqsize);
    return a;
}

std::array<std::uint8_t, cm_rej_len> cm_reject(CmStatus status) {
    std::array<std::uint8_t, cm_rej_len> a{};
    put16(&a[2], std::uint16_t(status));
    return a;
}

RdmaData decode_sgl(const wire::Sqe& sqe, std::span<const std::uint8_t> capsule_data) {
    RdmaData r;
    auto& d = r.data;
    const auto type = sqe.sgl_type();
    if (type == wire::sgl_incapsule) {
        // Offset data block: the data is in the capsule, `offset` bytes after the SQE.
        const auto offset = sqe.sgl_addr();
        d.length = sqe.sgl_length();
        if (d.length == 0 && capsule_data.empty()) return r;
        d.where = wire::CommandData::Where::in_capsule;
        if (offset > capsule_data.size()) {
            d.status = wire::sc::sgl_offset_invalid;
            return r;
        }
        const auto rest = capsule_data.subspan(std::size_t(offset));
        if (d.length > rest.size()) {
            d.status = wire::sc::sgl_data_length_invalid;
            return r;
        }
        d.bytes = rest.first(d.length);
        return r;
    }
    if (type != sgl_keyed && type != sgl_keyed_invalidate) {
        d.status = wire::sc::sgl_descriptor_type_invalid;
        return r;
    }
    // Keyed data block: address (8 bytes), length (3 bytes), key (4 bytes).
    const auto* s = &sqe.b[24];
    r.addr = get64(s);
    d.length = std::uint32_t(s[8]) | std::uint32_t(s[9]) << 8 | std::uint32_t(s[10]) << 16;
    r.key = get32(s + 11);
    r.invalidate = type == sgl_keyed_invalidate;
    if (d.length == 0) return r;  // no data; the key may still be invalidated
    d.where = wire::CommandData::Where::host;
    return r;
}

} // namespace rpm::nvmf::rdma_wire
