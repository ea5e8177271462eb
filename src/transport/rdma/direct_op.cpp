#include "transport/rdma/direct_op.hpp"

#include <cstring>
#include <utility>

namespace rpm::rdma {
namespace {

// No error, made once: std::error_code{} calls std::system_category() in
// libstdc++, a call per use on every direct operation (twice).
const std::error_code kSuccess{};

} // namespace

void DirectOp::begin(OpKind kind, OpQueue::DirectHold& hold, std::shared_ptr<UserMemory> user,
                     std::span<std::byte> out, client::Done* done, std::uint64_t sync_gen, std::uint64_t before_seq) {
    active_ = true;
    kind_ = kind;
    owed_ = 1;
    wc_done_ = false;
    rid_ = 0;
    out_ = out;
    hold_ = std::exchange(hold, {});
    user_ = std::move(user);
    ec_ = kSuccess;
    if (done)
        done_ = std::move(*done);
    else
        done_ = nullptr;  // inline: an empty one holds nothing to destroy
    sync_gen_ = sync_gen;
    before_seq_ = before_seq;
    posts_.fetch_add(1, std::memory_order_relaxed);
}

void DirectOp::post_failed(OpQueue& ops, std::error_code ec) {
    active_ = false;
    ops.end_direct(hold_, false);
    ec_ = ec;
    finished_ = true;
}

bool DirectOp::on_completion(OpQueue& ops) {
    wc_done_ = true;
    // RC completes in order: what went unsignaled before it is done too.
    ops.retire_unsignaled_before(before_seq_);
    if (kind_ == OpKind::read && hold_.entry) std::memcpy(out_.data(), hold_.entry->data(), out_.size());
    return settle(ops, kSuccess);
}

bool DirectOp::settle(OpQueue& ops, std::error_code ec) {
    if (ec && !ec_) ec_ = ec;
    if (--owed_ > 0) return false;
    active_ = false;
    ops.end_direct(hold_, false);
    finished_ = true;
    return true;
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
