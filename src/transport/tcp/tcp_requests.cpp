// TcpSession::run_request: decode one authenticated request, run it
// through Core, and build its answer frame.
#include "transport/tcp/tcp_listener.hpp"

namespace rpm::tcp {
namespace {

std::vector<std::byte> ok_frame(std::uint32_t id, std::span<const std::byte> data = {}) {
    proto::Response resp;
    resp.data = data;
    std::vector<std::byte> frame;
    proto::encode(frame, id, resp);
    return frame;
}

template <class T>
Result<std::vector<std::byte>> answer(std::uint32_t id, const Result<T>& decoded,
                                      const std::function<Result<void>(const T&)>& run) {
    if (!decoded) return decoded.error();
    if (auto r = run(*decoded); !r) return r.error();
    return ok_frame(id);
}

} // namespace

Result<std::vector<std::byte>> TcpSession::run_request(const proto::Header& h, std::span<const std::byte> body) {
    auto& core = owner_.core();
    const auto id = h.request_id;
    switch (h.type) {
    case proto::Type::open_region: {
        auto req = proto::decode_open_region(body);
        if (!req) return req.error();
        auto g = core.open_region(session_, *req, server::TransportKind::tcp, nullptr);
        if (!g) return g.error();
        std::vector<std::byte> frame;
        proto::encode(frame, id, *g);
        return frame;
    }
    case proto::Type::write:
        return answer<proto::Write>(id, proto::decode_write(body),
                                    [&](const proto::Write& w) { return core.handle_write(session_, w); });
    case proto::Type::atomic_write:
        return answer<proto::AtomicWrite>(id, proto::decode_atomic_write(body), [&](const proto::AtomicWrite& a) {
            return core.handle_atomic_write(session_, a);
        });
    case proto::Type::flush:
        return answer<proto::Flush>(id, proto::decode_flush(body),
                                    [&](const proto::Flush& f) { return core.handle_flush(session_, f); });
    case proto::Type::read: {
        auto rd = proto::decode_read(body);
        if (!rd) return rd.error();
        if (rd->length > core.options().max_payload - 1100)
            return Error(errc::bad_size, "read of " + std::to_string(rd->length) + " bytes exceeds the frame limit");
        std::vector<std::byte> data(rd->length);
        if (auto r = core.handle_read(session_, *rd, data); !r) return r.error();
        return ok_frame(id, data);
    }
    case proto::Type::message:
        core.deliver_message(session_.id, body);
        return ok_frame(id);
    default:
        return Error(errc::invalid_argument, "unexpected frame type " +
                                                 std::to_string(static_cast<int>(h.type)) + " from a client");
    }
}

} // namespace rpm::tcp
