// EtcdHttp: Beast's asynchronous operations run to completion on a private
// io_context with one deadline (a synchronous Beast call cannot time out).
#include "coordinator/etcd_http.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>


#include <charconv>

namespace rpm::coordinator {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

Result<Endpoint> parse_endpoint(std::string_view s) {
    const auto colon = s.rfind(':');
    if (colon == std::string_view::npos || colon == 0 || colon + 1 == s.size())
        return Error(errc::invalid_argument, "etcd endpoint '" + std::string(s) + "': expected HOST:PORT");
    std::string host(s.substr(0, colon));
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    const auto port = s.substr(colon + 1);
    unsigned n = 0;
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), n);
    if (ec != std::errc{} || end != port.data() + port.size() || n == 0 || n > 65535)
        return Error(errc::invalid_argument, "etcd endpoint '" + std::string(s) + "': the port is not 1..65535");
    return Endpoint{std::move(host), std::string(port)};
}

const nlohmann::json& json_field(const nlohmann::json& j, const char* field) {
    static const nlohmann::json none;
    if (!j.is_object()) return none;
    const auto it = j.find(field);
    return it == j.end() ? none : *it;
}

std::uint64_t json_u64(const nlohmann::json& j, const char* field) {
    if (!j.is_object()) return 0;
    const auto it = j.find(field);
    if (it == j.end()) return 0;
    if (it->is_number_unsigned() || it->is_number_integer()) return it->get<std::uint64_t>();
    if (!it->is_string()) return 0;
    const auto& s = it->get_ref<const std::string&>();
    std::uint64_t v = 0;
    std::from_chars(s.data(), s.data() + s.size(), v);
    return v;
}

Result<HttpAnswer> http_post(const Endpoint& ep, std::string_view target, const std::string& body,
                             std::chrono::milliseconds timeout) {
    asio::io_context ioc;
    beast::tcp_stream stream(ioc);
    asio::ip::tcp::resolver resolver(ioc);
    beast::error_code ec;
    const auto addrs = resolver.resolve(ep.host, ep.port, asio::ip::resolver_base::numeric_service, ec);
    if (ec) return Error(errc::io_error, ep.text() + ": cannot resolve: " + ec.message());
    http::request<http::string_body> req{http::verb::post, std::string(target), 11};
    req.set(http::field::host, ep.host);
    req.set(http::field::content_type, "application/json");
    req.body() = body;
    req.prepare_payload();
    beast::flat_buffer buf;
    http::response<http::string_body> res;
    std::string step = "connect";
    stream.expires_after(timeout);  // the whole exchange
    stream.async_connect(addrs, [&](beast::error_code e, const auto&) {
        if ((ec = e)) return;
        step = "send";
        http::async_write(stream, req, [&](beast::error_code e2, std::size_t) {
            if ((ec = e2)) return;
            step = "receive";
            http::async_read(stream, buf, res, [&](beast::error_code e3, std::size_t) { ec = e3; });
        });
    });
    ioc.run();
    if (ec == beast::error::timeout)
        return Error(errc::io_error, ep.text() + ": no answer within " + std::to_string(timeout.count()) + " ms (" +
                                         step + ")");
    if (ec) return Error(errc::io_error, ep.text() + ": " + step + ": " + ec.message());
    return HttpAnswer{res.result_int(), std::move(res.body())};
}

namespace {

// etcd's gateway answers a failed call with {"error", "code" (gRPC), "message"}.
Error etcd_error(const Endpoint& ep, const HttpAnswer& a) {
    auto j = nlohmann::json::parse(a.body, nullptr, false);
    std::string msg = j.is_object() && j.contains("message") && j["message"].is_string() ? j["message"].get<std::string>()
                                                                                         : a.body.substr(0, 200);
    const auto code = json_u64(j, "code");
    // Unavailable (14), DeadlineExceeded (4): the member cannot reach a
    // quorum ("etcdserver: request timed out", "no leader").
    // ("election: no leader", code 2, is an answer: nobody campaigned.)
    const bool no_quorum = code == 14 || code == 4 || msg.find("etcdserver: no leader") != std::string::npos ||
                           msg.find("timed out") != std::string::npos;
    return Error(no_quorum ? errc::quorum_lost : errc::invalid_argument,
                 "etcd at " + ep.text() + ": " + msg + " (HTTP " + std::to_string(a.status) + ")");
}

} // namespace

Result<nlohmann::json> EtcdHttp::post(std::string_view target, const nlohmann::json& body,
                                      std::chrono::milliseconds timeout, bool retry) {
    const std::string text = body.dump();
    const std::size_t n = endpoints_.size();
    const std::size_t first = preferred_.load();
    std::string tried;
    bool quorum = false;
    for (std::size_t k = 0; k < (retry ? n : 1); ++k) {
        const std::size_t i = (first + k) % n;
        const Endpoint& ep = endpoints_[i];
        auto a = http_post(ep, target, text, timeout);
        if (!a) {
            tried += (tried.empty() ? "" : "; ") + a.error().detail();
            continue;
        }
        if (a->status != 200) {
            Error e = etcd_error(ep, *a);
            if (e != errc::quorum_lost) return e;  // etcd refused the request itself
            quorum = true;
            tried += (tried.empty() ? "" : "; ") + e.detail();
            continue;
        }
        auto j = nlohmann::json::parse(a->body, nullptr, false);
        if (j.is_discarded()) return Error(errc::io_error, "etcd at " + ep.text() + ": the answer is not JSON");
        preferred_ = i;
        return j;
    }
    if (quorum) return Error(errc::quorum_lost, "etcd has no quorum (" + tried + ")");
    return Error(errc::io_error, "no etcd member answered (" + tried + ")");
}

} // namespace rpm::coordinator
