#include "transport/rdma/direct_op.hpp"

#include <cstring>
#include <utility>

namespace rpm::rdma {

const std::error_code DirectOp::kSuccess{};

void DirectOp::post_failed(OpQueue& ops, std::error_code ec) {
    active_ = false;
    ops.end_direct(hold_, false);
    ec_ = ec;
    finished_ = true;
}

void DirectOp::fail(OpQueue& ops, std::error_code ec) {
    if (!active_) return;
    active_ = false;
    rid_ = 0;
    ops.end_direct(hold_, !wc_done_);
    ec_ = ec;
    finished_ = true;
}

void DirectOp::release(OpQueue& ops) {
    if (hold_.entry || hold_.slot) ops.end_direct(hold_, true);
}

} // namespace rpm::rdma
