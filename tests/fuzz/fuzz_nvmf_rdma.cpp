// libFuzzer target: arbitrary bytes through NVMe/RDMA's decoders
// (src/nvmf/rdma_wire.cpp), as the target reads what a host sends: the
// private data of an rdma_cm connection request, and a received command
// capsule's SGL (the 64-byte SQE, then whatever followed it).
//
// Input: one selector byte (bits 0-3: the I/O queues served, 0..15; bit 4:
// admin depth 32 else 2; bits 5-7: the I/O queue depth 2 << n), then the
// private data of a request (its first byte says how long: 0..63), then a
// capsule. Checks: a request taken names a queue the target serves, of a
// depth it allows, with room for the host's responses; a capsule's data is
// either refused (a status), or in the capsule and inside it, or in host
// memory with a 24-bit length and a keyed descriptor.
#include "nvmf/rdma_wire.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {
using namespace rpm::nvmf;

void require(bool ok, const char* what) {
    if (!ok) {
        std::fprintf(stderr, "fuzz check failed: %s\n", what);
        std::abort();
    }
}

bool inside(std::span<const std::uint8_t> part, std::span<const std::uint8_t> whole) {
    return part.empty() || (part.data() >= whole.data() && part.data() + part.size() <= whole.data() + whole.size());
}

void check_request(std::span<const std::uint8_t> pdata, std::uint8_t sel) {
    const std::uint16_t max_qid = sel & 0x0F;
    const std::uint32_t admin_depth = (sel & 0x10) ? 32 : 2;
    const std::uint32_t io_depth = 2u << ((sel >> 5) & 7);
    const auto c = rdma_wire::parse_cm_request(pdata, max_qid, admin_depth, io_depth);
    if (!c.request) {
        require(c.reject >= rdma_wire::CmStatus::invalid_length && c.reject <= rdma_wire::CmStatus::invalid_cntlid,
                "a refused request names a status of the binding");
        return;
    }
    const auto& r = *c.request;
    require(pdata.size() >= rdma_wire::cm_req_len, "a request shorter than 32 bytes was taken");
    require(wire::get16(pdata.data()) == 0, "a RECFMT other than 0 was taken");
    require(r.qid <= max_qid, "a qid beyond the I/O queues served");
    require(r.depth() >= 2 && r.depth() <= (r.qid == 0 ? admin_depth : io_depth), "a queue depth not allowed");
    require(r.hrqsize >= r.depth(), "a host that cannot take a response per command");
    const auto accept = rdma_wire::cm_accept(std::uint16_t(r.depth()));
    require(wire::get16(&accept[2]) == r.depth(), "CRQSIZE is not the depth taken");
}

void check_capsule(std::span<const std::uint8_t> capsule) {
    if (capsule.size() < wire::sqe_len) return;  // the queue ends before decoding
    wire::Sqe sqe;
    std::memcpy(sqe.b.data(), capsule.data(), wire::sqe_len);
    const auto rest = capsule.subspan(wire::sqe_len);
    const auto r = rdma_wire::decode_sgl(sqe, rest);
    const auto& d = r.data;
    if (d.status != 0) return;
    switch (d.where) {
    case wire::CommandData::Where::in_capsule:
        require(sqe.sgl_type() == wire::sgl_incapsule, "capsule data from a descriptor that is not an offset block");
        require(d.bytes.size() == d.length, "in-capsule bytes disagree with the SGL's length");
        require(inside(d.bytes, rest), "in-capsule bytes outside what followed the SQE");
        break;
    case wire::CommandData::Where::host:
        require(sqe.sgl_type() == rdma_wire::sgl_keyed || sqe.sgl_type() == rdma_wire::sgl_keyed_invalidate,
                "host memory named by a descriptor that is not keyed");
        require(d.length > 0 && d.length < (1u << 24), "a keyed length beyond 24 bits, or 0");
        require(r.invalidate == (sqe.sgl_type() == rdma_wire::sgl_keyed_invalidate), "invalidate without its subtype");
        break;
    case wire::CommandData::Where::none:
        require(d.length == 0, "no data, but a length");
        break;
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 2) return 0;
    const std::uint8_t sel = data[0];
    const std::size_t plen = std::min<std::size_t>(data[1] & 0x3F, size - 2);
    const std::span<const std::uint8_t> input(data + 2, size - 2);
    check_request(input.first(plen), sel);
    check_capsule(input.subspan(plen));
    return 0;
}
