// rpm's log through the C API: a function set with rpm_log_set_function
// receives the library's lines (here a server's refusal of connections
// past ServerOptions::max_unauthenticated_per_address, 32 by default,
// opened as raw sockets that never authenticate), NULL sends them back to
// stderr, and the level's setter refuses values outside the enumeration.
#include "capi_helpers.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <fstream>
#include <iterator>
#include <string>

namespace capi {
namespace {

struct Line {
    int level;
    std::string component;
    std::string message;
};

struct Lines {
    std::mutex mu;
    std::vector<Line> lines;
    static void fn(void* ctx, int level, const char* component, const char* message) {
        auto* l = static_cast<Lines*>(ctx);
        std::lock_guard lock(l->mu);
        l->lines.push_back({level, component ? component : "", message ? message : ""});
    }
    std::size_t count_with(const std::string& text) {
        std::lock_guard lock(mu);
        std::size_t n = 0;
        for (const auto& l : lines) n += l.message.find(text) != std::string::npos;
        return n;
    }
};

/// Puts the log back to stderr and its level back, whatever the test did.
struct LogRestore {
    int level = RPM_LOG_WARNING;
    LogRestore() { rpm_log_get_level(&level); }
    ~LogRestore() {
        rpm_log_set_function(nullptr, nullptr);
        rpm_log_set_level(level);
    }
};

/// Opens `n` TCP connections to 127.0.0.1:port that never authenticate.
std::vector<int> raw_connections(std::uint16_t port, int n) {
    std::vector<int> fds;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    for (int i = 0; i < n; ++i) {
        const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0) break;
        if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
            ::close(fd);
            break;
        }
        fds.push_back(fd);
    }
    return fds;
}

void close_all(std::vector<int>& fds) {
    for (int fd : fds) ::close(fd);
    fds.clear();
}

constexpr const char* kRefusal = "refused a connection from 127.0.0.1";

TEST(CapiLog, FunctionReceivesTheServersLines) {
    LogRestore restore;
    CAPI_ASSERT_OK(rpm_log_set_level(RPM_LOG_WARNING));
    Lines got;
    CAPI_ASSERT_OK(rpm_log_set_function(Lines::fn, &got));
    TempDir dir;
    TestServer server;
    CAPI_ASSERT_OK(server.start(dir, {{"r0", 65536}}));
    auto fds = raw_connections(server.port(), 40);
    ASSERT_EQ(fds.size(), 40u);
    EXPECT_TRUE(eventually([&] { return got.count_with(kRefusal) > 0; }));
    close_all(fds);
    std::lock_guard lock(got.mu);
    for (const auto& l : got.lines) {
        if (l.message.find(kRefusal) == std::string::npos) continue;
        EXPECT_EQ(l.level, RPM_LOG_WARNING);
        EXPECT_EQ(l.component, "server");
        EXPECT_NE(l.message.find("max_unauthenticated_per_address"), std::string::npos) << l.message;
    }
}

/// Sends fd 2 to a file while alive.
class StderrToFile {
public:
    explicit StderrToFile(const std::string& path) : path_(path) {
        std::fflush(stderr);
        saved_ = ::dup(2);
        const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        ::dup2(fd, 2);
        ::close(fd);
    }
    ~StderrToFile() {
        std::fflush(stderr);
        ::dup2(saved_, 2);
        ::close(saved_);
    }
    std::string text() const {
        std::ifstream f(path_);
        return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
    }

private:
    std::string path_;
    int saved_ = -1;
};

TEST(CapiLog, NullFunctionRestoresStderr) {
    LogRestore restore;
    CAPI_ASSERT_OK(rpm_log_set_level(RPM_LOG_WARNING));
    Lines got;
    CAPI_ASSERT_OK(rpm_log_set_function(Lines::fn, &got));
    CAPI_ASSERT_OK(rpm_log_set_function(nullptr, nullptr));
    TempDir dir;
    std::string text;
    {
        StderrToFile redirect(dir.path("stderr.txt"));
        TestServer server;
        CAPI_ASSERT_OK(server.start(dir, {{"r0", 65536}}));
        auto fds = raw_connections(server.port(), 40);
        EXPECT_EQ(fds.size(), 40u);
        EXPECT_TRUE(eventually([&] { return redirect.text().find(kRefusal) != std::string::npos; }));
        close_all(fds);
        CAPI_EXPECT_OK(server.stop());
        text = redirect.text();
    }
    EXPECT_NE(text.find(kRefusal), std::string::npos) << text;
    EXPECT_EQ(got.count_with(kRefusal), 0u);  // the function set before no longer hears it
}

TEST(CapiLog, LevelRoundTripsAndRefusesOutOfRange) {
    LogRestore restore;
    for (int level : {RPM_LOG_ERROR, RPM_LOG_WARNING, RPM_LOG_INFO, RPM_LOG_DEBUG, RPM_LOG_TRACE}) {
        CAPI_ASSERT_OK(rpm_log_set_level(level));
        int got = -1;
        CAPI_ASSERT_OK(rpm_log_get_level(&got));
        EXPECT_EQ(got, level);
    }
    CAPI_ASSERT_OK(rpm_log_set_level(RPM_LOG_INFO));
    EXPECT_EQ(rpm_log_set_level(5), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_log_set_level(-1), RPM_E_INVALID_ARGUMENT);
    int got = -1;
    CAPI_ASSERT_OK(rpm_log_get_level(&got));
    EXPECT_EQ(got, RPM_LOG_INFO);  // unchanged by the refusals
    EXPECT_EQ(rpm_log_get_level(nullptr), RPM_E_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace capi
