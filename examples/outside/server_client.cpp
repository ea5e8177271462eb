// outside-server-client: a server and a client in one process. The server
// serves one file-backed region; the client authenticates, opens it,
// persists a record and reads it back.
//
//   outside-server-client DIR
//
// DIR must exist; the region file DIR/notes.pool is created there (a tmpfs
// folder such as /dev/shm stands in for persistent memory). Exit status 0 when
// the record read back is the one persisted, 1 otherwise (with the message),
// 2 for a bad command line.
#include <rpm/client.hpp>
#include <rpm/flush.hpp>
#include <rpm/server.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <span>
#include <string>
#include <string_view>

namespace {

int fail(std::string_view what, std::string_view message) {
    std::cerr << "outside-server-client: " << what << ": " << message << "\n";
    return 1;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: outside-server-client DIR\n";
        return 2;
    }
    // Both ends live in this process, so the secret never leaves it; a real
    // server reads its secrets from a file only it may read.
    const std::string client_id = "app";
    const std::string secret = "outside-example-secret";

    rpm::ServerOptions so;
    so.listen = {"tcp://127.0.0.1:0"};  // port 0: no clash with anything else on the machine
    so.secrets[client_id] = secret;
    so.io_threads = 1;                  // one client: one I/O thread is plenty
    // create + size: the first run makes the 1 MiB file, later runs reuse it.
    so.regions.push_back({"notes", std::filesystem::path(argv[1]) / "notes.pool", 1u << 20, true, {client_id}});
    auto server = rpm::Server::start(std::move(so));
    if (!server) return fail("server", server.error().message());
    const auto& report = server->regions().front();
    std::cout << "server: region " << report.name << " (" << report.path << "), " << report.size
              << " bytes, persistence domain " << rpm::to_string(report.domain) << "\n";

    rpm::ClientOptions co;
    co.client_id = client_id;
    co.secret = secret;
    co.timeout = std::chrono::seconds(5);  // a stuck call fails instead of hanging the program
    const auto uri = "tcp://127.0.0.1:" + std::to_string(server->port(rpm::Scheme::tcp));
    auto conn = rpm::Client(co).connect(uri);
    if (!conn) return fail("connect " + uri, conn.error().message());
    auto notes = conn->open_region("notes");
    if (!notes) return fail("open_region notes", notes.error().message());
    // The server picked how writes become durable on its platform, and says why.
    std::cout << "client: connected to " << uri << "; region " << notes->name() << ", " << notes->size()
              << " bytes, flush method " << rpm::flush::to_string(notes->method()) << ": " << notes->reason()
              << "\n";

    // persist = write + flush: once it succeeds, the record is durable on
    // the server, not merely received by it.
    constexpr std::string_view record = "order 42: 3 apples, paid";
    constexpr std::uint64_t offset = 4096;
    if (auto done = notes->persist(offset, std::as_bytes(std::span(record))); !done)
        return fail("persist", done.error().message());
    std::cout << "client: persisted " << record.size() << " bytes at offset " << offset << "\n";

    // Read it back: what the region holds now, fetched from the server.
    std::array<char, record.size()> back{};
    if (auto done = notes->read(offset, std::as_writable_bytes(std::span(back))); !done)
        return fail("read", done.error().message());
    const std::string_view got(back.data(), back.size());
    if (got != record) return fail("read", "got '" + std::string(got) + "', not the record persisted");
    std::cout << "client: read back '" << got << "'\n";

    // Close the client before stopping the server, so that no call of it is
    // left waiting on a server that went away (the destructors would do the
    // same, in the reverse order of construction).
    conn->close();
    server->stop();
    std::cout << "outside-server-client: ok\n";
    return 0;
}
