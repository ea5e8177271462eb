// Mode (a): an rpm::Server inside rpm-bench, serving one region on a tmpfs
// file that rpm-bench creates and removes. tmpfs is emulated PM
// (domain not_pmem, server persist msync): fine for comparing rpm with
// plain TCP on the same machine, meaningless as a PM durability figure.
#pragma once

#include <rpm/result.hpp>
#include <rpm/server.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

namespace rpmbench {

class LocalServer {
public:
    /// listen: e.g. tcp://127.0.0.1:0. The pool file is DIR/rpm-bench-PID.pool,
    /// or DIR/rpm-bench-PID-TAG.pool with a tag (several servers in one run).
    static rpm::Result<std::unique_ptr<LocalServer>> start(const std::string& listen, const std::filesystem::path& dir,
                                                           std::uint64_t size, const std::string& tag = {},
                                                           unsigned io_threads = 0,
                                                           rpm::CompletionMode completion = rpm::CompletionMode::adaptive);
    ~LocalServer();
    LocalServer(const LocalServer&) = delete;
    LocalServer& operator=(const LocalServer&) = delete;

    /// The URI to connect to: the listen URI with the bound port.
    [[nodiscard]] const std::string& uri() const noexcept { return uri_; }
    [[nodiscard]] const std::string& client_id() const noexcept { return id_; }
    [[nodiscard]] const std::string& secret() const noexcept { return secret_; }
    [[nodiscard]] const std::string& region() const noexcept { return region_; }
    [[nodiscard]] const std::filesystem::path& pool() const noexcept { return pool_; }

private:
    LocalServer() = default;
    std::optional<rpm::Server> server_;
    std::filesystem::path pool_;
    std::string uri_, id_ = "bench", secret_, region_ = "bench";
};

} // namespace rpmbench
