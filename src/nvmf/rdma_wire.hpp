#pragma once
// NVMe/RDMA's own wire pieces (NVMe over Fabrics RDMA transport binding;
// Linux's include/linux/nvme-rdma.h agrees): the private data of the
// rdma_cm connection request, accept and reject, and the keyed SGL data
// block descriptor through which a command names host memory. Pure
// functions over bytes, so the unit tests and the fuzz target reach them
// without a device.

#include "nvmf/wire.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <span>

namespace rpm::nvmf::rdma_wire {

inline constexpr std::size_t cm_req_len = 32;  ///< RDMA_CM_REQUEST private data
inline constexpr std::size_t cm_rep_len = 32;  ///< RDMA_CM_ACCEPT
inline constexpr std::size_t cm_rej_len = 4;   ///< RDMA_CM_REJECT

/// RDMA_CM_REJECT's status (STS).
enum class CmStatus : std::uint16_t {
    invalid_length = 0x01,   ///< the request's private data is too short
    invalid_recfmt = 0x02,
    invalid_qid = 0x03,
    invalid_hsqsize = 0x04,
    invalid_hrqsize = 0x05,
    no_resources = 0x06,
    invalid_ird = 0x07,
    invalid_ord = 0x08,
    invalid_cntlid = 0x09,
};

/// A checked connection request.
struct CmRequest {
    std::uint16_t qid = 0;
    std::uint16_t hrqsize = 0;  ///< receive entries the host posted for responses (1's based)
    std::uint16_t hsqsize = 0;  ///< the host's SQ size, 0's based: up to hsqsize + 1 capsules outstanding
    std::uint16_t cntlid = 0;
    std::uint32_t depth() const { return std::uint32_t(hsqsize) + 1; }
};

/// The request's private data, checked against what this target serves:
/// an admin queue (qid 0) of at most `admin_depth` entries, I/O queues of
/// at most `io_depth`, qid up to `max_qid`. RETURN VALUE: the request, or
/// the status to reject it with.
struct CmCheck {
    std::optional<CmRequest> request;
    CmStatus reject = CmStatus::invalid_length;
};
CmCheck parse_cm_request(std::span<const std::uint8_t> pdata, std::uint16_t max_qid, std::uint32_t admin_depth,
                         std::uint32_t io_depth);

/// RDMA_CM_ACCEPT: RECFMT 0 and CRQSIZE (the capsules the controller takes at once).
std::array<std::uint8_t, cm_rep_len> cm_accept(std::uint16_t crqsize);
/// RDMA_CM_REJECT: RECFMT 0 and the status.
std::array<std::uint8_t, cm_rej_len> cm_reject(CmStatus status);

// SGL descriptor type bytes NVMe/RDMA uses (SQE byte 39).
inline constexpr std::uint8_t sgl_keyed = 0x40;             ///< keyed data block, address
inline constexpr std::uint8_t sgl_keyed_invalidate = 0x4F;  ///< keyed data block, address, invalidate the key

/// Where a command's data is, as NVMe/RDMA carries it: in the capsule
/// after the SQE (an offset data block), or in host memory named by a
/// keyed SGL (addr, key), which the target reads with RDMA READ and
/// writes with RDMA WRITE.
struct RdmaData {
    wire::CommandData data;
    std::uint64_t addr = 0;
    std::uint32_t key = 0;
    /// The host asked the key to be invalidated with the response (SEND
    /// with invalidate).
    bool invalidate = false;
};

/// Decode `sqe`'s SGL; `capsule_data` is what followed the SQE in the
/// capsule (empty for a bare SQE). A descriptor NVMe/RDMA does not carry,
/// an offset outside the capsule or a length that disagrees with it sets
/// data.status (the command is refused with it; the queue goes on).
RdmaData decode_sgl(const wire::Sqe& sqe, std::span<const std::uint8_t> capsule_data);

} // namespace rpm::nvmf::rdma_wire
