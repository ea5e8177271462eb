// A hand-driven protocol peer over a blocking socket, for the bad-input
// tests: it speaks exactly the bytes a test wants, including wrong ones,
// which rpm's own client would refuse to send.
#pragma once

#include "protocol/protocol.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <string>
#include <vector>

namespace rpm::test {

class RawPeer {
public:
    explicit RawPeer(std::uint16_t port) {
        fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(port);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        timeval tv{5, 0};  // a test never hangs on a silent server
        ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    }
    ~RawPeer() { if (fd_ >= 0) ::close(fd_); }
    RawPeer(const RawPeer&) = delete;
    RawPeer& operator=(const RawPeer&) = delete;

    [[nodiscard]] bool connected() const { return connected_; }

    bool send_bytes(std::span<const std::byte> b) {
        return ::send(fd_, b.data(), b.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(b.size());
    }

    /// Send `frame` again and again without reading anything, until
    /// `max_frames` went out or the socket took nothing for `stall` (the
    /// server stopped reading). Returns the frames sent whole.
    std::size_t flood(std::span<const std::byte> frame, std::size_t max_frames, int stall_ms) {
        std::vector<std::byte> batch;
        for (int i = 0; i < 256; ++i) batch.insert(batch.end(), frame.begin(), frame.end());
        std::size_t sent = 0;  // bytes
        const std::size_t limit = max_frames * frame.size();
        while (sent < limit) {
            const std::size_t at = sent % batch.size();
            const std::size_t n = std::min(batch.size() - at, limit - sent);
            const ssize_t k = ::send(fd_, batch.data() + at, n, MSG_DONTWAIT | MSG_NOSIGNAL);
            if (k > 0) {
                sent += static_cast<std::size_t>(k);
                continue;
            }
            if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK) break;
            pollfd p{fd_, POLLOUT, 0};
            if (::poll(&p, 1, stall_ms) <= 0) break;
        }
        return sent / frame.size();
    }

    /// The next frame, or nullopt when the server closed (or went silent).
    std::optional<std::pair<proto::Header, std::vector<std::byte>>> next() {
        std::byte buf[4096];
        while (true) {
            if (auto f = reader_.next())
                return last_ = std::make_pair(f->first, std::vector<std::byte>(f->second.begin(), f->second.end()));
            ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
            if (n <= 0) return std::nullopt;
            reader_.feed(std::span(buf, static_cast<std::size_t>(n)));
        }
    }

    /// Read the hello (unless `hello_read`: it was, by next()) and
    /// authenticate as `id` with `secret` (and `version`).
    std::optional<std::pair<proto::Header, std::vector<std::byte>>> login(
        const std::string& id, const std::string& secret, std::uint16_t version = proto::kVersion,
        bool hello_read = false) {
        auto hello_frame = hello_read ? last_ : next();
        if (!hello_frame) return std::nullopt;
        auto hello = proto::decode_hello(hello_frame->second);
        if (!hello) return std::nullopt;
        proto::Auth a;
        a.version = version;
        a.client_id = id;
        a.client_nonce = proto::random_nonce();
        a.mac = proto::auth_mac(secret, hello->challenge, id, a.client_nonce);
        std::vector<std::byte> out;
        proto::encode(out, 1, a);
        send_bytes(out);
        return next();
    }

    template <class Msg>
    std::optional<std::pair<proto::Header, std::vector<std::byte>>> request(std::uint32_t id, const Msg& m) {
        std::vector<std::byte> out;
        proto::encode(out, id, m);
        if (!send_bytes(out)) return std::nullopt;
        return next();
    }

private:
    int fd_ = -1;
    bool connected_ = false;
    proto::FrameReader reader_;
    std::optional<std::pair<proto::Header, std::vector<std::byte>>> last_;  ///< the last frame next() returned
};

} // namespace rpm::test
