// An in-process rpm::Server with two regions and two clients, for the
// integration tests. The transport and the "kv" region come from the
// environment, so the same tests run over tcp:// on this machine and over
// rdma:// on real emulated PM in the lab (tests/lab/suite.sh):
//   RPM_IT_TRANSPORT  tcp (default) or rdma
//   RPM_IT_ADDR       the listen address (default 127.0.0.1)
//   RPM_IT_PM         a devdax or fsdax device for "kv" (default: a 1 MiB
//                     tmpfs file); then RPM_IT_PM_DOMAIN, RPM_IT_PM_METHOD and
//                     RPM_IT_PM_PERSIST say what the grant must be (hand-written
//                     in the lab suite from docs/flush-methods.md's table).
//   RPM_IT_COMPLETION rdma:// completion mode of server and clients
//                     (adaptive, busy, event; default adaptive)
#pragma once

#include <rpm/client.hpp>
#include <rpm/completion.hpp>
#include <rpm/server.hpp>

#include "tests/support/result.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace rpm::test {

inline std::string env_or(const char* name, const std::string& fallback) {
    const char* v = std::getenv(name);
    return v && *v ? std::string(v) : fallback;
}

class ServerTest : public ::testing::Test {
protected:
    void SetUp() override {
        const auto tag = std::to_string(::getpid()) + "-" +
                         ::testing::UnitTest::GetInstance()->current_test_info()->name();
        pm_path = env_or("RPM_IT_PM", "");
        kv_path = on_pm() ? std::filesystem::path(pm_path) : std::filesystem::path("/dev/shm/rpm-it-kv-" + tag);
        logs_path = "/dev/shm/rpm-it-logs-" + tag;
        start_server();
    }
    void TearDown() override {
        server.reset();
        if (!on_pm()) std::filesystem::remove(kv_path);
        std::filesystem::remove(logs_path);
    }

    /// A suite's own server options, applied last.
    virtual void tune(ServerOptions&) {}

    /// The transport under test; TCP-only suites override it.
    [[nodiscard]] virtual std::string scheme() const { return env_or("RPM_IT_TRANSPORT", "tcp"); }
    /// scheme() as the enum Server::port and Connection::transport use.
    [[nodiscard]] Scheme scheme_enum() const {
        const auto s = parse_scheme(scheme());
        if (!s) ADD_FAILURE() << "RPM_IT_TRANSPORT=" << scheme() << ": not tcp or rdma";
        return s.value_or(Scheme::tcp);
    }
    [[nodiscard]] std::string address() const { return env_or("RPM_IT_ADDR", "127.0.0.1"); }
    [[nodiscard]] bool on_pm() const { return !pm_path.empty(); }
    [[nodiscard]] static CompletionMode completion() {
        const auto name = env_or("RPM_IT_COMPLETION", "adaptive");
        const auto m = parse_completion_mode(name);
        if (!m) ADD_FAILURE() << "RPM_IT_COMPLETION=" << name << ": not adaptive, busy or event";
        return m.value_or(CompletionMode::adaptive);
    }

    void start_server() {
        ServerOptions o;
        o.listen = {scheme() + "://" + address() + ":0"};
        o.io_threads = io_threads;
        o.completion = completion();
        o.secrets = {{"app", "app-secret"}, {"other", "other-secret"}};
        RegionSpec kv{"kv", kv_path, on_pm() ? 0u : std::size_t{1} << 20, !on_pm(), {"app"}};
        o.regions = {kv, {"logs", logs_path, 1 << 16, true, {}}};
        o.on_message = [this](std::uint64_t session, std::span<const std::byte> p) {
            std::lock_guard lock(mu);
            messages.emplace_back(session, std::string(reinterpret_cast<const char*>(p.data()), p.size()));
        };
        tune(o);
        auto s = Server::start(std::move(o));
        ASSERT_TRUE(s) << s.error().message();
        server.emplace(std::move(*s));
    }

    [[nodiscard]] std::string uri() const {
        return scheme() + "://" + address() + ":" + std::to_string(server->port(scheme_enum()));
    }

    Result<Connection> connect(const std::string& id = "app", const std::string& secret = "app-secret") {
        ClientOptions c;
        c.client_id = id;
        c.secret = secret;
        c.timeout = std::chrono::seconds(20);  // TCG in the lab is slow
        c.completion = completion();
        return Client(c).connect(uri());
    }

    unsigned io_threads = 0;  ///< ServerOptions::io_threads of the next start_server()
    std::string pm_path;
    std::filesystem::path kv_path, logs_path;
    std::optional<Server> server;
    std::mutex mu;
    std::vector<std::pair<std::uint64_t, std::string>> messages;
};

/// The TCP-only suites (raw protocol peers, TLS) always run over tcp://.
class TcpServerTest : public ServerTest {
protected:
    [[nodiscard]] std::string scheme() const override { return "tcp"; }
};

inline std::span<const std::byte> bytes_of(std::string_view s) {
    return std::as_bytes(std::span(s.data(), s.size()));
}

/// The `n` bytes at `off` of `r` as text (a failed read fails the test).
inline std::string text_at(RemoteRegion& r, std::uint64_t off, std::size_t n) {
    std::string back(n, '\0');
    EXPECT_TRUE(ok(r.read(off, back.data(), back.size())));
    return back;
}

} // namespace rpm::test
