// CRC32C (Castagnoli) for the NVMe/TCP header and data digests.
#include "nvmf/pdu/pdu.hpp"

#include <boost/crc.hpp>

namespace rpm::nvmf::pdu {
namespace {
// Reflected in and out, initial value and final xor all ones: the iSCSI /
// NVMe/TCP CRC32C. crc32c("123456789") is 0xE3069283.
using Castagnoli = boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true>;

std::uint32_t bit_reverse(std::uint32_t v) {
    std::uint32_t r = 0;
    for (int i = 0; i < 32; ++i, v >>= 1) r = (r << 1) | (v & 1u);
    return r;
}
} // namespace

std::uint32_t crc32c(std::span<const std::uint8_t> bytes) {
    Castagnoli c;
    c.process_bytes(bytes.data(), bytes.size());
    return c.checksum();
}

std::uint32_t crc32c_extend(std::uint32_t crc, std::span<const std::uint8_t> bytes) {
    // A finished CRC is the running remainder, reflected, with the final
    // xor applied. Boost's constructor takes an initial remainder in
    // unreflected form (it reflects it for a reflected CRC), so undo both
    // to resume where the first part stopped.
    Castagnoli c(bit_reverse(~crc));
    c.process_bytes(bytes.data(), bytes.size());
    return c.checksum();
}

} // namespace rpm::nvmf::pdu
