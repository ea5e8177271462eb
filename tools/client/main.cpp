// rpm-client: talk to an rpm-server from the shell.
//
//   rpm-client --connect tcp://127.0.0.1:7000 --id app --secret-file s put --region kv --offset 0 "text"
//   rpm-client ... get --region kv --offset 0 --length 4
//   rpm-client ... stream --region kv --count 1000 --acked-log acked.txt --reconnect-for 30
//   rpm-client ... verify --region kv --acked-log acked.txt
//
// stream persists numbered records and appends each record's number to the
// acked log only after persist returned: after any crash, verify must find
// every logged record. --fault log-before-persist plants the bug the crash
// tests must catch (acknowledging before durability).
#include "records.hpp"
#include "../lib/parse_args.hpp"

#include <rpm/client.hpp>

#include <CLI/CLI.hpp>

#include <fstream>
#include <iostream>

namespace {

struct Common {
    std::string uri, id = "default", secret, secret_file, region, force, tls_ca, completion = "adaptive";
    bool unsafe = false, tls = false;
};

rpm::Result<rpm::RemoteRegion> open(const Common& c, std::optional<rpm::Connection>& conn) {
    rpm::ClientOptions o;
    o.client_id = c.id;
    o.secret = c.secret;
    o.tls = c.tls;
    o.completion = *rpm::parse_completion_mode(c.completion);
    if (!c.tls_ca.empty()) o.tls_ca = c.tls_ca;
    auto cn = rpm::Client(o).connect(c.uri);
    if (!cn) return cn.error();
    conn.emplace(std::move(*cn));
    rpm::RegionOptions ro;
    if (!c.force.empty()) ro.force_method = rpm::flush::parse_method(c.force);
    ro.unsafe = c.unsafe;
    return conn->open_region(c.region, ro);
}

int fail(const std::string& msg) {
    std::cerr << "rpm-client: " << msg << "\n";
    return 1;
}

void describe(const rpm::RemoteRegion& r) {
    std::cout << "region " << r.name() << " (" << r.size() << " bytes): method "
              << rpm::flush::to_string(r.method()) << ", server persist " << rpm::flush::to_string(r.server_persist())
              << "\n  why: " << r.reason() << "\n";
}

int put(const Common& c, std::uint64_t offset, const std::string& text) {
    std::optional<rpm::Connection> conn;
    auto r = open(c, conn);
    if (!r) return fail(r.error().message());
    describe(*r);
    if (const rpm::Result<void> done = r->persist(offset, std::as_bytes(std::span(text.data(), text.size())));
        !done.has_value())
        return fail("persist: " + done.error().message());
    std::cout << "persisted " << text.size() << " bytes at offset " << offset << "\n";
    return 0;
}

int get(const Common& c, std::uint64_t offset, std::size_t length) {
    std::optional<rpm::Connection> conn;
    auto r = open(c, conn);
    if (!r) return fail(r.error().message());
    std::string out(length, '\0');
    if (const rpm::Result<void> done = r->read(offset, std::as_writable_bytes(std::span(out.data(), out.size())));
        !done.has_value())
        return fail("read: " + done.error().message());
    std::cout << out << "\n";
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    CLI::App app{"rpm-client: write, persist and read a region of an rpm-server"};
    Common c;
    app.add_option("--connect", c.uri, "tcp://HOST:PORT or rdma://HOST:PORT")->required();
    app.add_option("--id", c.id, "client id");
    app.add_option("--secret", c.secret, "shared secret (visible in ps; prefer --secret-file)");
    app.add_option("--secret-file", c.secret_file, "file holding the shared secret")->check(CLI::ExistingFile);
    app.add_option("--force-method", c.force, "read_after_write, send_flush or native_flush");
    app.add_flag("--unsafe", c.unsafe, "allow a forced method that is unsafe for the region");
    app.add_flag("--tls", c.tls, "connect with TLS");
    app.add_option("--completion", c.completion, "rdma://: busy, adaptive or event (docs/rdma.md)")
        ->check(CLI::IsMember({"adaptive", "busy", "event"}))->capture_default_str();
    app.add_option("--tls-ca", c.tls_ca, "PEM CA to verify the server")->check(CLI::ExistingFile);
    app.require_subcommand(1);

    std::uint64_t offset = 0;
    std::size_t length = 0;
    std::string text;
    auto* put_cmd = app.add_subcommand("put", "persist TEXT at OFFSET");
    put_cmd->add_option("--region", c.region)->required();
    put_cmd->add_option("--offset", offset);
    put_cmd->add_option("text", text)->required();
    auto* get_cmd = app.add_subcommand("get", "read LENGTH bytes at OFFSET");
    get_cmd->add_option("--region", c.region)->required();
    get_cmd->add_option("--offset", offset);
    get_cmd->add_option("--length", length)->required();
    rpmtool::StreamOptions so;
    auto* stream_cmd = app.add_subcommand("stream", "persist numbered records, logging each once durable");
    stream_cmd->add_option("--region", c.region)->required();
    stream_cmd->add_option("--count", so.count)->required();
    stream_cmd->add_option("--record-size", so.record_size)->check(CLI::Range(16, 1 << 20));
    stream_cmd->add_option("--acked-log", so.log)->required();
    stream_cmd->add_option("--run", so.run, "a number mixed into every record (use a fresh one per run on reused regions)");
    stream_cmd->add_option("--reconnect-for", so.reconnect_seconds, "keep reconnecting this long after a failure");
    stream_cmd->add_option("--fault", so.fault, "log-before-persist: a planted bug for negative controls")
        ->check(CLI::IsMember({"", "log-before-persist"}));
    auto* verify_cmd = app.add_subcommand("verify", "check every record in the acked log");
    verify_cmd->add_option("--region", c.region)->required();
    verify_cmd->add_option("--acked-log", so.log)->required();
    verify_cmd->add_option("--run", so.run, "the --run the records were streamed with");
    verify_cmd->add_option("--record-size", so.record_size)->check(CLI::Range(16, 1 << 20));
    if (auto done = rpm_tools::parse_args(app, argc, argv)) return *done;

    if (!c.secret_file.empty()) std::getline(std::ifstream(c.secret_file), c.secret);
    if (!c.force.empty() && !rpm::flush::parse_method(c.force)) return fail("--force-method " + c.force + " is not a method");
    auto opener = [&c](std::optional<rpm::Connection>& conn) { return open(c, conn); };
    if (*put_cmd) return put(c, offset, text);
    if (*get_cmd) return get(c, offset, length);
    if (*stream_cmd) return rpmtool::stream(so, opener);
    return rpmtool::verify(so, opener);
}
