// JsonStream: the request with a deadline, then the body read as it comes
// (buffer_body: Beast removes the chunking) and cut at newlines.
#include "coordinator/observe.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace rpm::coordinator {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

namespace {

// The stream's state for one run(): read, cut into lines, call back.
struct Reader {
    beast::tcp_stream& stream;
    beast::flat_buffer& buf;
    http::response_parser<http::buffer_body>& parser;
    const std::function<void(const nlohmann::json&)>& on_message;
    beast::error_code& ec;
    char chunk[4096];
    std::string pending;

    void more() {
        parser.get().body().data = chunk;
        parser.get().body().size = sizeof chunk;
        http::async_read_some(stream, buf, parser, [this](beast::error_code e, std::size_t) {
            if (e == http::error::need_buffer) e = {};
            if (e) {
                ec = e;
                return;
            }
            pending.append(chunk, sizeof chunk - parser.get().body().size);
            for (auto nl = pending.find('\n'); nl != std::string::npos; nl = pending.find('\n')) {
                auto j = nlohmann::json::parse(pending.substr(0, nl), nullptr, false);
                pending.erase(0, nl + 1);
                if (!j.is_discarded()) on_message(j);
            }
            if (pending.size() > (1u << 20)) {
                ec = http::error::body_limit;  // a line without end: not etcd
                return;
            }
            if (parser.is_done()) {
                ec = http::error::end_of_stream;
                return;
            }
            more();
        });
    }
};

} // namespace

Result<void> JsonStream::run(const Endpoint& ep, std::string_view target, const std::string& body,
                             std::chrono::milliseconds connect_timeout,
                             const std::function<void(const nlohmann::json&)>& on_message) {
    asio::io_context ioc;
    {
        std::lock_guard lock(mu_);
        if (stopped_) return Error(errc::invalid_argument, "the stream was stopped");
        ioc_ = &ioc;
    }
    beast::tcp_stream stream(ioc);
    asio::ip::tcp::resolver resolver(ioc);
    beast::error_code ec;
    beast::flat_buffer buf;
    http::response_parser<http::buffer_body> parser;
    parser.body_limit(boost::none);  // a stream: no end
    Reader reader{stream, buf, parser, on_message, ec, {}, {}};
    http::request<http::string_body> req{http::verb::post, std::string(target), 11};
    req.set(http::field::host, ep.host);
    req.set(http::field::content_type, "application/json");
    req.body() = body;
    req.prepare_payload();
    const auto addrs = resolver.resolve(ep.host, ep.port, asio::ip::resolver_base::numeric_service, ec);
    if (!ec) {
        stream.expires_after(connect_timeout);  // until the answer's header; the stream then has none
        stream.async_connect(addrs, [&](beast::error_code e, const auto&) {
            if ((ec = e)) return;
            http::async_write(stream, req, [&](beast::error_code e2, std::size_t) {
                if ((ec = e2)) return;
                http::async_read_header(stream, buf, parser, [&](beast::error_code e3, std::size_t) {
                    if ((ec = e3)) return;
                    stream.expires_never();
                    if (parser.get().result_int() != 200) {
                        ec = http::error::bad_status;
                        return;
                    }
                    reader.more();
                });
            });
        });
        ioc.run();
    }
    {
        std::lock_guard lock(mu_);
        ioc_ = nullptr;
    }
    if (ec == http::error::bad_status)
        return Error(errc::io_error, ep.text() + ": observe answered HTTP " + std::to_string(parser.get().result_int()));
    return Error(errc::io_error, ep.text() + ": observe stream: " + (ec ? ec.message() : std::string("stopped")));
}

void JsonStream::stop() {
    std::lock_guard lock(mu_);
    stopped_ = true;
    if (ioc_) ioc_->stop();
}

} // namespace rpm::coordinator
