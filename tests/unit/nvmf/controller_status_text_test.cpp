// describe_status: the text logs and error details carry.
#include "nvmf/wire.hpp"

#include <rpm/nvmf.hpp>

#include <gtest/gtest.h>

namespace rpm::nvmf {
namespace {

TEST(NvmfControllerStatusText, GenericWithDnr) {
    EXPECT_EQ(describe_status(wire::sc::lba_out_of_range), "SCT 0x0 SC 0x80 (LBA Out of Range), DNR");
    EXPECT_EQ(describe_status(wire::sc::invalid_field), "SCT 0x0 SC 0x02 (Invalid Field in Command), DNR");
}

TEST(NvmfControllerStatusText, SuccessHasNoDnr) {
    EXPECT_EQ(describe_status(wire::sc::success), "SCT 0x0 SC 0x00 (Successful Completion)");
}

TEST(NvmfControllerStatusText, RetryableStatusHasNoDnr) {
    EXPECT_EQ(describe_status(wire::sc::abort_sq_deletion), "SCT 0x0 SC 0x08 (Command Aborted due to SQ Deletion)");
}

TEST(NvmfControllerStatusText, CommandSpecificAndFabrics) {
    EXPECT_EQ(describe_status(wire::sc::invalid_log_page), "SCT 0x1 SC 0x09 (Invalid Log Page), DNR");
    EXPECT_EQ(describe_status(wire::sc::connect_invalid_host), "SCT 0x1 SC 0x84 (Connect Invalid Host), DNR");
    EXPECT_EQ(describe_status(wire::sc::async_event_limit_exceeded),
              "SCT 0x1 SC 0x05 (Asynchronous Event Request Limit Exceeded), DNR");
}

TEST(NvmfControllerStatusText, MediaErrors) {
    EXPECT_EQ(describe_status(wire::sc::write_fault), "SCT 0x2 SC 0x80 (Write Fault), DNR");
}

TEST(NvmfControllerStatusText, UnknownCodeIsSaidSo) {
    EXPECT_EQ(describe_status(wire::sc::make(1, 0x7F)), "SCT 0x1 SC 0x7f (unknown), DNR");
    EXPECT_EQ(describe_status(wire::sc::make(7, 0xFF, false)), "SCT 0x7 SC 0xff (unknown)");
}

} // namespace
} // namespace rpm::nvmf
