// The plug-in's URI: what --fs_uri gives RocksDB's object registry, whole
// (a value without '=' before any ';' is taken as the id as it stands).
#include "rpm_rocksdb/file_system.hpp"

#include <charconv>
#include <fstream>

namespace rpm_rocksdb {
namespace {

using rpm::errc;
using rpm::Error;

Error bad(std::string what) { return Error(errc::invalid_argument, "rpm-rocksdb URI: " + std::move(what)); }

std::vector<std::string_view> split(std::string_view s, char sep) {
    std::vector<std::string_view> out;
    for (std::size_t at = 0;;) {
        const auto next = s.find(sep, at);
        out.push_back(s.substr(at, next == std::string_view::npos ? std::string_view::npos : next - at));
        if (next == std::string_view::npos) return out;
        at = next + 1;
    }
}

rpm::Result<std::uint64_t> number(std::string_view key, std::string_view v) {
    std::uint64_t n = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec != std::errc{} || end != v.data() + v.size() || v.empty())
        return bad(std::string(key) + "=" + std::string(v) + " is not a number");
    return n;
}

// 64M, 1G, 4096: the sizes rpm-server's --region takes.
rpm::Result<std::uint64_t> size(std::string_view key, std::string_view v) {
    std::uint64_t scale = 1;
    if (!v.empty()) {
        switch (v.back()) {
        case 'K': case 'k': scale = 1ull << 10; break;
        case 'M': case 'm': scale = 1ull << 20; break;
        case 'G': case 'g': scale = 1ull << 30; break;
        default: break;
        }
        if (scale != 1) v.remove_suffix(1);
    }
    auto n = number(key, v);
    if (!n) return n;
    if (*n > UINT64_MAX / scale) return bad(std::string(key) + " is too large");
    return *n * scale;
}

rpm::Result<std::string> read_secret(const std::string& path) {
    std::ifstream in(path);
    if (!in)
        return Error(std::filesystem::exists(path) ? errc::io_error : errc::path_not_found,
                     "rpm-rocksdb: secret_file " + path + " cannot be read");
    std::string line;
    std::getline(in, line);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (line.empty()) return Error(errc::invalid_argument, "rpm-rocksdb: secret_file " + path + " is empty");
    return line;
}

// HOST:PORT[/REGION]: the replica's uri is finished once the transport is known.
rpm::Result<rpm::ReplicaSpec> replica(std::string_view text) {
    rpm::ReplicaSpec r;
    if (const auto slash = text.find('/'); slash != std::string_view::npos) {
        r.region = std::string(text.substr(slash + 1));
        text = text.substr(0, slash);
        if (r.region.empty()) return bad("empty region name after '/'");
    }
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos || colon == 0) return bad("replica '" + std::string(text) + "' is not HOST:PORT");
    auto port = number("port", text.substr(colon + 1));
    if (!port || *port == 0 || *port > 65535) return bad("replica '" + std::string(text) + "' has no port from 1 to 65535");
    r.uri = std::string(text);
    return r;
}

struct Extras {
    std::string transport = "tcp", client = "default", secret_file, tls_ca;
    bool tls = false;
};

rpm::Result<void> apply(Options& o, Extras& x, std::string_view key, std::string_view v) {
    auto set_size = [&](std::uint64_t& to) -> rpm::Result<void> {
        auto n = size(key, v);
        if (!n) return n.error();
        to = *n;
        return {};
    };
    if (key == "local") o.local_path = std::string(v);
    else if (key == "transport") x.transport = std::string(v);
    else if (key == "client") x.client = std::string(v);
    else if (key == "secret_file") x.secret_file = std::string(v);
    else if (key == "tls_ca") x.tls_ca = std::string(v);
    else if (key == "tls" && (v == "0" || v == "1")) x.tls = v == "1";
    else if (key == "slot_size") return set_size(o.slot_size);
    else if (key == "fencing_term") {
        auto n = number(key, v);
        if (!n) return n.error();
        o.fencing_term = *n;
    }
    else if (key == "slots" || key == "failure_timeout_ms") {
        auto n = number(key, v);
        if (!n) return n.error();
        if (*n == 0 || *n > 1'000'000) return bad(std::string(key) + " must be from 1 to 1000000");
        if (key == "slots") o.slots = static_cast<unsigned>(*n);
        else o.failure_timeout = std::chrono::milliseconds(*n);
    } else if (key == "durability") {
        auto d = rpm::parse_durability(v);
        if (!d) return bad(d.error().detail());
        o.durability = *d;
    } else
        return bad("unknown key '" + std::string(key) + "' (or a bad value: '" + std::string(v) + "')");
    return {};
}

rpm::Result<void> finish(Options& o, const Extras& x) {
    if (x.transport != "tcp" && x.transport != "rdma") return bad("transport must be tcp or rdma, not " + x.transport);
    if (o.local_path.empty()) return bad("local=PATH (the local copy) is required");
    if (o.slot_size % 8 != 0 || o.slot_size < (64u << 10))
        return Error(errc::bad_size, "rpm-rocksdb: slot_size must be a multiple of 8 and at least 64K");
    std::string secret;
    if (!x.secret_file.empty()) {
        auto s = read_secret(x.secret_file);
        if (!s) return s.error();
        secret = *s;
    }
    for (auto& r : o.replicas) {
        r.uri = x.transport + "://" + r.uri;
        r.client.client_id = x.client;
        r.client.secret = secret;
        r.client.tls = x.tls;
        if (!x.tls_ca.empty()) r.client.tls_ca = x.tls_ca;
    }
    return {};
}

} // namespace

rpm::Result<Options> parse_uri(std::string_view uri) {
    constexpr std::string_view scheme = "rpm://";
    if (!uri.starts_with(scheme)) return bad("must start with rpm://");
    uri.remove_prefix(scheme.size());
    if (uri.find_first_of(";{}") != std::string_view::npos) return bad("';', '{' and '}' cannot appear in it");
    const auto q = uri.find('?');
    Options o;
    for (auto part : split(uri.substr(0, q), ',')) {
        auto r = replica(part);
        if (!r) return r.error();
        o.replicas.push_back(std::move(*r));
    }
    Extras x;
    if (q != std::string_view::npos)
        for (auto kv : split(uri.substr(q + 1), '&')) {
            const auto eq = kv.find('=');
            if (eq == std::string_view::npos) return bad("'" + std::string(kv) + "' is not KEY=VALUE");
            if (auto a = apply(o, x, kv.substr(0, eq), kv.substr(eq + 1)); !a) return a.error();
        }
    if (auto f = finish(o, x); !f) return f.error();
    return o;
}

} // namespace rpm_rocksdb
