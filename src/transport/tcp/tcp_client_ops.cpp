// TcpClient: the operations and the frames that answer them.
#include "transport/tcp/tcp_client.hpp"

#include <cstring>

namespace rpm::tcp {
namespace {

std::error_code status_code(std::uint32_t status) {
    return {static_cast<int>(status), rpm_category()};
}

// A reply that decodes a Response and hands its status (and data) on.
using DataSink = std::function<std::error_code(std::span<const std::byte>)>;

std::error_code decode_status(const proto::Header* h, std::span<const std::byte> body, const DataSink& sink) {
    if (h == nullptr || h->type != proto::Type::response) return errc::io_error;
    auto r = proto::decode_response(body);
    if (!r) return errc::io_error;
    if (r->status != 0) return status_code(r->status);
    return sink ? sink(r->data) : std::error_code{};
}

} // namespace

std::uint32_t TcpClient::next_id() noexcept {
    // Called on the caller's thread: ids are only compared for equality, so
    // a relaxed atomic suffices.
    return next_id_.fetch_add(1, std::memory_order_relaxed);
}

TcpClient::Reply TcpClient::status_reply(client::Done done) {
    return [done = std::move(done)](std::error_code ec, const proto::Header* h, std::span<const std::byte> b) {
        done(ec ? ec : decode_status(h, b, nullptr));
    };
}

void TcpClient::post_request(std::vector<std::byte> frame, std::uint32_t id, Reply reply) {
    asio::post(io_, [this, frame = std::move(frame), id, reply = std::move(reply)]() mutable {
        if (state_ != State::ready) return reply(errc::io_error, nullptr, {});
        pending_.emplace(id, std::move(reply));
        enqueue(std::move(frame));
    });
}

void TcpClient::write(const proto::RegionGrant& g, std::uint64_t offset, std::span<const std::byte> data,
                      client::Done done) {
    std::vector<std::byte> frame;
    const auto id = next_id();
    proto::encode(frame, id, proto::Write{g.id, offset, data});
    post_request(std::move(frame), id, status_reply(std::move(done)));
}

void TcpClient::read(const proto::RegionGrant& g, std::uint64_t offset, std::span<std::byte> out,
                     client::Done done) {
    std::vector<std::byte> frame;
    const auto id = next_id();
    proto::encode(frame, id, proto::Read{g.id, offset, static_cast<std::uint32_t>(out.size())});
    post_request(std::move(frame), id,
                 [out, done = std::move(done)](std::error_code ec, const proto::Header* h, std::span<const std::byte> b) {
                     if (ec) return done(ec);
                     done(decode_status(h, b, [out](std::span<const std::byte> data) -> std::error_code {
                         if (data.size() != out.size()) return errc::io_error;
                         std::memcpy(out.data(), data.data(), data.size());
                         return {};
                     }));
                 });
}

void TcpClient::atomic_write(const proto::RegionGrant& g, std::uint64_t offset, std::uint64_t value,
                             client::Done done) {
    std::vector<std::byte> frame;
    const auto id = next_id();
    proto::encode(frame, id, proto::AtomicWrite{g.id, offset, value});
    post_request(std::move(frame), id, status_reply(std::move(done)));
}

void TcpClient::flush(const proto::RegionGrant& g, std::span<const proto::Range> ranges, client::Done done) {
    std::vector<std::byte> frame;
    const auto id = next_id();
    proto::encode(frame, id, proto::Flush{g.id, {ranges.begin(), ranges.end()}});
    post_request(std::move(frame), id, status_reply(std::move(done)));
}

void TcpClient::send(std::span<const std::byte> payload, client::Done done) {
    std::vector<std::byte> frame;
    const auto id = next_id();
    proto::encode_message(frame, id, payload);
    post_request(std::move(frame), id, status_reply(std::move(done)));
}

void TcpClient::recv(std::span<std::byte> out, client::RecvDone done) {
    asio::post(io_, [this, out, done = std::move(done)]() mutable {
        if (inbox_.empty()) {
            if (state_ == State::closed) return done(errc::io_error, 0);
            recv_waiters_.emplace_back(out, std::move(done));
            return;
        }
        auto msg = std::move(inbox_.front());
        inbox_.pop_front();
        if (msg.size() > out.size()) return done(errc::bad_size, msg.size());
        std::memcpy(out.data(), msg.data(), msg.size());
        done({}, msg.size());
    });
}

Result<proto::RegionGrant> TcpClient::open_region(const proto::OpenRegion& req) {
    auto p = std::make_shared<std::promise<Result<proto::RegionGrant>>>();
    auto f = p->get_future();
    std::vector<std::byte> frame;
    const auto id = next_id();
    proto::encode(frame, id, req);
    post_request(std::move(frame), id, [p](std::error_code ec, const proto::Header* h, std::span<const std::byte> b) {
        if (ec) return p->set_value(Error(ec, "open_region: the connection failed"));
        if (h->type == proto::Type::region) return p->set_value(proto::decode_region(b));
        auto r = proto::decode_response(b);
        if (!r) return p->set_value(r.error());
        p->set_value(Error(status_code(r->status), r->message));
    });
    if (f.wait_for(opts_.timeout) != std::future_status::ready) {
        close();
        return Error(errc::io_error, "open_region timed out; the connection was closed");
    }
    return f.get();
}

} // namespace rpm::tcp
