// The three ways a region's writes are made durable, one Flusher each,
// chosen once when the grant is applied (flusher_for): the queued flush
// (flush(), a persist's flush behind its writes) and the flush behind a
// direct one-slice persist's write.
//
//   read_after_write  an 8-byte RDMA read behind the writes (Api::flush):
//                     one read covers every earlier write on the connection
//   send_flush        a Flush frame naming the ranges; the server runs its
//                     persist step and answers
//   native_flush      an IBTA FLUSH per written range (Api::flush_native:
//                     placement type persistent, selectivity range), in the
//                     writes' chain; the responder's RNIC makes the range
//                     durable, the server's CPU does nothing
#include "core/small_buffer.hpp"
#include "transport/rdma/client.hpp"
#include "transport/rdma/flush_ranges.hpp"
#include "transport/rdma/frames.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

namespace rpm::rdma {
namespace {

// The 8-byte read lands inside the region wherever the range lies.
std::uint64_t read_offset(std::uint64_t offset, std::uint64_t region_size) noexcept {
    const std::uint64_t last = region_size >= 8 ? region_size - 8 : 0;
    return std::min(offset, last);
}

} // namespace

std::span<proto::Range> merge_flush_ranges(std::span<const proto::Range> in, std::span<proto::Range> out) noexcept {
    std::size_t n = 0;
    for (const auto& r : in)
        if (r.length > 0) out[n++] = r;
    std::sort(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(n),
              [](const proto::Range& a, const proto::Range& b) { return a.offset < b.offset; });
    std::size_t m = 0;
    for (std::size_t i = 0; i < n; ++i) {
        if (m > 0 && out[i].offset <= out[m - 1].offset + out[m - 1].length) {
            const std::uint64_t end = std::max(out[m - 1].offset + out[m - 1].length, out[i].offset + out[i].length);
            out[m - 1].length = end - out[m - 1].offset;
        } else {
            out[m++] = out[i];
        }
    }
    return out.first(m);
}

const ClientConn::Flusher* ClientConn::flusher_for(flush::Method m) noexcept {
    static const Flusher read{flush::Method::read_after_write, &ClientConn::submit_read_flush, false,
                              OpKind::flush, nullptr, &ClientConn::post_direct_read_flush};
    static const Flusher send{flush::Method::send_flush, &ClientConn::submit_send_flush, true, OpKind::request,
                              &ClientConn::prepare_direct_send_flush, &ClientConn::post_direct_send_flush};
    static const Flusher native{flush::Method::native_flush, &ClientConn::submit_native_flush, false,
                                OpKind::flush, nullptr, &ClientConn::post_direct_native_flush};
    switch (m) {
    case flush::Method::read_after_write: return &read;
    case flush::Method::send_flush: return &send;
    case flush::Method::native_flush: return &native;
    }
    return nullptr;
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
    (this->*r->flusher->submit)(*r, grant_id, ranges, std::move(done));
}

void ClientConn::submit_read_flush(const RemoteRegion& r, std::uint32_t, std::span<const proto::Range> ranges,
                                   client::Done&& done) {
    // One read pushes every earlier write on this connection out of the
    // target's I/O buffers, whatever the range; the verbs layer reads 8
    // bytes at the offset it is given, so name the last range (or the
    // region's start).
    Op op;
    op.kind = OpKind::flush;
    op.flush_call = &Api::flush;
    op.remote = r.mr.get();
    op.length = ranges.empty() ? r.size : ranges.back().length;
    op.remote_offset = read_offset(ranges.empty() ? 0 : ranges.back().offset, r.size);
    op.done = std::move(done);
    submit_locked(std::move(op));
}

void ClientConn::submit_send_flush(const RemoteRegion&, std::uint32_t grant_id, std::span<const proto::Range> ranges,
                                   client::Done&& done) {
    std::vector<std::byte> frame;
    const auto rid = requests_.next_id();
    proto::encode_flush(frame, rid, grant_id, ranges);
    submit_locked(request_op(std::move(frame), rid, response_status, std::move(done)));
}

void ClientConn::submit_native_flush(const RemoteRegion& r, std::uint32_t, std::span<const proto::Range> ranges,
                                     client::Done&& done) {
    // A FLUSH makes its own range durable, nothing else: one per written
    // range (adjacent ones, a log record and its commit word, joined). All
    // but the last go unsignaled in front of the next (Op::chain), and all
    // are queued before any is posted, so they share the writes' doorbell.
    SmallBuffer<proto::Range, 8> room(ranges.size());
    const auto merged = merge_flush_ranges(ranges, room.all());
    if (merged.empty()) {
        // Nothing written to make durable (length 0): done in posting order.
        Op op;
        op.done = std::move(done);
        return submit_locked(std::move(op));
    }
    const bool batching = std::exchange(batching_, true);
    for (std::size_t i = 0; i < merged.size(); ++i) {
        Op op;
        op.kind = OpKind::flush;
        op.flush_call = &Api::flush_native;
        op.remote = r.mr.get();
        op.remote_offset = merged[i].offset;
        op.length = merged[i].length;
        if (i + 1 < merged.size()) {
            op.chain = true;
            op.joins_next = true;
        } else {
            batching_ = batching;
            op.done = std::move(done);
        }
        submit_locked(std::move(op));
    }
}

bool ClientConn::prepare_direct_send_flush(std::uint32_t grant_id, const proto::Slice& s) {
    direct_.frame_rid = requests_.next_id();
    direct_.frame.clear();
    const proto::Range range{s.offset, s.data.size()};
    proto::encode_flush(direct_.frame, direct_.frame_rid, grant_id, std::span(&range, 1));
    return !frame_fits(direct_.frame);
}

int ClientConn::post_direct_read_flush(const RemoteRegion& r, const proto::Slice& s) {
    // One 8-byte read inside the region covers every write before it; its
    // completion finishes the persist.
    direct_.owe(1);
    return api_.flush(link_.conn(), r.mr.get(), read_offset(s.offset, r.size), s.data.size(), kFlushPersistent,
                      kCompletionAlways | kDeferDoorbell, wr_tag(kDirectTag));
}

int ClientConn::post_direct_native_flush(const RemoteRegion& r, const proto::Slice& s) {
    // The FLUSH of the written range, the only signaled work request of
    // the two: its completion says the responder made the range durable.
    direct_.owe(1);
    return api_.flush_native(link_.conn(), r.mr.get(), s.offset, s.data.size(), kFlushPersistent,
                             kCompletionAlways | kDeferDoorbell, wr_tag(kDirectTag));
}

int ClientConn::post_direct_send_flush(const RemoteRegion&, const proto::Slice&) {
    // The Response, and the send's completion only when it goes signaled.
    const bool quiet = ops_.may_go_unsignaled(2);
    direct_.owe(quiet ? 1 : 2, direct_.frame_rid);
    const std::size_t at = link_.layout().send_offset(*direct_.hold().slot);
    std::memcpy(link_.msgs().data() + at, direct_.frame.data(), direct_.frame.size());
    // Unsignaled as a queued request's (OpQueue::unsignaled): the
    // Response says the server had the frame, so the write before it was
    // placed and both entries were read; the send's completion would say
    // no more, and cost a completion (and in event mode a wake-up) per
    // persist. Their send-queue credits come back with a later completion;
    // one persist in signal_every_ / 2 brings one.
    const int ret = api_.send(link_.conn(), link_.msgs().mr(), at, direct_.frame.size(),
                              (quiet ? kCompletionOnError : kCompletionAlways) | kDeferDoorbell, wr_tag(kDirectTag));
    if (ret == 0 && quiet) ops_.defer_direct(direct_.hold());
    return ret;
}

} // namespace rpm::rdma
