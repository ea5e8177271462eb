// The RESP client of rpm-kvstore (remote.hpp).
#include "remote.hpp"

#include "node.hpp"
#include "resp.hpp"
#include "resp_service.hpp"

#include <rpm/coordinator.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <thread>

namespace kvcli {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
constexpr auto kAttempt = 2s;  // a node that does not answer by then is passed over

// One blocking connection with a timeout on every send and receive.
class RespConn {
public:
    RespConn() = default;
    RespConn(const RespConn&) = delete;
    RespConn& operator=(const RespConn&) = delete;
    ~RespConn() { close(); }
    void close() {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
        in_.clear();
    }
    [[nodiscard]] bool open() const { return fd_ >= 0; }

    rpm::Result<void> connect(const std::string& addr) {
        close();
        std::string host;
        std::uint16_t port = 0;
        sockaddr_in sa{};
        if (!kvnode::split_host_port(addr, host, port) || ::inet_pton(AF_INET, host.c_str(), &sa.sin_addr) != 1)
            return rpm::Error(rpm::errc::invalid_argument, addr + ": expected IPV4:PORT");
        sa.sin_family = AF_INET;
        sa.sin_port = htons(port);
        fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        const timeval tv{std::chrono::duration_cast<std::chrono::seconds>(kAttempt).count(), 0};
        const int one = 1;
        ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (::connect(fd_, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0) {
            const int e = errno;
            close();
            return rpm::Error(rpm::errc::io_error, addr + ": " + std::strerror(e));
        }
        return {};
    }

    rpm::Result<resp::Reply> call(std::initializer_list<std::string_view> args) {
        std::string out;
        resp::command(out, args);
        for (std::size_t sent = 0; sent < out.size();) {
            const auto n = ::send(fd_, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
            if (n <= 0) return lost("send");
            sent += static_cast<std::size_t>(n);
        }
        for (;;) {
            resp::Reply r;
            auto p = resp::parse_reply(in_, r);
            if (p.status == resp::Status::done) return in_.erase(0, p.consumed), r;
            if (p.status == resp::Status::error) return close(), rpm::Error(rpm::errc::io_error, "bad reply: " + p.error);
            char buf[64 << 10];
            const auto n = ::recv(fd_, buf, sizeof buf, 0);
            if (n <= 0) return lost(n == 0 ? "closed by the node" : "receive");
            in_.append(buf, static_cast<std::size_t>(n));
        }
    }

private:
    rpm::Error lost(const char* what) {
        const int e = errno;
        close();
        if (std::strcmp(what, "closed by the node") == 0) return {rpm::errc::io_error, what};
        return {rpm::errc::io_error, std::string(what) + ": " + (e == EAGAIN ? "no answer within 2 s" : std::strerror(e))};
    }
    int fd_ = -1;
    std::string in_;
};

bool starts_with(const std::string& s, std::string_view p) { return s.rfind(p, 0) == 0; }

// Talks to the primary, wherever it is now.
class Remote {
public:
    explicit Remote(RemoteArgs a) : a_(std::move(a)) {}

    /// The reply to `args` from the primary (or from --node without
    /// follow). Error replies a failover explains are retried until the
    /// deadline; others are returned as replies.
    rpm::Result<resp::Reply> call(std::initializer_list<std::string_view> args) {
        const auto deadline = Clock::now() + std::chrono::milliseconds(a_.timeout_ms);
        rpm::Error last(rpm::errc::io_error, "no attempt");
        for (;;) {
            auto r = attempt(args);
            if (!a_.follow) return r;
            if (r && !(r->kind == resp::Reply::Kind::error && transient(*r))) return r;
            last = r ? rpm::Error(rpm::errc::io_error, r->text) : r.error();
            if (Clock::now() >= deadline) break;
            std::this_thread::sleep_for(100ms);
        }
        return rpm::Error(rpm::errc::io_error, "no primary answered within " + std::to_string(a_.timeout_ms) +
                                                   " ms; last: " + last.message());
    }

    /// The leader etcd names: "NAME HOST:PORT" and its term.
    rpm::Result<std::optional<rpm::Leader>> leader() {
        if (!coord_) {
            auto o = rpm::parse_coordinator_uri(a_.coordinator);
            if (!o) return o.error();
            o->election = a_.election;
            auto c = rpm::connect_etcd(std::move(*o));
            if (!c) return c.error();
            coord_ = std::move(*c);
        }
        return coord_->leader();
    }

private:
    static bool transient(const resp::Reply& r) {
        return starts_with(r.text, "NOTLEADER") || starts_with(r.text, "FENCED") ||
               starts_with(r.text, "NOREPLICAS") || starts_with(r.text, "ERR this node stepped down");
    }

    rpm::Result<resp::Reply> attempt(std::initializer_list<std::string_view> args) {
        if (!conn_.open()) {
            auto addr = primary_address();
            if (!addr) return addr.error();
            if (auto c = conn_.connect(*addr); !c) return c.error();
        }
        auto r = conn_.call(args);
        if (r && r->kind == resp::Reply::Kind::error && transient(*r)) {
            conn_.close();
            redirect_.clear();
            std::string name, addr, term;
            // "NOTLEADER NAME HOST:PORT TERM": try there next.
            if (starts_with(r->text, "NOTLEADER ")) {
                const auto rest = r->text.substr(10);
                if (rest != "none" && parse_candidate(rest.substr(0, rest.rfind(' ')), name, addr)) redirect_ = addr;
            }
        }
        return r;
    }

    rpm::Result<std::string> primary_address() {
        if (!a_.node.empty() && (!a_.follow || a_.coordinator.empty()) && redirect_.empty()) return a_.node;
        if (!redirect_.empty()) return redirect_;
        auto l = leader();
        if (!l) return l.error();
        std::string name, addr;
        if (!*l) return rpm::Error(rpm::errc::io_error, "etcd names no leader");
        if (!parse_candidate((*l)->name, name, addr))
            return rpm::Error(rpm::errc::io_error, "the leader key holds '" + (*l)->name + "', not a node's");
        return addr;
    }

    RemoteArgs a_;
    RespConn conn_;
    std::string redirect_;
    std::unique_ptr<rpm::Coordinator> coord_;
};

int failed(const std::string& what, const resp::Reply& r) {
    if (r.kind == resp::Reply::Kind::error) return fail(what + ": " + r.text, 3);
    return fail(what + ": unexpected reply", 3);
}

} // namespace

int remote(const RemoteArgs& a, RemoteCommand cmd, const std::string& key, const std::string& value) {
    Remote rem(a);
    rpm::Result<resp::Reply> r = rpm::Error(rpm::errc::invalid_argument);
    switch (cmd) {
    case RemoteCommand::put: r = rem.call({"SET", key, value}); break;
    case RemoteCommand::get: r = rem.call({"GET", key}); break;
    case RemoteCommand::remove: r = rem.call({"DEL", key}); break;
    case RemoteCommand::info: r = rem.call({"INFO"}); break;
    }
    if (!r) return fail(r.error().message(), 3);
    using K = resp::Reply::Kind;
    if (cmd == RemoteCommand::put && r->kind == K::simple) return std::cout << "ok\n", 0;
    if (cmd == RemoteCommand::get && r->kind == K::null) return std::cout << "not found\n", 1;
    if ((cmd == RemoteCommand::get || cmd == RemoteCommand::info) && r->kind == K::bulk)
        return std::cout << r->text << (cmd == RemoteCommand::get ? "\n" : ""), 0;
    if (cmd == RemoteCommand::remove && r->kind == K::integer)
        return std::cout << (r->integer ? "deleted\n" : "not found\n"), r->integer ? 0 : 1;
    return failed(key.empty() ? "info" : key, *r);
}

int remote_load(const RemoteArgs& a, const LoadArgs& l) {
    const int fd = ::open(l.acked.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return fail(l.acked + ": " + std::strerror(errno), 2);
    Remote rem(a);
    std::uint64_t acked = 0;
    for (std::uint64_t i = 0; i < l.count; ++i) {
        const auto key = load_key(l.run, i);
        auto r = rem.call({"SET", key, load_value(l.run, i)});
        if (!r || r->kind != resp::Reply::Kind::simple) {
            ::close(fd);
            std::cout << "load: run " << l.run << ": " << acked << " puts acknowledged before the failure\n";
            return r ? failed("load: put " + key, *r) : fail("load: put " + key + ": " + r.error().message(), 3);
        }
        if (!log_acked(fd, key)) return ::close(fd), fail(l.acked + ": " + std::strerror(errno), 3);
        ++acked;
    }
    ::close(fd);
    std::cout << "load: run " << l.run << ": " << acked << " puts acknowledged\n";
    return 0;
}

int remote_verify(const RemoteArgs& a, const std::string& acked) {
    Remote rem(a);
    std::string error;
    const int status = verify_with(acked, [&](const std::string& key) -> std::optional<std::string> {
        if (!error.empty()) return std::nullopt;
        auto r = rem.call({"GET", key});
        if (r && r->kind == resp::Reply::Kind::bulk) return r->text;
        if (r && r->kind == resp::Reply::Kind::null) return std::nullopt;
        error = "get " + key + ": " + (r ? r->text : r.error().message());
        return std::nullopt;
    });
    if (!error.empty()) return fail("verify: " + error, 3);
    return status;
}

int status(const RemoteArgs& a) {
    Remote rem(a);
    auto l = rem.leader();
    if (!l) return fail("status: " + l.error().message(), 3);
    std::string name, addr;
    if (!*l || !parse_candidate((*l)->name, name, addr)) return std::cout << "leader none\n", 1;
    std::cout << "leader " << name << " " << addr << " term " << (*l)->fencing_term << "\n";
    auto r = rem.call({"INFO"});
    if (!r || r->kind != resp::Reply::Kind::bulk) return r ? failed("info", *r) : fail("info: " + r.error().message(), 3);
    std::cout << r->text;
    return 0;
}

} // namespace kvcli
