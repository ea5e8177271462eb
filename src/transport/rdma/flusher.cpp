// The three flushers (flusher.hpp): how each queues a flush behind the
// writes it covers and posts one behind a direct persist's write.
#include "transport/rdma/flusher.hpp"

#include "core/small_buffer.hpp"
#include "transport/rdma/flush_ranges.hpp"
#include "transport/rdma/frames.hpp"
#include "transport/rdma/regions.hpp"
#include "transport/rdma/wr_tags.hpp"

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

void queue_read_flush(FlushWork&, const RemoteRegion& r, std::uint32_t, std::span<const proto::Range> ranges,
                      client::Done&& done, OpSink sink) {
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
    sink(std::move(op));
}

void queue_send_flush(FlushWork& w, const RemoteRegion&, std::uint32_t grant_id, std::span<const proto::Range> ranges,
                      client::Done&& done, OpSink sink) {
    std::vector<std::byte> frame;
    const auto rid = w.requests.next_id();
    proto::encode_flush(frame, rid, grant_id, ranges);
    sink(request_op(std::move(frame), rid, response_status, std::move(done), w.link.layout().slot_size()));
}

void queue_native_flush(FlushWork&, const RemoteRegion& r, std::uint32_t, std::span<const proto::Range> ranges,
                        client::Done&& done, OpSink sink) {
    // A FLUSH makes its own range durable, nothing else: one per written
    // range (adjacent ones, a log record and its commit word, joined). All
    // but the last go unsignaled in front of the next (Op::chain) and join
    // it, so they share the writes' doorbell (OpSink).
    SmallBuffer<proto::Range, 8> room(ranges.size());
    const auto merged = merge_flush_ranges(ranges, room.all());
    if (merged.empty()) {
        // Nothing written to make durable (length 0): done in posting order.
        Op op;
        op.done = std::move(done);
        return sink(std::move(op));
    }
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
            op.done = std::move(done);
        }
        sink(std::move(op));
    }
}

bool prepare_direct_send_flush(FlushWork& w, std::uint32_t grant_id, const proto::Slice& s) {
    w.direct.frame_rid = w.requests.next_id();
    w.direct.frame.clear();
    const proto::Range range{s.offset, s.data.size()};
    proto::encode_flush(w.direct.frame, w.direct.frame_rid, grant_id, std::span(&range, 1));
    return !frame_fits(w.direct.frame, w.link.layout().slot_size());
}

int post_direct_read_flush(FlushWork& w, const RemoteRegion& r, const proto::Slice& s) {
    // One 8-byte read inside the region covers every write before it; its
    // completion finishes the persist.
    w.direct.owe(1);
    return w.api.flush(w.link.conn(), r.mr.get(), read_offset(s.offset, r.size), s.data.size(), kFlushPersistent,
                       kCompletionAlways | kDeferDoorbell, wr_tag(kDirectTag));
}

int post_direct_native_flush(FlushWork& w, const RemoteRegion& r, const proto::Slice& s) {
    // The FLUSH of the written range, the only signaled work request of
    // the two: its completion says the responder made the range durable.
    w.direct.owe(1);
    return w.api.flush_native(w.link.conn(), r.mr.get(), s.offset, s.data.size(), kFlushPersistent,
                              kCompletionAlways | kDeferDoorbell, wr_tag(kDirectTag));
}

int post_direct_send_flush(FlushWork& w, const RemoteRegion&, const proto::Slice&) {
    // The Response, and the send's completion only when it goes signaled.
    const bool quiet = w.ops.may_go_unsignaled(2);
    w.direct.owe(quiet ? 1 : 2, w.direct.frame_rid);
    const std::size_t at = w.link.layout().send_offset(*w.direct.hold().slot);
    std::memcpy(w.link.msgs().data() + at, w.direct.frame.data(), w.direct.frame.size());
    // Unsignaled as a queued request's (OpQueue::unsignaled): the
    // Response says the server had the frame, so the write before it was
    // placed and both entries were read; the send's completion would say
    // no more, and cost a completion (and in event mode a wake-up) per
    // persist. Their send-queue credits come back with a later completion;
    // one persist in signal_every_ / 2 brings one.
    const int ret = w.api.send(w.link.conn(), w.link.msgs().mr(), at, w.direct.frame.size(),
                               (quiet ? kCompletionOnError : kCompletionAlways) | kDeferDoorbell, wr_tag(kDirectTag));
    if (ret == 0 && quiet) w.ops.defer_direct(w.direct.hold());
    return ret;
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

const Flusher* Flusher::of(flush::Method m) noexcept {
    static const Flusher read{flush::Method::read_after_write, &queue_read_flush, false, OpKind::flush, nullptr,
                              &post_direct_read_flush};
    static const Flusher send{flush::Method::send_flush, &queue_send_flush, true, OpKind::request,
                              &prepare_direct_send_flush, &post_direct_send_flush};
    static const Flusher native{flush::Method::native_flush, &queue_native_flush, false, OpKind::flush, nullptr,
                                &post_direct_native_flush};
    switch (m) {
    case flush::Method::read_after_write: return &read;
    case flush::Method::send_flush: return &send;
    case flush::Method::native_flush: return &native;
    }
    return nullptr;
}

} // namespace rpm::rdma
