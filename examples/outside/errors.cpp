// outside-errors: what rpm's failures look like to a program, made to
// happen on purpose, each checked against the code client.hpp documents:
//   connecting to a port nobody listens on   errc::io_error
//   a wrong secret                           errc::auth_failed
//   an unknown region                        errc::invalid_argument
//   a write past the region's end            errc::out_of_range
// and the library's own log lines (here: the server closing a connection
// that never authenticated), taken over with rpm::set_log_handler.
//
//   outside-errors DIR
//
// DIR must exist; the region file DIR/errors.pool is created there. Exit
// status 0 when every error was the documented one, 1 otherwise, 2 for a bad
// command line.
#include <rpm/client.hpp>
#include <rpm/error.hpp>
#include <rpm/log.hpp>
#include <rpm/server.hpp>
#include <rpm/version.hpp>

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

// The headers say which rpm they are at compile time; a program that needs a
// newer API can refuse to build against an older one.
#if RPM_VERSION < RPM_VERSION_AT(1, 0, 0)
#error "this example needs rpm 1.0.0 or newer (its Result-returning data path)"
#endif

namespace {

int failures = 0;

// Every failure is an rpm::Error: its code (of rpm's category) compares
// equal to the rpm::errc it holds; message() is the text worth showing a user.
void expect(std::string_view what, std::error_code got, rpm::errc want, std::string_view want_name,
            std::string_view message) {
    const bool ok = got == want;
    if (!ok) ++failures;
    std::cout << what << ": " << (got ? std::string(got.category().name()) + " error " + std::to_string(got.value())
                                      : std::string("success"))
              << (ok ? " = errc::" : " != errc::") << want_name << (ok ? ", as documented" : ", NOT as documented")
              << "\n  message: " << message << "\n";
}

// Every call returns a Result: its Error holds the code and a detail (which
// address, which region, which range) that message() puts in front.
template <class T>
void expect(std::string_view what, const rpm::Result<T>& r, rpm::errc want, std::string_view want_name) {
    if (r) expect(what, {}, want, want_name, "it succeeded");
    else expect(what, r.error().code(), want, want_name, r.error().message());
}

// A TCP socket on 127.0.0.1, bound to a free port. Not listening on it
// keeps the port taken, so a connection to it is refused for certain;
// connecting it to a port makes a peer that never speaks.
struct Socket {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    Socket() = default;
    Socket(const Socket&) = delete;
    Socket& operator=(const Socket&) = delete;
    ~Socket() {
        if (fd >= 0) ::close(fd);
    }
    static sockaddr_in loopback(std::uint16_t port) {
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = htons(port);
        return a;
    }
    std::uint16_t bind_any() {
        auto a = loopback(0);
        socklen_t len = sizeof a;
        if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
            ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
            return 0;
        return ntohs(a.sin_port);
    }
    bool connect_to(std::uint16_t port) {
        auto a = loopback(port);
        return ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    }
};

// What the library logs, kept for the program to look at. The handler runs
// on rpm's threads, possibly several at once (hence the lock), and must not
// call back into rpm: it copies the line, and the main thread formats it.
struct LogCapture {
    struct Line {
        rpm::LogLevel level;
        std::string component, message;
    };
    std::mutex mu;
    std::condition_variable cv;
    std::vector<Line> lines;
    void add(rpm::LogLevel level, std::string_view component, std::string_view message) {
        {
            std::lock_guard lock(mu);
            lines.push_back({level, std::string(component), std::string(message)});
        }
        cv.notify_all();
    }
    // The first line whose message contains `text` within `timeout`, as
    // "LEVEL [COMPONENT] MESSAGE"; "" if none came.
    std::string wait_for(std::string_view text, std::chrono::milliseconds timeout) {
        std::unique_lock lock(mu);
        const Line* found = nullptr;
        cv.wait_for(lock, timeout, [&] {
            for (const auto& l : lines) {
                if (l.message.find(text) == std::string::npos) continue;
                found = &l;  // read below under the same lock, before `lines` can grow
                return true;
            }
            return false;
        });
        if (!found) return {};
        return std::string(rpm::to_string(found->level)) + " [" + found->component + "] " + found->message;
    }
};

// The library running may be newer than the headers compiled against
// (a shared library upgraded underneath), never older.
bool library_not_older_than_headers() {
    std::cout << "headers: rpm " << RPM_VERSION_MAJOR << "." << RPM_VERSION_MINOR << "." << RPM_VERSION_PATCH
              << " (RPM_VERSION " << RPM_VERSION << "); library: rpm " << rpm::version() << " ("
              << rpm::version_number() << ")\n";
    if (rpm::version_number() >= RPM_VERSION) return true;
    std::cerr << "outside-errors: the library is older than the headers this program was built with\n";
    return false;
}

// The library's own lines go to stderr by default; a program hands them to
// its logger instead. RPM_LOG=error would hide the warning looked for below,
// so let warnings through at least.
void capture_library_log(LogCapture& captured) {
    rpm::set_log_handler([&captured](rpm::LogLevel level, std::string_view component, std::string_view message) {
        captured.add(level, component, message);
    });
    if (rpm::log_level() < rpm::LogLevel::warning) rpm::set_log_level(rpm::LogLevel::warning);
}

rpm::Result<rpm::Server> start_server(const std::filesystem::path& dir) {
    rpm::ServerOptions so;
    so.listen = {"tcp://127.0.0.1:0"};
    so.secrets["app"] = "right-secret";
    so.io_threads = 1;
    // Short, so that the silent peer below is closed (and logged) soon; long
    // enough for the real clients' handshakes on a busy machine.
    so.handshake_timeout = std::chrono::seconds(1);
    so.regions.push_back({"notes", dir / "errors.pool", 1u << 20, true, {}});
    return rpm::Server::start(std::move(so));
}

rpm::ClientOptions client_options() {
    rpm::ClientOptions co;
    co.client_id = "app";
    co.secret = "right-secret";
    co.timeout = std::chrono::seconds(5);
    return co;
}

// Errors 1 and 2, of connecting. False when the test itself could not be
// set up (said on stderr).
bool expect_connect_errors(const rpm::ClientOptions& co, const std::string& uri) {
    {  // 1. Nobody listens: the connection is refused.
        Socket taken;
        const auto port = taken.bind_any();
        if (port == 0) {
            std::cerr << "outside-errors: cannot bind a socket on 127.0.0.1\n";
            return false;
        }
        expect("connect to a closed port", rpm::Client(co).connect("tcp://127.0.0.1:" + std::to_string(port)),
               rpm::errc::io_error, "io_error");
    }
    {  // 2. A wrong secret: refused, and the message does not say whether the id exists.
        auto wrong = co;
        wrong.secret = "wrong-secret";
        expect("connect with a wrong secret", rpm::Client(wrong).connect(uri), rpm::errc::auth_failed,
               "auth_failed");
    }
    return true;
}

// Errors 3 and 4, on a connection. False as expect_connect_errors.
bool expect_region_errors(rpm::Connection& conn) {
    {  // 3. An unknown region: the same answer as a region not granted, so names do not leak.
        expect("open an unknown region", conn.open_region("no-such-region"), rpm::errc::invalid_argument,
               "invalid_argument");
    }
    {  // 4. A write past the end: refused before anything is sent; the connection goes on.
        auto notes = conn.open_region("notes");
        if (!notes) {
            std::cerr << "outside-errors: open_region notes: " << notes.error().message() << "\n";
            return false;
        }
        const std::array<std::uint8_t, 8> bytes{1, 2, 3, 4, 5, 6, 7, 8};
        const rpm::Result<void> past = notes->write(notes->size() - 4, bytes.data(), bytes.size());
        expect("write 8 bytes 4 before the region's end", past, rpm::errc::out_of_range, "out_of_range");
        const rpm::Result<void> again = notes->persist(0, "a persist in range");
        std::cout << "  the connection goes on: a persist in range "
                  << (again ? std::string("succeeded") : "failed: " + again.error().message()) << "\n";
        if (!again) ++failures;
    }
    return true;
}

// 5. A peer that connects and never authenticates: the server closes it and
// logs why. False as expect_connect_errors.
bool expect_silent_peer_logged(std::uint16_t port, const std::string& uri, LogCapture& captured) {
    Socket silent;
    if (!silent.connect_to(port)) {
        std::cerr << "outside-errors: cannot connect a raw socket to " << uri << "\n";
        return false;
    }
    const auto line = captured.wait_for("handshake_timeout", std::chrono::seconds(10));
    std::cout << "library log: " << (line.empty() ? "NOTHING within 10 s" : line) << "\n";
    if (line.empty()) ++failures;
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: outside-errors DIR\n";
        return 2;
    }
    if (!library_not_older_than_headers()) return 1;
    LogCapture captured;
    capture_library_log(captured);
    auto server = start_server(argv[1]);
    if (!server) {
        std::cerr << "outside-errors: server: " << server.error().message() << "\n";
        return 1;
    }
    const std::string uri = "tcp://127.0.0.1:" + std::to_string(server->port(rpm::Scheme::tcp));
    const rpm::ClientOptions co = client_options();
    if (!expect_connect_errors(co, uri)) return 1;

    auto conn = rpm::Client(co).connect(uri);
    if (!conn) {
        std::cerr << "outside-errors: connect " << uri << ": " << conn.error().message() << "\n";
        return 1;
    }
    if (!expect_region_errors(*conn)) return 1;
    if (!expect_silent_peer_logged(server->port(rpm::Scheme::tcp), uri, captured)) return 1;

    conn->close();
    server->stop();
    rpm::set_log_handler({});  // back to stderr: `captured` is about to go
    std::cout << "outside-errors: " << (failures == 0 ? "every error as documented" : "UNEXPECTED results") << "\n";
    return failures == 0 ? 0 : 1;
}
