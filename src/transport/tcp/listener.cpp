// TcpListener: bind, accept on the first I/O thread, spread sessions over
// all of them, and keep track of sessions for Server::send and stop().
#include "transport/tcp/listener.hpp"

#include "protocol/protocol.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace rpm::tcp {

namespace {

// One I/O thread per CPU this process may run on (a pinned process gets as
// many threads as CPUs it is pinned to).
unsigned default_io_threads() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        const int n = CPU_COUNT(&set);
        if (n > 0) return static_cast<unsigned>(n);
    }
    const unsigned hw = std::thread::hardware_concurrency();
    return hw > 0 ? hw : 1;
}

// Fill a sockaddr for an IPv4 or IPv6 literal; false for anything else.
bool parse_address(const std::string& host, std::uint16_t port, sockaddr_storage& ss, socklen_t& len) {
    std::memset(&ss, 0, sizeof ss);
    auto* v4 = reinterpret_cast<sockaddr_in*>(&ss);
    if (::inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons(port);
        len = sizeof *v4;
        return true;
    }
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&ss);
    std::string h = host;
    if (h.size() > 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
    if (::inet_pton(AF_INET6, h.c_str(), &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(port);
        len = sizeof *v6;
        return true;
    }
    return false;
}

// "127.0.0.1", "::1": the peer's address, which the per-address limit counts.
std::string address_text(const sockaddr_storage& ss) {
    char text[INET6_ADDRSTRLEN] = {};
    if (ss.ss_family == AF_INET)
        ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(ss).sin_addr, text, sizeof text);
    else if (ss.ss_family == AF_INET6)
        ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(ss).sin6_addr, text, sizeof text);
    return text[0] != 0 ? std::string(text) : std::string("an unknown address");
}

} // namespace

TcpListener::TcpListener(server::Service& service) : service_(service), admission_(service.options()) {
    service_.add_fence_hook(this);
}

TcpListener::~TcpListener() { stop(); }

Result<void> TcpListener::start(const std::string& host, std::uint16_t port) {
    if (const auto& tls = service_.options().tls) {
        auto ctx = TlsContext::server(tls->certificate, tls->private_key);
        if (!ctx) return ctx.error();
        tls_.emplace(std::move(*ctx));
    }
    sockaddr_storage ss{};
    socklen_t len = 0;
    if (!parse_address(host, port, ss, len))
        return Error(errc::invalid_argument, "listen address '" + host + "' is not an IP address");
    const std::string where = "tcp://" + host + ":" + std::to_string(port);
    listen_fd_ = ::socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (listen_fd_ < 0) return Error(errc::io_error, where + ": " + std::strerror(errno));
    const int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&ss), len) != 0)
        return Error(errc::io_error, "cannot bind " + where + ": " + std::strerror(errno));
    if (::listen(listen_fd_, SOMAXCONN) != 0)
        return Error(errc::io_error, "cannot listen on " + where + ": " + std::strerror(errno));
    sockaddr_storage bound{};
    socklen_t blen = sizeof bound;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &blen);
    port_ = ntohs(bound.ss_family == AF_INET ? reinterpret_cast<sockaddr_in*>(&bound)->sin_port
                                             : reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
    // Made now rather than on the first accept, which then finds entries.
    (void)read_pool();
    const unsigned n = service_.options().io_threads > 0 ? service_.options().io_threads : default_io_threads();
    for (unsigned i = 0; i < n; ++i) {
        auto t = std::make_unique<IoThread>();
        if (t->loop.error()) return Error(errc::io_error, "cannot create an event loop: " + t->loop.error().message());
        loops_.push_back(std::move(t));
    }
    if (auto ec = loops_[0]->loop.watch(listen_fd_, EPOLLIN, this))
        return Error(errc::io_error, "cannot watch " + where + ": " + ec.message());
    // A quarter of the handshake timeout: a silent connection is closed
    // between 1 and 1.25 timeouts after it was accepted.
    const auto period = std::clamp<std::chrono::milliseconds>(service_.options().handshake_timeout / 4,
                                                              std::chrono::milliseconds(10), std::chrono::seconds(1));
    loops_[0]->loop.set_tick(period, [this] { tick(); });
    for (auto& t : loops_)
        t->thread = std::thread([&loop = t->loop] {
            block_sigpipe();
            loop.run();
        });
    return {};
}

// Loop 0: accept everything pending, admit it under the connection limits,
// and hand each session to a loop in turn.
void TcpListener::on_events(std::uint32_t) {
    for (;;) {
        sockaddr_storage from{};
        socklen_t from_len = sizeof from;
        const int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&from), &from_len, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) return;
            return pause_accepting(errno);  // EMFILE, ENFILE, ENOBUFS, ENOMEM
        }
        const std::string peer = address_text(from);
        std::optional<std::pair<server::Admission::Kind, std::string>> refused;
        {
            std::lock_guard lock(mu_);
            if (stopped_) return (void)::close(fd);
            refused = admission_.admit(peer, sessions_.size());
        }
        if (refused) {
            admission_.log(refused->first, refused->second);
            ::close(fd);
            continue;
        }
        const int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        auto& loop = loops_[next_loop_++ % loops_.size()]->loop;
        auto s = std::make_shared<TcpSession>(*this, loop, Stream(fd), peer);
        {
            std::lock_guard lock(mu_);
            sessions_[s->id()] = s;
        }
        loop.post([s] { s->start(); });
    }
}

void TcpListener::pause_accepting(int err) {
    loops_[0]->loop.unwatch(listen_fd_);
    accept_paused_ = true;
    admission_.log(server::Admission::Kind::accept_failed, std::string("cannot accept connections: ") + std::strerror(err) +
                                                       "; accepting again shortly");
}

void TcpListener::tick() {
    if (accept_paused_ && !stopped_) {
        accept_paused_ = false;
        (void)loops_[0]->loop.watch(listen_fd_, EPOLLIN, this);
    }
    const auto now = std::chrono::steady_clock::now();
    const auto timeout = service_.options().handshake_timeout;
    std::vector<std::shared_ptr<TcpSession>> late;
    {
        std::lock_guard lock(mu_);
        for (const auto& [id, s] : sessions_)
            if (!s->set_up() && now - s->accepted() >= timeout) late.push_back(s);
    }
    for (auto& s : late) s->loop().post([s] { s->handshake_timed_out(); });
}

void TcpListener::handshake_over(const std::string& peer) {
    std::lock_guard lock(mu_);
    admission_.handshake_over(peer);
}

void TcpListener::forget(std::uint64_t session) {
    std::shared_ptr<TcpSession> s;
    {
        std::lock_guard lock(mu_);
        auto it = sessions_.find(session);
        if (it == sessions_.end()) return;
        s = std::move(it->second);
        sessions_.erase(it);
    }
    // The loop may still hold this batch's events for it: free it after.
    s->loop().post([s] {});
}

Result<void> TcpListener::send(std::uint64_t session, std::span<const std::byte> payload) {
    std::shared_ptr<TcpSession> s;
    {
        std::lock_guard lock(mu_);
        auto it = sessions_.find(session);
        if (it != sessions_.end()) s = it->second;
    }
    if (!s) return Error(errc::invalid_argument, "no session " + std::to_string(session) + " on this listener");
    // The client reads frames of at most kDefaultMaxPayload: a larger one
    // would end its connection. (A session already ending drops it.)
    if (payload.size() > proto::kDefaultMaxPayload)
        return Error(errc::bad_size, "a message of " + std::to_string(payload.size()) + " bytes: tcp:// sends at most " +
                                         std::to_string(proto::kDefaultMaxPayload) + " in one");
    s->loop().post([s, msg = std::vector<std::byte>(payload.begin(), payload.end())] { s->send_message(msg); });
    return {};
}

void TcpListener::region_fenced(server::Region& r, std::uint64_t term) noexcept {
    std::vector<std::shared_ptr<TcpSession>> live;
    {
        std::lock_guard lock(mu_);
        for (auto& [id, s] : sessions_) live.push_back(s);
    }
    for (auto& s : live) s->loop().post([s, rp = &r, term] { s->fence(rp, term); });
}

void TcpListener::stop() noexcept {
    service_.remove_fence_hook(this);
    if (stopped_.exchange(true) || loops_.empty()) {
        if (listen_fd_ >= 0) ::close(listen_fd_), listen_fd_ = -1;
        return;
    }
    loops_[0]->loop.post([this] { loops_[0]->loop.unwatch(listen_fd_); });
    std::vector<std::shared_ptr<TcpSession>> live;
    {
        std::lock_guard lock(mu_);
        for (auto& [id, s] : sessions_) live.push_back(s);
    }
    for (auto& s : live) s->loop().post([s] { s->close(); });
    for (auto& t : loops_) t->loop.stop();  // tasks posted before stop() still run
    for (auto& t : loops_)
        if (t->thread.joinable()) t->thread.join();
    {
        std::lock_guard lock(mu_);
        sessions_.clear();
    }
    ::close(listen_fd_);
    listen_fd_ = -1;
}

} // namespace rpm::tcp

namespace rpm::server {

Result<std::unique_ptr<Listener>> listen_tcp(Service& service, const std::string& host, std::uint16_t port) {
    auto l = std::make_unique<tcp::TcpListener>(service);
    if (auto r = l->start(host, port); !r) return r.error();
    return std::unique_ptr<Listener>(std::move(l));
}

} // namespace rpm::server
