// TcpClient: the operations, each one request frame built into the send
// queue; a write's or persist's data is sent from the caller's buffer.
#include "transport/tcp/tcp_client.hpp"

#include <cstring>

namespace rpm::tcp {

namespace {
// A frame the server would refuse (and close the connection for) is
// refused here, with nothing sent: the caller splits larger operations.
std::error_code too_large(std::size_t body, std::uint32_t max_payload) {
    return body > max_payload ? make_error_code(errc::bad_size) : std::error_code{};
}
} // namespace

void TcpClient::write(const proto::RegionGrant& g, std::uint64_t offset, std::span<const std::byte> data,
                      client::Done done) {
    Pending p;
    p.done = std::move(done);
    const auto refused = too_large(12 + data.size(), max_payload_);
    auto build = [&](std::uint32_t id) {
        proto::encode_write_head(outq_.arena(), id, g.id, offset, data.size());
        outq_.commit();
        outq_.borrow(data);
    };
    submit(std::move(p), build, refused);
}

void TcpClient::persist(const proto::RegionGrant& g, std::span<const proto::Slice> slices, client::Done done) {
    Pending p;
    p.done = std::move(done);
    std::size_t body = proto::persist_meta_size(slices.size());
    for (const auto& s : slices) body += s.data.size();
    const auto refused = too_large(body, max_payload_);
    auto build = [&](std::uint32_t id) {
        proto::encode_persist_head(outq_.arena(), id, g.id, slices);
        outq_.commit();
        for (const auto& s : slices) outq_.borrow(s.data);
    };
    submit(std::move(p), build, refused);
}

void TcpClient::read(const proto::RegionGrant& g, std::uint64_t offset, std::span<std::byte> out,
                     client::Done done) {
    Pending p;
    p.kind = Kind::read;
    p.done = std::move(done);
    p.out = out;
    auto build = [&](std::uint32_t id) {
        proto::encode(outq_.arena(), id, proto::Read{g.id, offset, static_cast<std::uint32_t>(out.size())});
        outq_.commit();
    };
    submit(std::move(p), build);
}

void TcpClient::atomic_write(const proto::RegionGrant& g, std::uint64_t offset, std::uint64_t value,
                             client::Done done) {
    Pending p;
    p.done = std::move(done);
    auto build = [&](std::uint32_t id) {
        proto::encode(outq_.arena(), id, proto::AtomicWrite{g.id, offset, value});
        outq_.commit();
    };
    submit(std::move(p), build);
}

void TcpClient::flush(const proto::RegionGrant& g, std::span<const proto::Range> ranges, client::Done done) {
    Pending p;
    p.done = std::move(done);
    auto build = [&](std::uint32_t id) {
        proto::encode(outq_.arena(), id, proto::Flush{g.id, {ranges.begin(), ranges.end()}});
        outq_.commit();
    };
    submit(std::move(p), build);
}

void TcpClient::send(std::span<const std::byte> payload, client::Done done) {
    Pending p;
    p.done = std::move(done);
    auto build = [&](std::uint32_t id) {
        proto::encode_message(outq_.arena(), id, payload);
        outq_.commit();
    };
    submit(std::move(p), build);
}

void TcpClient::recv(std::span<std::byte> out, client::RecvDone done) {
    std::unique_lock lock(mu_);
    if (!inbox_.empty()) {
        auto msg = std::move(inbox_.front());
        inbox_.pop_front();
        lock.unlock();
        if (msg.size() > out.size()) return done(errc::bad_size, msg.size());
        std::memcpy(out.data(), msg.data(), msg.size());
        return done({}, msg.size());
    }
    if (state_ != State::ready) {
        const auto ec = state_ == State::closed ? failure_ec_ : make_error_code(errc::io_error);
        lock.unlock();
        return done(ec, 0);
    }
    recv_waiters_.emplace_back(out, std::move(done));
    update_watch_locked();
}

Result<proto::RegionGrant> TcpClient::open_region(const proto::OpenRegion& req) {
    auto p = std::make_shared<std::promise<Result<proto::RegionGrant>>>();
    auto f = p->get_future();
    Pending pending;
    pending.kind = Kind::region;
    pending.region_done = [p](Result<proto::RegionGrant> g) { p->set_value(std::move(g)); };
    auto build = [&](std::uint32_t id) {
        proto::encode(outq_.arena(), id, req);
        outq_.commit();
    };
    submit(std::move(pending), build);
    if (f.wait_for(opts_.timeout) != std::future_status::ready) {
        close();
        return Error(errc::io_error, "open_region timed out; the connection was closed");
    }
    return f.get();
}

} // namespace rpm::tcp
