// ClientConn's operations: each becomes one or more Ops, queued in posting
// order and posted as soon as their resources are free.
//
// write/read go through bounce entries (one per chunk of at most lim_.chunk,
// at offset 0 of the entry), or, when the span lies in memory the
// application registered (register_memory), straight from or into it;
// atomic_write is one atomic_write; flush is what the region's flusher
// (flusher.hpp, chosen when the grant was applied) queues: an 8-byte
// RDMA read, a Flush frame, or native FLUSHes.
#include "core/small_buffer.hpp"
#include "protocol/commit_word.hpp"
#include "transport/rdma/client.hpp"
#include "transport/rdma/frames.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <utility>

namespace rpm::rdma {
namespace {

const void* op_context(std::uint64_t seq) noexcept { return reinterpret_cast<const void*>(seq); }

LocalMr* bounce_mr(const Op& op) noexcept { return static_cast<LocalMr*>(op.bounce->handle()); }

// Queued, not posted: pump_locked rings the doorbell once for the round.
constexpr int kSignaled = kCompletionAlways | kDeferDoorbell;

// An unsignaled write or send still reports a failure (its wr_id finds the op).
int write_flags(const Op& op) noexcept {
    return (op.unsignaled ? kCompletionOnError : kCompletionAlways) | kDeferDoorbell;
}

// The protocol is little-endian; the 8 bytes land in the region as they are sent.
std::uint64_t to_wire(std::uint64_t v) noexcept {
    if constexpr (std::endian::native == std::endian::little) return v;
    std::uint64_t r = 0;
    for (int i = 0; i < 8; ++i) r = (r << 8) | ((v >> (8 * i)) & 0xff);
    return r;
}

// n callbacks for the n chunks of one call: the call's `done` runs after the
// last chunk (callbacks run in posting order), with the first error.
std::vector<client::Done> chunk_callbacks(client::Done done, std::size_t n) {
    if (n == 1) return {std::move(done)};
    const client::FirstError parts(std::move(done));
    std::vector<client::Done> out;
    for (std::size_t i = 0; i + 1 < n; ++i) out.push_back(parts.part());
    out.push_back(parts.last());
    return out;
}

} // namespace

void ClientConn::submit_locked(Op&& op) {
    const bool request = op.kind == OpKind::request && !op.ec;
    const auto rid = op.request_id;
    const auto seq = ops_.push(std::move(op));
    if (request) requests_.await(rid, seq);
    if (batching_) return;  // persist() queues its ops first, then posts them together
    if (failed_)
        ops_.fail_all(fail_ec_);
    else
        pump_locked();
    // Callbacks run where the CQ is polled: wake that thread for anything
    // finished now, to start polling the bounce pool when it had no entry,
    // and the parked I/O thread for anything at all once no caller drives.
    if (ops_.front_finished() || ops_.starved() || (io_.parked && drive_.drivers == 0)) notify_locked();
}

void ClientConn::pump_queue_locked() {
    // Nothing is queued in the verbs layer outside this function (and
    // pump_locked's check).
    // Every op the round can post joins one chain, and one doorbell posts
    // it: a persist's writes and its flush go out in a single ibv_post_send.
    ops_.pump([this](Op& o) { return post_locked(o); });
    const bool orphaned = ops_.take_orphaned();
    int ret = std::exchange(ring_error_, 0);
    if (ret == 0 && link_.connected()) ret = api_.ring(link_.conn());
    // Some of the chain may be on the wire and the rest never will be: no
    // completion would finish those ops, so the connection fails.
    if (ret != 0)
        return fail_locked(errc::io_error, call_failure(errc::io_error, link_.where(), "posting work requests", ret).detail());
    if (orphaned) fail_locked(errc::io_error, link_.where() + ": a persist's flush could not be posted behind its write");
}

void ClientConn::submit_error(client::Done done, std::error_code ec) {
    Op op;
    op.done = std::move(done);
    op.ec = ec;
    std::lock_guard lock(mu_);
    submit_locked(std::move(op));
}

void ClientConn::submit_flush_locked(std::uint32_t grant_id, std::span<const proto::Range> ranges,
                                     client::Done&& done) {
    const RemoteRegion* r = region_locked(grant_id);
    if (!r || ranges.size() > proto::kMaxRanges) {
        Op op;
        op.ec = errc::invalid_argument;
        op.done = std::move(done);
        return submit_locked(std::move(op));
    }
    // The flusher's ops that join the next are queued, not posted: the last
    // one posts them all (after a persist's writes) under one doorbell.
    const bool batching = batching_;
    r->flusher->queue(flush_work_, *r, grant_id, ranges, std::move(done), [&](Op&& op) {
        batching_ = batching || op.joins_next;
        submit_locked(std::move(op));
    });
    batching_ = batching;
}

void ClientConn::submit_chunks_locked(Op&& tmpl, std::uint64_t offset, std::size_t length, client::Done&& done) {
    // A bounce entry holds lim_.chunk bytes; registered memory needs no
    // entry, and one work request moves it all (up to kMaxUserChunk).
    const std::size_t chunk = tmpl.user ? kMaxUserChunk : lim_.chunk;
    const std::size_t n = length == 0 ? 1 : (length + chunk - 1) / chunk;
    if (n == 1) {
        // Most calls: the template is the op, and its callback the call's
        // (no per-chunk callbacks to build, no copy).
        tmpl.kind = length == 0 ? OpKind::none : tmpl.kind;
        tmpl.remote_offset = offset;
        tmpl.length = length;
        tmpl.done = std::move(done);
        return submit_locked(std::move(tmpl));
    }
    // A persist's write has no callback of its own (Op::joins_next): nor have its chunks.
    auto dones = done ? chunk_callbacks(std::move(done), n) : std::vector<client::Done>(n);
    for (std::size_t i = 0; i < n; ++i) {
        Op op = tmpl;
        const std::size_t at = i * chunk;
        const std::size_t len = std::min(chunk, length - at);
        op.kind = length == 0 ? OpKind::none : tmpl.kind;
        op.remote_offset = offset + at;
        op.length = len;
        if (!tmpl.src.empty()) op.src = tmpl.src.subspan(at, len);
        if (!tmpl.out.empty()) op.out = tmpl.out.subspan(at, len);
        op.done = std::move(dones[i]);
        submit_locked(std::move(op));
    }
}

void ClientConn::submit_transfer(Op&& op, std::uint32_t grant_id, std::uint64_t offset, std::size_t length,
                                 client::Done&& done) {
    std::lock_guard lock(mu_);
    submit_transfer_locked(std::move(op), grant_id, offset, length, std::move(done));
}

void ClientConn::submit_transfer_locked(Op&& op, std::uint32_t grant_id, std::uint64_t offset, std::size_t length,
                                        client::Done&& done) {
    const RemoteRegion* r = region_locked(grant_id);
    if (!r) {
        op.kind = OpKind::none;
        op.ec = errc::invalid_argument;
        op.done = std::move(done);
        return submit_locked(std::move(op));
    }
    op.remote = r->mr.get();
    if (length > 0) op.user = user_memory_locked(op.kind == OpKind::write ? op.src.data() : op.out.data(), length);
    submit_chunks_locked(std::move(op), offset, length, std::move(done));
}

Result<std::shared_ptr<void>> ClientConn::register_memory(std::span<std::byte> mem) {
    if (mem.empty()) return Error(errc::invalid_argument, link_.where() + ": cannot register empty memory");
    {
        std::lock_guard lock(mu_);
        if (failed_) return Error(fail_ec_, link_.where() + ": the connection is closed: " + fail_why_);
    }
    auto m = std::make_shared<UserMemory>();
    m->device = link_.device();
    m->mr = MrHandle(api_);
    m->base = mem.data();
    m->size = mem.size();
    if (int ret = api_.mr_reg(link_.device()->peer(), mem.data(), mem.size(), kUserMemoryUsage, m->mr.out()); ret != 0)
        return call_failure(ret == kErrInval ? errc::invalid_argument : errc::io_error,
                            link_.where() + ": registering " + std::to_string(mem.size()) + " bytes of application memory",
                            "mr_reg", ret);
    std::lock_guard lock(mu_);
    regions_.add_user_memory(m);
    return std::shared_ptr<void>(std::move(m));
}

void ClientConn::write(const proto::RegionGrant& g, std::uint64_t offset, std::span<const std::byte> data,
                       client::Done done) {
    if (try_direct(OpKind::write, g.id, offset, data, {}, &done)) return;
    Op op;
    op.kind = OpKind::write;
    op.src = data;
    submit_transfer(std::move(op), g.id, offset, data.size(), std::move(done));
}

void ClientConn::read(const proto::RegionGrant& g, std::uint64_t offset, std::span<std::byte> out,
                      client::Done done) {
    if (try_direct(OpKind::read, g.id, offset, {}, out, &done)) return;
    Op op;
    op.kind = OpKind::read;
    op.out = out;
    submit_transfer(std::move(op), g.id, offset, out.size(), std::move(done));
}

void ClientConn::atomic_write(const proto::RegionGrant& g, std::uint64_t offset, std::uint64_t value,
                              client::Done done) {
    std::lock_guard lock(mu_);
    submit_locked(atomic_op_locked(g.id, offset, to_wire(value), std::move(done)));
}

Op ClientConn::atomic_op_locked(std::uint32_t grant_id, std::uint64_t offset, std::uint64_t wire_value,
                                client::Done done) const {
    const RemoteRegion* r = region_locked(grant_id);
    Op op;
    op.kind = OpKind::atomic_write;
    op.done = std::move(done);
    // IBTA atomic write, and the fenced write standing in for it, need an
    // 8-byte aligned destination (kAtomicWriteAlignment).
    if (!r) op.ec = errc::invalid_argument;
    else if (offset % kAtomicWriteAlignment != 0) op.ec = errc::misaligned;
    op.remote = r ? r->mr.get() : nullptr;
    op.remote_offset = offset;
    op.length = 8;
    op.value = wire_value;
    return op;
}

bool ClientConn::commit_word(const proto::Slice& s) const noexcept {
    return link_.atomic_kind() == AtomicWriteKind::native && proto::is_commit_word(s);
}

void ClientConn::flush(const proto::RegionGrant& g, std::span<const proto::Range> ranges, client::Done done) {
    std::lock_guard lock(mu_);
    submit_flush_locked(g.id, ranges, std::move(done));
}

void ClientConn::persist(const proto::RegionGrant& g, std::span<const proto::Slice> slices, client::Done done) {
    // One slice on an idle connection: straight to the verbs layer (client_direct.cpp).
    if (try_direct_persist(g, slices, done)) return;
    // A write per slice, then one flush of their ranges, queued under one
    // lock and posted together: the last write goes right in front of the
    // flush, so it needs no completion of its own (OpQueue::pump). The
    // writes have no callback: they join the flush's (Op::joins_next), and
    // the caller hears the first error of them all.
    SmallBuffer<proto::Range, 8> room(slices.size());
    const std::span<proto::Range> ranges = room.all();
    std::lock_guard lock(mu_);
    batching_ = true;
    for (std::size_t i = 0; i < slices.size(); ++i) {
        const auto& s = slices[i];
        ranges[i] = {s.offset, s.data.size()};
        if (commit_word(s)) {
            // A commit word (protocol/commit_word.hpp): where the device has
            // atomic write it goes as one, like atomic_write.
            Op op = atomic_op_locked(g.id, s.offset, proto::commit_word_value(s), nullptr);
            op.joins_next = true;
            submit_locked(std::move(op));
            continue;
        }
        Op op;
        op.kind = OpKind::write;
        op.src = s.data;
        op.chain = true;
        op.joins_next = true;
        submit_transfer_locked(std::move(op), g.id, s.offset, s.data.size(), nullptr);
    }
    batching_ = false;
    submit_flush_locked(g.id, ranges, std::move(done));
}

void ClientConn::send(std::span<const std::byte> payload, client::Done done) {
    std::vector<std::byte> frame;
    const auto rid = requests_.next_id();
    proto::encode_message(frame, rid, payload);
    std::lock_guard lock(mu_);
    // The server answers every message with a Response, as over TCP.
    submit_locked(request_op(std::move(frame), rid, response_status, std::move(done), link_.layout().slot_size()));
}

void ClientConn::recv(std::span<std::byte> out, client::RecvDone done) {
    std::lock_guard lock(mu_);
    inbox_.recv(out, std::move(done), failed_ ? fail_ec_ : std::error_code{},
                [this](std::error_code ec, std::size_t n) { return recv_outcome_locked(ec, n); });
    // A waiter needs someone watching the CQ for the server's message.
    if (inbox_.has_ready() || (io_.parked && drive_.drivers == 0)) notify_locked();
}

std::error_code ClientConn::post_locked(Op& op) {
    const void* ctx = op_context(op.seq);
    int ret = 0;
    switch (op.kind) {
    case OpKind::write:
        if (op.user) {
            ret = api_.write(link_.conn(), op.remote, op.remote_offset, op.user->mr.get(),
                             op.user->offset_of(op.src.data()), op.length, write_flags(op), ctx);
            break;
        }
        std::memcpy(op.bounce->data(), op.src.data(), op.src.size());
        ret = api_.write(link_.conn(), op.remote, op.remote_offset, bounce_mr(op), 0, op.length, write_flags(op), ctx);
        break;
    case OpKind::read:
        if (op.user) {
            ret = api_.read(link_.conn(), op.user->mr.get(), op.user->offset_of(op.out.data()), op.remote,
                            op.remote_offset, op.length, kSignaled, ctx);
            break;
        }
        ret = api_.read(link_.conn(), bounce_mr(op), 0, op.remote, op.remote_offset, op.length, kSignaled, ctx);
        break;
    case OpKind::atomic_write:
        // Sent inline or natively: the 8 bytes are taken when posting. The
        // chain before it goes out first, here, so that its failure fails
        // the connection (pump_locked) rather than only this op.
        if (ret = api_.ring(link_.conn()); ret != 0) {
            ring_error_ = ret;
            break;
        }
        ret = api_.atomic_write(link_.conn(), op.remote, op.remote_offset, reinterpret_cast<const char*>(&op.value),
                                kCompletionAlways, ctx);
        break;
    case OpKind::flush:
        // The region's flusher chose the call (the 8-byte read, or a native
        // FLUSH, unsignaled when another of the persist's follows).
        ret = (api_.*op.flush_call)(link_.conn(), op.remote, op.remote_offset, op.length, kFlushPersistent,
                                    write_flags(op), ctx);
        break;
    case OpKind::request: ret = post_request_locked(op, ctx); break;
    case OpKind::none: break;
    }
    return code_of(ret);
}

int ClientConn::post_request_locked(Op& op, const void* ctx) {
    const std::size_t at = link_.layout().send_offset(*op.slot);
    std::memcpy(link_.msgs().data() + at, op.frame.data(), op.frame.size());
    // Unsignaled but one in kSignalEvery (OpQueue::unsignaled): the reply finishes it.
    const int ret = api_.send(link_.conn(), link_.msgs().mr(), at, op.frame.size(), write_flags(op), ctx);
    if (ret != 0) requests_.forget(op.request_id);  // no reply can come
    return ret;
}

} // namespace rpm::rdma
