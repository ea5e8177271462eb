// etcd's JSON gateway over HTTP/1.1 (etcd_client.hpp). Requests are written
// by hand (they are a few fixed lines); answers go through Boost.Beast's
// parser, fed from the same blocking socket as the RESP clients use.
#include "etcd_client.hpp"

#include "coordinator/etcd_http.hpp"
#include "core/base64.hpp"  // rpm's base64 of the gateway's bytes fields

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

namespace kvbench {
namespace {

namespace http = boost::beast::http;

struct Answer {
    unsigned status = 0;
    std::string body;
    bool keep_alive = true;
};

class HttpConnection {
public:
    HttpConnection(const Address& at, std::chrono::milliseconds timeout) : at_(at), timeout_(timeout) {}

    /// One POST and its answer; reconnects first when the server closed
    /// the last one (it may, between keep-alive requests).
    bool post(std::string_view target, std::string_view body, Answer& a, std::string& error) {
        if (!socket_.valid() && !(socket_ = Socket::connect(at_, timeout_, error)).valid()) return false;
        out_.clear();
        out_.append("POST ").append(target).append(" HTTP/1.1\r\nHost: ").append(at_.text());
        out_.append("\r\nContent-Type: application/json\r\nContent-Length: ").append(std::to_string(body.size()));
        out_.append("\r\n\r\n").append(body);
        if (!socket_.send(out_, error) || !read(a, error)) return socket_ = Socket(), in_.clear(), false;
        if (!a.keep_alive) socket_ = Socket();
        return true;
    }

private:
    bool read(Answer& a, std::string& error) {
        http::response_parser<http::string_body> p;
        p.body_limit(1u << 20);
        p.eager(true);
        for (;;) {
            boost::beast::error_code ec;
            if (!in_.empty()) in_.erase(0, p.put(boost::asio::buffer(in_), ec));
            if (p.is_done()) break;
            if (ec && ec != http::error::need_more) return error = "bad HTTP answer: " + ec.message(), false;
            if (!socket_.recv_some(in_, error)) return false;
        }
        a.status = p.get().result_int();
        a.keep_alive = p.get().keep_alive();
        a.body = std::move(p.get().body());
        return true;
    }

    Address at_;
    std::chrono::milliseconds timeout_;
    Socket socket_;
    std::string out_, in_;
};

std::chrono::milliseconds timeout_of(const Options& o) {
    return std::chrono::milliseconds(static_cast<long>(o.reply_timeout * 1000));
}

std::string shorten(std::string s) {
    if (s.size() > 300) s.resize(300), s += "...";
    return s;
}

class EtcdClient final : public PutClient {
public:
    EtcdClient(const Address& at, const Options& o) : http_(at, timeout_of(o)) {}

    // Connected at construction, so a member that is down fails before the run.
    bool connect(std::string& error) {
        Answer a;
        if (!http_.post("/v3/maintenance/status", "{}", a, error)) return false;
        if (a.status != 200) return error = "etcd answered HTTP " + std::to_string(a.status), false;
        return true;
    }

    std::string put(std::string_view key, std::string_view value) override {
        // The load generator puts one value again and again: its base64 is
        // made once (comparing is far cheaper than encoding 4 KiB).
        if (value != value_) value_.assign(value), value_b64_ = rpm::detail::base64(value);
        body_.assign(R"({"key":")").append(rpm::detail::base64(key)).append(R"(","value":")").append(value_b64_).append("\"}");
        Answer a;
        std::string error;
        if (!http_.post("/v3/kv/put", body_, a, error)) return error;
        if (a.status != 200) return "etcd answered HTTP " + std::to_string(a.status) + ": " + shorten(a.body);
        if (a.body.find("\"header\"") == std::string::npos) return "etcd answered without a header: " + shorten(a.body);
        return {};
    }

private:
    HttpConnection http_;
    std::string value_, value_b64_, body_;
};

} // namespace

std::unique_ptr<PutClient> connect_etcd(const Options& o, const Address& at, std::string& error) {
    auto c = std::make_unique<EtcdClient>(at, o);
    if (!c->connect(error)) return nullptr;
    return c;
}

namespace {

// A member's /v3/maintenance/status. RETURN VALUE: empty with `body` set,
// else why there is none.
std::string status_of(const Options& o, const Address& at, std::string& body) {
    HttpConnection c(at, timeout_of(o));
    Answer a;
    std::string error;
    if (!c.post("/v3/maintenance/status", "{}", a, error)) return error;
    if (a.status != 200) return "HTTP " + std::to_string(a.status) + ": " + shorten(a.body);
    body = std::move(a.body);
    return {};
}

} // namespace

std::string probe_etcd(const Options& o, const Address& at) {
    std::string body;
    if (auto why = status_of(o, at, body); !why.empty()) return why;
    // etcd's status names the leader only once the cluster has elected one.
    if (body.find("\"leader\"") == std::string::npos) return "no leader yet";
    return {};
}

std::string etcd_leader(const Options& o, const Address& at) {
    std::string body;
    if (auto why = status_of(o, at, body); !why.empty()) return why;
    // {"header":{"member_id":"..."},"leader":"..."}: ids are uint64 as strings.
    const auto j = nlohmann::json::parse(body, nullptr, false);
    const auto& self = rpm::coordinator::json_field(rpm::coordinator::json_field(j, "header"), "member_id");
    const auto& leader = rpm::coordinator::json_field(j, "leader");
    if (!self.is_string() || !leader.is_string()) return "no leader in its status: " + shorten(body);
    return self == leader ? std::string() : "a follower (leader " + leader.get<std::string>() + ")";
}

} // namespace kvbench
