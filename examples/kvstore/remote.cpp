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
#include <algorithm>
#include <cstring>
#include <functional>
#include <iostream>
#include <optional>
#include <span>
#include <thread>
#include <vector>

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

    /// Sends `out` (encoded commands) whole.
    rpm::Result<void> send(std::string_view out) {
        for (std::size_t sent = 0; sent < out.size();) {
            const auto n = ::send(fd_, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
            if (n <= 0) return lost("send");
            sent += static_cast<std::size_t>(n);
        }
        return {};
    }

    /// The next reply, in the order the commands were sent.
    rpm::Result<resp::Reply> receive() {
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

    /// Given each reply of a pipeline as it is read, in order; false: read no more.
    using OnReply = std::function<bool(resp::Reply&)>;

    /// The reply to `args` from the primary (or from --node without
    /// follow). Error replies a failover explains are retried until the
    /// deadline; others are returned as replies.
    rpm::Result<resp::Reply> call(std::initializer_list<std::string_view> args) {
        std::string command;
        resp::command(command, args);
        resp::Reply reply;
        auto p = pipeline({&command, 1}, [&](resp::Reply& r) { return reply = std::move(r), true; });
        if (!p) return p.error();
        return reply;
    }

    /// `commands` (each one encoded command) written in one go, then their
    /// replies read in order, each given to `on_reply` as it is read. An
    /// attempt a failover cuts short (what call() retries: a lost
    /// connection, no answer, NOTLEADER, FENCED, NOREPLICAS) is retried
    /// from the first command whose reply was not read (a reply that was
    /// never read is not given to anyone), until no reply came for
    /// --timeout-ms. Success: every reply read, or on_reply stopped. The
    /// node answers while the commands are being written, so the replies
    /// must fit the socket's receive buffer (load's: 5 bytes a put).
    rpm::Result<void> pipeline(std::span<const std::string> commands, const OnReply& on_reply) {
        const auto timeout = std::chrono::milliseconds(a_.timeout_ms);
        auto deadline = Clock::now() + timeout;
        std::size_t next = 0;  // the first command whose reply was not read
        for (;;) {
            const auto before = next;
            auto r = attempt(commands, next, on_reply);
            if (r || !a_.follow) return r;
            if (next > before) deadline = Clock::now() + timeout;  // a reply came: the wait starts again
            if (Clock::now() >= deadline)
                return rpm::Error(rpm::errc::io_error, "no primary answered within " + std::to_string(a_.timeout_ms) +
                                                           " ms; last: " + r.error().message());
            std::this_thread::sleep_for(100ms);
        }
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

    // Writes commands[next...] on the connection (opened first if need be)
    // and reads their replies; `next` moves past each one read. An error:
    // the attempt was cut short, by the connection or by a reply a failover
    // explains (without follow, such a reply is given on like any other).
    rpm::Result<void> attempt(std::span<const std::string> commands, std::size_t& next, const OnReply& on_reply) {
        if (!conn_.open()) {
            auto addr = primary_address();
            if (!addr) return addr.error();
            if (auto c = conn_.connect(*addr); !c) return c.error();
        }
        std::string out;
        for (auto i = next; i < commands.size(); ++i) out += commands[i];
        if (auto s = conn_.send(out); !s) return s.error();
        while (next < commands.size()) {
            auto r = conn_.receive();
            if (!r) return r.error();
            if (a_.follow && r->kind == resp::Reply::Kind::error && transient(*r)) return redirect(r->text);
            ++next;
            if (!on_reply(*r)) return {};
        }
        return {};
    }

    // After a reply a failover explains: a new connection next time, to
    // the leader a "NOTLEADER NAME HOST:PORT TERM" names, if it names one.
    rpm::Error redirect(const std::string& text) {
        conn_.close();
        redirect_.clear();
        std::string name, addr;
        if (starts_with(text, "NOTLEADER ")) {
            const auto rest = text.substr(10);
            if (rest != "none" && parse_candidate(rest.substr(0, rest.rfind(' ')), name, addr)) redirect_ = addr;
        }
        return {rpm::errc::io_error, text};
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
    std::uint64_t acked = 0;  // replies are read in order: puts [0, acked) had +OK
    std::optional<resp::Reply> refused;
    int log_errno = 0;
    while (acked < l.count) {
        const auto n = std::min<std::uint64_t>(std::max(l.pipeline, 1u), l.count - acked);
        std::vector<std::string> commands(n);
        for (std::uint64_t i = 0; i < n; ++i)
            resp::command(commands[i], {"SET", load_key(l.run, acked + i), load_value(l.run, acked + i)});
        auto p = rem.pipeline(commands, [&](resp::Reply& r) {
            if (r.kind != resp::Reply::Kind::simple || r.text != "OK") return refused = std::move(r), false;
            if (!log_acked(fd, load_key(l.run, acked))) return log_errno = errno, false;
            return ++acked, true;
        });
        if (p && !refused && log_errno == 0) continue;
        ::close(fd);
        if (log_errno != 0) return fail(l.acked + ": " + std::strerror(log_errno), 3);
        std::cout << "load: run " << l.run << ": " << acked << " puts acknowledged before the failure\n";
        const auto key = load_key(l.run, acked);
        return refused ? failed("load: put " + key, *refused) : fail("load: put " + key + ": " + p.error().message(), 3);
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
