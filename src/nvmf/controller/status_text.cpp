// describe_status: an NVMe status as "SCT 0x0 SC 0x80 (LBA Out of Range), DNR"
// for logs and error details. Names are the NVMe Base / NVMe-oF ones; in
// command-specific SCT 1, codes from 0x80 are read as the Fabrics ones
// (the only command-specific codes at or above 0x80 this library meets).
#include "nvmf/wire.hpp"

#include <rpm/nvmf.hpp>

#include <array>
#include <cstdio>
#include <string_view>

namespace rpm::nvmf {

namespace {

struct Name {
    std::uint8_t sct;
    std::uint8_t sc;
    std::string_view text;
};

constexpr std::array names{
    Name{0, 0x00, "Successful Completion"},
    Name{0, 0x01, "Invalid Command Opcode"},
    Name{0, 0x02, "Invalid Field in Command"},
    Name{0, 0x03, "Command ID Conflict"},
    Name{0, 0x04, "Data Transfer Error"},
    Name{0, 0x05, "Commands Aborted due to Power Loss Notification"},
    Name{0, 0x06, "Internal Error"},
    Name{0, 0x07, "Command Abort Requested"},
    Name{0, 0x08, "Command Aborted due to SQ Deletion"},
    Name{0, 0x0B, "Invalid Namespace or Format"},
    Name{0, 0x0C, "Command Sequence Error"},
    Name{0, 0x0D, "Invalid SGL Segment Descriptor"},
    Name{0, 0x0E, "Invalid Number of SGL Descriptors"},
    Name{0, 0x0F, "Data SGL Length Invalid"},
    Name{0, 0x11, "SGL Descriptor Type Invalid"},
    Name{0, 0x16, "SGL Offset Invalid"},
    Name{0, 0x18, "Host Identifier Inconsistent Format"},
    Name{0, 0x19, "Keep Alive Timer Expired"},
    Name{0, 0x1A, "Keep Alive Timeout Invalid"},
    Name{0, 0x20, "Namespace is Write Protected"},
    Name{0, 0x21, "Command Interrupted"},
    Name{0, 0x22, "Transient Transport Error"},
    Name{0, 0x80, "LBA Out of Range"},
    Name{0, 0x81, "Capacity Exceeded"},
    Name{0, 0x82, "Namespace Not Ready"},
    Name{0, 0x83, "Reservation Conflict"},
    Name{1, 0x00, "Completion Queue Invalid"},
    Name{1, 0x01, "Invalid Queue Identifier"},
    Name{1, 0x02, "Invalid Queue Size"},
    Name{1, 0x03, "Abort Command Limit Exceeded"},
    Name{1, 0x05, "Asynchronous Event Request Limit Exceeded"},
    Name{1, 0x09, "Invalid Log Page"},
    Name{1, 0x0A, "Invalid Format"},
    Name{1, 0x0D, "Feature Identifier Not Saveable"},
    Name{1, 0x0E, "Feature Not Changeable"},
    Name{1, 0x0F, "Feature Not Namespace Specific"},
    Name{1, 0x80, "Connect Incompatible Format"},
    Name{1, 0x81, "Connect Controller Busy"},
    Name{1, 0x82, "Connect Invalid Parameters"},
    Name{1, 0x83, "Connect Restart Discovery"},
    Name{1, 0x84, "Connect Invalid Host"},
    Name{1, 0x90, "Discover Restart"},
    Name{1, 0x91, "Authentication Required"},
    Name{2, 0x80, "Write Fault"},
    Name{2, 0x81, "Unrecovered Read Error"},
    Name{2, 0x82, "End-to-end Guard Check Error"},
    Name{2, 0x83, "End-to-end Application Tag Check Error"},
    Name{2, 0x84, "End-to-end Reference Tag Check Error"},
    Name{2, 0x85, "Compare Failure"},
    Name{2, 0x86, "Access Denied"},
    Name{2, 0x87, "Deallocated or Unwritten Logical Block"},
};

std::string_view name_of(std::uint8_t sct, std::uint8_t sc) {
    for (const auto& n : names)
        if (n.sct == sct && n.sc == sc) return n.text;
    return "unknown";
}

} // namespace

std::string describe_status(std::uint16_t status) {
    const auto sct = wire::sc::sct_of(status);
    const auto sc = wire::sc::code_of(status);
    char head[32];
    std::snprintf(head, sizeof head, "SCT 0x%x SC 0x%02x (", unsigned(sct), unsigned(sc));
    std::string out = head;
    out += name_of(sct, sc);
    out += ')';
    if (status & wire::sc::dnr) out += ", DNR";
    return out;
}

} // namespace rpm::nvmf
