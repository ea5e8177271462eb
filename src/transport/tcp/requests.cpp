// TcpSession::run_request: decode one authenticated request, run it
// through Service, and queue its answer (built in place in the send queue).
#include "transport/tcp/listener.hpp"

namespace rpm::tcp {
namespace {

// Reads up to a page (a replica header, a commit word, a small record) are
// copied into the answer; larger ones are sent from the region's memory.
constexpr std::size_t kCopiedReadMax = 4096;

} // namespace

void TcpSession::run_request(const proto::Header& h, std::span<const std::byte> body) {
    auto& service = owner_.service();
    const auto id = h.request_id;
    const auto answer = [&](const Result<void>& r) { respond(id, r); };
    switch (h.type) {
    case proto::Type::open_region: return run_open_region(id, body);
    case proto::Type::write: {
        auto w = proto::decode_write(body);
        return answer(w ? service.handle_write(session_, *w) : Result<void>(w.error()));
    }
    case proto::Type::persist: {
        auto r = proto::decode_persist(body, persist_);
        return answer(r ? service.handle_persist(session_, persist_) : r);
    }
    case proto::Type::atomic_write: {
        auto a = proto::decode_atomic_write(body);
        return answer(a ? service.handle_atomic_write(session_, *a) : Result<void>(a.error()));
    }
    case proto::Type::flush: {
        auto f = proto::decode_flush(body);
        return answer(f ? service.handle_flush(session_, *f) : Result<void>(f.error()));
    }
    case proto::Type::read: return run_read(id, body);
    case proto::Type::message:
        service.deliver_message(session_.id, body);
        return answer({});
    default:
        return answer(Error(errc::invalid_argument, "unexpected frame type " +
                                                        std::to_string(static_cast<int>(h.type)) + " from a client"));
    }
}

void TcpSession::run_open_region(std::uint32_t id, std::span<const std::byte> body) {
    auto req = proto::decode_open_region(body);
    if (!req) return respond(id, req.error());
    auto g = owner_.service().open_region(session_, *req, server::TransportKind::tcp, nullptr);
    // A refused open (an older term's included) leaves the session as it was.
    if (!g) return queue_response(id, g.error());
    proto::encode(outq_.arena(), id, *g);
    outq_.commit();
}

void TcpSession::run_read(std::uint32_t id, std::span<const std::byte> body) {
    auto& service = owner_.service();
    auto rd = proto::decode_read(body);
    if (!rd) return respond(id, rd.error());
    if (rd->length > service.options().max_payload - 1100)
        return respond(id, Error(errc::bad_size,
                                 "read of " + std::to_string(rd->length) + " bytes exceeds the frame limit"));
    auto view = service.read_view(session_, *rd);
    if (!view) return respond(id, view.error());
    proto::encode_response_head(outq_.arena(), id, rd->length);
    if (view->size() <= kCopiedReadMax) {
        // Copied a word at a time: an 8-byte field another connection
        // writes with atomic_write is never seen torn, and the
        // requests behind this one need not wait for it to be sent.
        auto& arena = outq_.arena();
        const std::size_t at = arena.size();
        arena.resize(at + view->size());
        server::load_words(std::span(arena).subspan(at), view->data());
        outq_.commit();
        return;
    }
    // Larger: sent from the region itself, no copy: its head, then the
    // region's bytes. They must leave before this session runs another
    // request (a later write would change them): process_frames waits
    // for that. (Every region a server serves is mapped memory; only the
    // crash model's has none, and it is never served over tcp://.)
    outq_.commit();
    outq_.borrow(*view);
    view_pending_ = true;
}

} // namespace rpm::tcp
