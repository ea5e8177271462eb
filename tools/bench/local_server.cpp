#include "local_server.hpp"

#include <unistd.h>

#include <random>

namespace rpmbench {
namespace {

// A fresh secret per run: the in-process server listens on a real port.
std::string random_secret() {
    std::random_device rd;
    static constexpr char hex[] = "0123456789abcdef";
    std::string s;
    for (int i = 0; i < 32; ++i) s += hex[rd() % 16];
    return s;
}

} // namespace

rpm::Result<std::unique_ptr<LocalServer>> LocalServer::start(const std::string& listen,
                                                             const std::filesystem::path& dir, std::uint64_t size,
                                                             const std::string& tag, unsigned io_threads,
                                                             rpm::CompletionMode completion) {
    std::unique_ptr<LocalServer> ls(new LocalServer);
    ls->secret_ = random_secret();
    ls->pool_ = dir / ("rpm-bench-" + std::to_string(::getpid()) + (tag.empty() ? "" : "-" + tag) + ".pool");
    std::error_code ec;
    std::filesystem::remove(ls->pool_, ec);  // a leftover of a killed run
    rpm::ServerOptions o;
    o.listen = {listen};
    o.io_threads = io_threads;
    o.completion = completion;
    o.secrets[ls->id_] = ls->secret_;
    o.regions.push_back({ls->region_, ls->pool_, static_cast<std::size_t>(size), true, {}});
    auto server = rpm::Server::start(std::move(o));
    if (!server) {
        std::filesystem::remove(ls->pool_, ec);
        return server.error();
    }
    // Server::start accepted the URI, so its scheme parses.
    const auto scheme = *rpm::parse_scheme(listen.substr(0, listen.find(':')));
    ls->uri_ = listen.substr(0, listen.rfind(':') + 1) + std::to_string(server->port(scheme));
    ls->server_.emplace(std::move(*server));
    return ls;
}

LocalServer::~LocalServer() {
    if (server_) server_->stop();
    server_.reset();
    std::error_code ec;
    std::filesystem::remove(pool_, ec);
}

} // namespace rpmbench
