// ServerSession's request handlers: each decodes its frame, asks Service, and
// queues exactly one reply with the request's id.
#include "transport/rdma/frames.hpp"
#include "transport/rdma/server.hpp"

#include <shared_mutex>

namespace rpm::rdma {

void ServerSession::on_frame(const proto::Header& h, std::span<const std::byte> body) {
    switch (h.type) {
    case proto::Type::auth: return on_auth(h.request_id, body);
    case proto::Type::open_region: return on_open_region(h.request_id, body);
    case proto::Type::flush: return on_flush(h.request_id, body);
    case proto::Type::message: return on_message(h.request_id, body);
    case proto::Type::goodbye: return close_session("the client said goodbye");
    default:
        // Write, Read and AtomicWrite are TCP's: over RDMA the data moves one-sided.
        return reply(h.request_id, error_frame(h.request_id, Error(errc::invalid_argument,
                                                                   std::string(proto::type_name(h.type)) +
                                                                       " frames are not used over rdma://")));
    }
}

void ServerSession::reply(std::uint32_t rid, std::vector<std::byte> frame) {
    if (frame.size() > layout_.slot_size())
        frame = error_frame(rid, Error(errc::bad_size, "the reply (" + std::to_string(frame.size()) +
                                                           " bytes) does not fit an rdma:// message slot (" +
                                                           std::to_string(layout_.slot_size()) + ")"));
    queue_frame(std::move(frame));
}

void ServerSession::refuse(std::uint32_t rid, const Error& e) {
    reply(rid, error_frame(rid, e));
    std::lock_guard lock(mu_);
    close_when_sent_ = true;
}

void ServerSession::on_auth(std::uint32_t rid, std::span<const std::byte> body) {
    if (session_.authenticated) return refuse(rid, Error(errc::invalid_argument, "already authenticated"));
    auto a = proto::decode_auth(body);
    if (!a) return refuse(rid, a.error());
    auto w = env_.service.authenticate(session_, *a);
    if (!w) return refuse(rid, w.error());
    std::vector<std::byte> f;
    proto::encode(f, rid, *w);
    reply(rid, std::move(f));
}

Result<proto::RegionGrant> ServerSession::grant(const proto::OpenRegion& req) {
    auto g = env_.service.open_region(session_, req, server::TransportKind::rdma, env_.device, &env_.regions);
    if (!g) return g.error();
    const server::Grant* held = session_.grant(g->id);
    if (held == nullptr || held->region == nullptr) return Error(errc::io_error, "the grant names no region");
    // The rkey handed out must belong to this grant's term: a newer term's
    // open between Service's check and here re-registered the region, and
    // this session must not get the new key. Under the fence lock a later
    // revocation waits, and kills the key handed out here.
    std::shared_lock fence(held->region->fence.mu);
    if (auto t = server::check_term(held->region->report.name, held->region->fence.term, held->term); !t)
        return Error(errc::fenced, t.error().detail() + " (while it was being opened)");
    if (auto r = complete_grant(api_, env_.regions, *held->region, *g); !r) return r.error();
    std::lock_guard lock(mu_);
    granted_.emplace_back(held->region, held->term);  // seen by a later revocation's fence()
    return g;
}

void ServerSession::on_open_region(std::uint32_t rid, std::span<const std::byte> body) {
    auto req = proto::decode_open_region(body);
    if (!req) return reply(rid, error_frame(rid, req.error()));
    auto g = grant(*req);
    if (!g) return reply(rid, error_frame(rid, g.error()));
    std::vector<std::byte> f;
    proto::encode(f, rid, *g);
    reply(rid, std::move(f));
}

void ServerSession::reply_ok(std::uint32_t rid) {
    // Into a buffer the session keeps and from there into the send slot:
    // no allocation per request.
    reply_copy_.clear();
    proto::encode(reply_copy_, rid, proto::Response{});
    send_frame(reply_copy_);
}

void ServerSession::on_flush(std::uint32_t rid, std::span<const std::byte> body) {
    // Into a Flush the session keeps: no allocation per request.
    if (auto f = proto::decode_flush(body, flush_); !f) return reply(rid, error_frame(rid, f.error()));
    // The client's writes were placed before this send was received (RC
    // ordering), so the persist step covers them.
    auto r = env_.service.handle_flush(session_, flush_);
    if (!r) {
        reply(rid, error_frame(rid, r.error()));
        if (r.error().code() == errc::fenced) say_fenced(r.error().detail());
        return;
    }
    reply_ok(rid);
}

void ServerSession::on_message(std::uint32_t rid, std::span<const std::byte> body) {
    if (!session_.authenticated)
        return reply(rid, error_frame(rid, Error(errc::permission_denied, "message before authentication")));
    env_.service.deliver_message(session_.id, body);
    reply_ok(rid);
}

} // namespace rpm::rdma
