// The RESP service of an rpm-kvstore node (resp_service.hpp): Asio on one
// thread; group commit across the connections that were readable together.
#include "resp_service.hpp"

#include <boost/asio.hpp>

#include <array>
#include <charconv>
#include <chrono>
#include <future>
#include <thread>

namespace kvnode {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace conn_detail {  // named: Service::Impl holds these (no anonymous types in it)

struct Conn : std::enable_shared_from_this<Conn> {
    explicit Conn(tcp::socket s) : sock(std::move(s)) {}
    tcp::socket sock;
    std::string in;                    // received, not yet parsed
    std::array<char, 64 << 10> buf{};  // one read
    std::vector<std::string> replies;  // of the commands parsed so far
    std::vector<std::size_t> waiting;  // indexes in replies that a commit must cover
    std::string out;
    bool closing = false;              // a protocol error: close once written
};

std::size_t kMaxCommand(const ServiceLimits& l) { return 2 * l.resp.max_bulk + 4 * l.resp.max_line; }

} // namespace conn_detail

using conn_detail::Conn;
using conn_detail::kMaxCommand;

struct Service::Impl {
    Impl(Handler& h, ServiceLimits l) : handler(h), limits(l) {}
    Handler& handler;
    ServiceLimits limits;
    asio::io_context io;
    tcp::acceptor acceptor{io};
    std::vector<std::shared_ptr<Conn>> conns;           // open ones (for the limit and shutdown)
    std::vector<std::shared_ptr<Conn>> commit_waiters;  // replies held for the next commit
    bool commit_posted = false;
    ServiceStats stats;
    std::thread thread;

    void accept();
    void read(const std::shared_ptr<Conn>& c);
    std::vector<std::vector<std::string>> parsed;  // a read's commands (reused: their capacity stays)
    std::size_t parse_all(Conn& c, std::string& error);
    void consume(const std::shared_ptr<Conn>& c);
    void commit_batch();
    void flush(const std::shared_ptr<Conn>& c);
    void drop(const std::shared_ptr<Conn>& c);
};

void Service::Impl::accept() {
    acceptor.async_accept([this](boost::system::error_code ec, tcp::socket s) {
        if (ec == asio::error::operation_aborted) return;
        if (!ec) {
            if (conns.size() >= limits.max_connections) {
                boost::system::error_code ignored;
                s.close(ignored);  // refused: the limit holds against any one peer
            } else {
                s.set_option(tcp::no_delay(true), ec);
                auto c = std::make_shared<Conn>(std::move(s));
                conns.push_back(c);
                read(c);
            }
        }
        accept();
    });
}

void Service::Impl::read(const std::shared_ptr<Conn>& c) {
    c->sock.async_read_some(asio::buffer(c->buf), [this, c](boost::system::error_code ec, std::size_t n) {
        if (ec) return drop(c);
        c->in.append(c->buf.data(), n);
        consume(c);
    });
}

// Every whole command received, into `parsed` (its first n); a protocol
// error after them is left in `error` (the connection closes once answered).
std::size_t Service::Impl::parse_all(Conn& c, std::string& error) {
    std::size_t used = 0, n = 0;
    for (;;) {
        if (parsed.size() == n) parsed.emplace_back();
        auto p = resp::parse_command(std::string_view(c.in).substr(used), parsed[n], limits.resp);
        // Each bulk string is bounded by the parser; a whole command (a
        // key and a value) by this, or many arguments at the bulk limit
        // would let one connection hold max_args times as much.
        if (p.status == resp::Status::need_more && c.in.size() - used > kMaxCommand(limits))
            p = {resp::Status::error, 0, "command larger than " + std::to_string(kMaxCommand(limits)) + " bytes"};
        if (p.status == resp::Status::need_more) break;
        if (p.status == resp::Status::error) {
            error = p.error;
            break;
        }
        used += p.consumed;
        ++n;
    }
    c.in.erase(0, used);
    return n;
}

// Execute every whole command received, their keys hinted first (Handler::
// prefetch); hold the replies for a commit if any of them wrote, else send
// them now.
void Service::Impl::consume(const std::shared_ptr<Conn>& c) {
    ++stats.reads;
    std::string error;
    const std::size_t n = parse_all(*c, error);
    for (std::size_t i = 0; i < n; ++i) handler.prefetch(parsed[i]);
    for (std::size_t i = 0; i < n; ++i) {
        c->replies.emplace_back();
        ++stats.commands;
        if (handler.execute(parsed[i], c->replies.back())) c->waiting.push_back(c->replies.size() - 1);
    }
    if (!error.empty()) {
        c->replies.emplace_back();
        resp::error(c->replies.back(), "ERR protocol error: " + error);
        c->closing = true;
    }
    if (c->replies.empty()) return read(c);  // half a command so far
    // Replies that waited for nothing go now, unless a commit is pending:
    // a read may have seen a write that commit has not made durable yet
    // (another connection's, executed just before), and must not be
    // answered before it holds.
    if (c->waiting.empty() && !commit_posted) return flush(c);
    commit_waiters.push_back(c);
    if (!commit_posted) {
        // Posted, not run now: the other connections that are readable
        // already are served first, and share this commit.
        commit_posted = true;
        asio::post(io, [this] { commit_batch(); });
    }
}

void Service::Impl::commit_batch() {
    commit_posted = false;
    auto batch = std::move(commit_waiters);
    commit_waiters.clear();
    if (handler.replies_before_commit()) {  // the planted bug (Handler)
        for (auto& c : batch) c->waiting.clear(), flush(c);
        return (void)handler.commit();
    }
    const auto t0 = std::chrono::steady_clock::now();
    auto r = handler.commit();
    stats.commit_ns += static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count());
    ++stats.commits;
    stats.commit_conns += batch.size();
    std::string failed;
    if (!r) resp::error(failed, handler.commit_error(r.error()));
    for (auto& c : batch) {
        stats.covered += c->waiting.size();
        if (!r)
            for (auto i : c->waiting) c->replies[i] = failed;
        c->waiting.clear();
        flush(c);
    }
}

void Service::Impl::flush(const std::shared_ptr<Conn>& c) {
    c->out.clear();
    for (auto& r : c->replies) c->out += r;
    c->replies.clear();
    asio::async_write(c->sock, asio::buffer(c->out), [this, c](boost::system::error_code ec, std::size_t) {
        if (ec || c->closing) return drop(c);
        // Commands that arrived with the last read may be whole already.
        if (!c->in.empty()) return consume(c);
        read(c);
    });
}

void Service::Impl::drop(const std::shared_ptr<Conn>& c) {
    boost::system::error_code ignored;
    c->sock.close(ignored);
    std::erase(conns, c);
}

bool split_host_port(const std::string& addr, std::string& host, std::uint16_t& port) {
    const auto colon = addr.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == addr.size()) return false;
    host = addr.substr(0, colon);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    unsigned v = 0;
    const char* b = addr.data() + colon + 1;
    const char* e = addr.data() + addr.size();
    auto [p, ec] = std::from_chars(b, e, v);
    if (ec != std::errc() || p != e || v > 65535) return false;
    port = static_cast<std::uint16_t>(v);
    return true;
}

rpm::Result<std::unique_ptr<Service>> Service::start(const std::string& addr, Handler& handler, ServiceLimits limits) {
    std::string host;
    std::uint16_t port = 0;
    if (!split_host_port(addr, host, port))
        return rpm::Error(rpm::errc::invalid_argument, "--serve " + addr + ": expected HOST:PORT");
    auto impl = std::make_unique<Impl>(handler, limits);
    boost::system::error_code ec;
    const auto ip = asio::ip::make_address(host, ec);
    if (ec) return rpm::Error(rpm::errc::invalid_argument, "--serve " + addr + ": not an IP address");
    const tcp::endpoint ep(ip, port);
    impl->acceptor.open(ep.protocol(), ec);
    if (!ec) impl->acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) impl->acceptor.bind(ep, ec);
    if (!ec) impl->acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) return rpm::Error(rpm::errc::io_error, "--serve " + addr + ": " + ec.message());
    impl->accept();
    auto* raw = impl.get();
    impl->thread = std::thread([raw] { raw->io.run(); });
    return std::unique_ptr<Service>(new Service(std::move(impl)));
}

Service::Service(std::unique_ptr<Impl> impl) noexcept : impl_(std::move(impl)) {}

Service::~Service() {
    run([this] {
        boost::system::error_code ignored;
        impl_->acceptor.close(ignored);
        for (auto& c : std::vector(impl_->conns)) c->sock.close(ignored);
    });
    impl_->io.stop();
    impl_->thread.join();
}

std::uint16_t Service::port() const noexcept {
    boost::system::error_code ec;
    return impl_->acceptor.local_endpoint(ec).port();
}

const ServiceStats& Service::stats() const noexcept { return impl_->stats; }

void Service::run(const std::function<void()>& fn) {
    std::promise<void> done;
    asio::post(impl_->io, [&] {
        fn();
        done.set_value();
    });
    done.get_future().wait();
}

} // namespace kvnode
