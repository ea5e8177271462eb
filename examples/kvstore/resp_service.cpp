// The RESP service of an rpm-kvstore node (resp_service.hpp): Asio on one
// thread, commits on another (committer.hpp); group commit across every
// connection whose commands arrived while the last commit was in flight.
#include "resp_service.hpp"

#include "committer.hpp"

#include <boost/asio.hpp>

#include <array>
#include <charconv>
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

using Batch = std::vector<std::shared_ptr<Conn>>;

// Everything but the committer's own thread is the service thread's.
struct Service::Impl {
    Impl(Handler& h, ServiceLimits l) : handler(h), limits(l), committer([&h] { return h.commit(); }) {}
    Handler& handler;
    ServiceLimits limits;
    asio::io_context io;
    tcp::acceptor acceptor{io};
    std::vector<std::shared_ptr<Conn>> conns;  // open ones (for the limit and shutdown)
    Batch next;                  // replies held for the next commit (writes, and reads that may have seen them)
    Batch after_current;         // reads that may have seen only writes the commit in flight covers
    bool next_has_writes = false;  // a write executed since the last commit started
    bool start_posted = false;
    bool in_flight = false;
    std::vector<std::function<void()>> runs;  // Service::run's, held while a commit is in flight
    Committer committer;
    std::thread thread;

    void accept();
    void read(const std::shared_ptr<Conn>& c);
    void consume(const std::shared_ptr<Conn>& c);
    void hold(const std::shared_ptr<Conn>& c);
    void start_commit();
    void finish_commit(Batch batch, Batch readers, const rpm::Result<void>& r);
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

// Execute every whole command received; hold the replies for a commit if
// any of them wrote, else send them now.
void Service::Impl::consume(const std::shared_ptr<Conn>& c) {
    std::vector<std::string> args;
    std::size_t used = 0;
    for (;;) {
        auto p = resp::parse_command(std::string_view(c->in).substr(used), args, limits.resp);
        // Each bulk string is bounded by the parser; a whole command (a
        // key and a value) by this, or many arguments at the bulk limit
        // would let one connection hold max_args times as much.
        if (p.status == resp::Status::need_more && c->in.size() - used > kMaxCommand(limits))
            p = {resp::Status::error, 0, "command larger than " + std::to_string(kMaxCommand(limits)) + " bytes"};
        if (p.status == resp::Status::need_more) break;
        c->replies.emplace_back();
        if (p.status == resp::Status::error) {
            resp::error(c->replies.back(), "ERR protocol error: " + p.error);
            c->closing = true;
            break;
        }
        used += p.consumed;
        if (handler.execute(args, c->replies.back())) c->waiting.push_back(c->replies.size() - 1);
    }
    c->in.erase(0, used);
    if (c->replies.empty()) return read(c);  // half a command so far
    hold(c);
}

// Where a connection's replies wait. A reply that waits for nothing may
// still have read a write no commit has made durable yet (another
// connection's, executed just before): it waits for the commit that covers
// every write executed so far, which is the one in flight unless a write
// was executed after it started.
void Service::Impl::hold(const std::shared_ptr<Conn>& c) {
    if (!c->waiting.empty()) {
        next.push_back(c);
        next_has_writes = true;
    } else if (next_has_writes) {
        next.push_back(c);
    } else if (in_flight) {
        return after_current.push_back(c);
    } else {
        return flush(c);
    }
    if (!start_posted && !in_flight) {
        // Posted, not run now: the other connections that are readable
        // already are served first, and share this commit.
        start_posted = true;
        asio::post(io, [this] { start_commit(); });
    }
}

void Service::Impl::start_commit() {
    start_posted = false;
    if (in_flight || next.empty() || !runs.empty()) return;
    in_flight = true;
    next_has_writes = false;  // the commit covers every write executed so far
    auto batch = std::make_shared<Batch>(std::move(next));
    next.clear();
    committer.start([this, batch](rpm::Result<void> r) {
        asio::post(io, [this, batch, r = std::move(r)] { finish_commit(std::move(*batch), std::move(after_current), r); });
    });
}

void Service::Impl::finish_commit(Batch batch, Batch readers, const rpm::Result<void>& r) {
    in_flight = false;
    after_current.clear();
    std::string failed;
    if (!r) resp::error(failed, handler.commit_error(r.error()));
    for (auto& c : batch) {
        if (!r)
            for (auto i : c->waiting) c->replies[i] = failed;
        c->waiting.clear();
        flush(c);
    }
    for (auto& c : readers) flush(c);
    // Role changes wait for no commit in flight (Service::run).
    for (auto& fn : std::exchange(runs, {})) fn();
    // What arrived during this commit is the next one's batch.
    start_commit();
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

void Service::run(const std::function<void()>& fn) {
    std::promise<void> done;
    auto job = [&] {
        fn();
        done.set_value();
    };
    // Not while a commit is in flight: fn may replace what the handler
    // commits (a role change resets the store).
    asio::post(impl_->io, [&] {
        if (impl_->in_flight)
            impl_->runs.emplace_back(job);
        else
            job();
    });
    done.get_future().wait();
}

} // namespace kvnode
