// TcpClient: the operations, each one request frame built into the send
// queue (a write or persist larger than a frame, several); a write's or
// persist's data is sent from the caller's buffer.
#include "protocol/commit_word.hpp"
#include "transport/tcp/client.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

namespace rpm::tcp {

namespace {

constexpr std::size_t kWriteHead = 12;   // a write frame's body before its data
constexpr std::size_t kReadSlack = 1100;  // what the server keeps back from a read's answer

// One caller's operation sent as several requests (a write or persist
// larger than a frame): `done` runs once, when the last answer is in, with
// the first error any of them had.
class Split {
public:
    Split(std::size_t parts, client::Done done) : left_(parts), done_(std::move(done)) {}
    static client::Done part(const std::shared_ptr<Split>& s) {
        return [s](Result<void> r) { s->one(std::move(r)); };
    }

private:
    void one(Result<void> r) {
        {
            std::lock_guard lock(mu_);
            if (!r && first_) first_ = std::move(r);
            if (--left_ > 0) return;
        }
        done_(std::move(first_));
    }
    std::mutex mu_;
    std::size_t left_;
    Result<void> first_;  ///< success until a part fails
    client::Done done_;
};

} // namespace

// A write larger than a frame goes as consecutive writes of at most a
// frame each, in order on this connection (the server applies them in
// order); a write is not atomic in any case.
void TcpClient::write(const proto::RegionGrant& g, std::uint64_t offset, std::span<const std::byte> data,
                      client::Done done) {
    const std::size_t most = max_payload_ > kWriteHead ? max_payload_ - kWriteHead : 1;
    if (data.size() <= most) return write_frame(g, offset, data, std::move(done));
    auto split = std::make_shared<Split>((data.size() + most - 1) / most, std::move(done));
    for (std::size_t at = 0; at < data.size(); at += most)
        write_frame(g, offset + at, data.subspan(at, std::min(most, data.size() - at)), Split::part(split));
}

void TcpClient::write_frame(const proto::RegionGrant& g, std::uint64_t offset, std::span<const std::byte> data,
                            client::Done done) {
    Pending p;
    p.op = "write";
    p.done = std::move(done);
    auto build = [&](std::uint32_t id) {
        proto::encode_write_head(outq_.arena(), id, g.id, offset, data.size());
        outq_.commit();
        outq_.borrow(data);
    };
    submit(std::move(p), build);
}

// A persist larger than a frame: its slices as writes (split as above),
// then one flush of every slice's range, answered after them. Durable, as
// the one request would be, once the flush is; the first error otherwise.
void TcpClient::persist(const proto::RegionGrant& g, std::span<const proto::Slice> slices, client::Done done) {
    std::size_t body = proto::persist_meta_size(slices.size());
    for (const auto& s : slices) body += s.data.size();
    if (body <= max_payload_ || slices.size() > proto::kMaxRanges) return persist_frame(g, slices, std::move(done));
    auto split = std::make_shared<Split>(2, std::move(done));
    auto writes = std::make_shared<Split>(slices.size(), Split::part(split));
    std::vector<proto::Range> ranges;
    ranges.reserve(slices.size());
    for (const auto& s : slices) {
        // A commit word (protocol/commit_word.hpp) is stored whole, as in
        // one persist request.
        if (proto::is_commit_word(s)) {
            atomic_write(g, s.offset, proto::commit_word_value(s), Split::part(writes));
        } else {
            write(g, s.offset, s.data, Split::part(writes));
        }
        ranges.push_back({s.offset, s.data.size()});
    }
    flush(g, ranges, Split::part(split));
}

void TcpClient::persist_frame(const proto::RegionGrant& g, std::span<const proto::Slice> slices, client::Done done) {
    Pending p;
    p.op = "persist";
    p.done = std::move(done);
    auto build = [&](std::uint32_t id) {
        proto::encode_persist_head(outq_.arena(), id, g.id, slices);
        outq_.commit();
        for (const auto& s : slices) outq_.borrow(s.data);
    };
    submit(std::move(p), build);
}

// A read larger than the server answers in one frame (max_payload less
// 1100 bytes: requests.cpp) goes as consecutive reads into `out`.
void TcpClient::read(const proto::RegionGrant& g, std::uint64_t offset, std::span<std::byte> out,
                     client::Done done) {
    const std::size_t most = max_payload_ > kReadSlack ? max_payload_ - kReadSlack : 1;
    if (out.size() <= most) return read_frame(g, offset, out, std::move(done));
    auto split = std::make_shared<Split>((out.size() + most - 1) / most, std::move(done));
    for (std::size_t at = 0; at < out.size(); at += most)
        read_frame(g, offset + at, out.subspan(at, std::min(most, out.size() - at)), Split::part(split));
}

void TcpClient::read_frame(const proto::RegionGrant& g, std::uint64_t offset, std::span<std::byte> out,
                           client::Done done) {
    Pending p;
    p.op = "read";
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
    p.op = "atomic_write";
    p.done = std::move(done);
    auto build = [&](std::uint32_t id) {
        proto::encode(outq_.arena(), id, proto::AtomicWrite{g.id, offset, value});
        outq_.commit();
    };
    submit(std::move(p), build);
}

void TcpClient::flush(const proto::RegionGrant& g, std::span<const proto::Range> ranges, client::Done done) {
    Pending p;
    p.op = "flush";
    p.done = std::move(done);
    auto build = [&](std::uint32_t id) {
        proto::encode(outq_.arena(), id, proto::Flush{g.id, {ranges.begin(), ranges.end()}});
        outq_.commit();
    };
    submit(std::move(p), build);
}

void TcpClient::send(std::span<const std::byte> payload, client::Done done) {
    Pending p;
    p.op = "send";
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
        if (msg.size() > out.size())
            return done(client::message_dropped(where_, msg.size(), out.size()));
        std::memcpy(out.data(), msg.data(), msg.size());
        return done(msg.size());
    }
    if (state_ != State::ready) {
        Error err = failed_locked("recv");
        lock.unlock();
        return done(std::move(err));
    }
    recv_waiters_.emplace_back(out, std::move(done));
    update_watch_locked();
}

Result<proto::RegionGrant> TcpClient::open_region(const proto::OpenRegion& req) {
    auto p = std::make_shared<std::promise<Result<proto::RegionGrant>>>();
    auto f = p->get_future();
    Pending pending;
    pending.kind = Kind::region;
    pending.op = "open_region";
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
