// An in-process rpm::Server on 127.0.0.1 with two regions and two clients,
// for the TCP integration tests.
#pragma once

#include <rpm/client.hpp>
#include <rpm/server.hpp>

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>

namespace rpm::test {

class TcpServerTest : public ::testing::Test {
protected:
    void SetUp() override {
        const auto tag = std::to_string(::getpid()) + "-" +
                         ::testing::UnitTest::GetInstance()->current_test_info()->name();
        kv_path = "/dev/shm/rpm-it-kv-" + tag;
        logs_path = "/dev/shm/rpm-it-logs-" + tag;
        start_server();
    }
    void TearDown() override {
        server.reset();
        std::filesystem::remove(kv_path);
        std::filesystem::remove(logs_path);
    }

    void start_server() {
        ServerOptions o;
        o.listen = {"tcp://127.0.0.1:0"};
        o.secrets = {{"app", "app-secret"}, {"other", "other-secret"}};
        o.regions = {{"kv", kv_path, 1 << 20, true, {"app"}}, {"logs", logs_path, 1 << 16, true, {}}};
        o.on_message = [this](std::uint64_t session, std::span<const std::byte> p) {
            std::lock_guard lock(mu);
            messages.emplace_back(session, std::string(reinterpret_cast<const char*>(p.data()), p.size()));
        };
        auto s = Server::start(std::move(o));
        ASSERT_TRUE(s) << s.error().message();
        server.emplace(std::move(*s));
    }

    [[nodiscard]] std::string uri() const { return "tcp://127.0.0.1:" + std::to_string(server->port("tcp")); }

    Result<Connection> connect(const std::string& id = "app", const std::string& secret = "app-secret") {
        ClientOptions c;
        c.client_id = id;
        c.secret = secret;
        c.timeout = std::chrono::seconds(10);
        return Client(c).connect(uri());
    }

    std::filesystem::path kv_path, logs_path;
    std::optional<Server> server;
    std::mutex mu;
    std::vector<std::pair<std::uint64_t, std::string>> messages;
};

inline std::span<const std::byte> bytes_of(std::string_view s) {
    return std::as_bytes(std::span(s.data(), s.size()));
}

} // namespace rpm::test
