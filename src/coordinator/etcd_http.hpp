// etcd v3's JSON gateway over HTTP/1.1 (Boost.Beast): one POST at a time
// with a deadline, sent to the first member that answers, and etcd's error
// answers turned into rpm errors. int64 fields travel as strings and bytes
// as base64, as the gateway's JSON mapping has them.
#pragma once

#include <rpm/result.hpp>

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rpm::coordinator {

struct Endpoint {
    std::string host;
    std::string port;
    [[nodiscard]] std::string text() const { return host + ":" + port; }
};

/// "HOST:PORT" (HOST may be [v6]). ERRORS: errc::invalid_argument.
Result<Endpoint> parse_endpoint(std::string_view s);

/// An int64 field of the gateway's JSON ("123" or 123; absent = 0).
std::uint64_t json_u64(const nlohmann::json& j, const char* field);
/// j[field] when j is an object that has it, else null: an answer of
/// another shape (a broken or foreign endpoint) never throws or reads past
/// what is there.
const nlohmann::json& json_field(const nlohmann::json& j, const char* field);

/// One POST to one member. RETURN VALUE: the HTTP status and body.
/// ERRORS: errc::io_error (connect, send, receive or the deadline).
struct HttpAnswer {
    unsigned status = 0;
    std::string body;
};
Result<HttpAnswer> http_post(const Endpoint& ep, std::string_view target, const std::string& body,
                             std::chrono::milliseconds timeout);

class EtcdHttp {
public:
    EtcdHttp(std::vector<Endpoint> endpoints, std::chrono::milliseconds timeout)
        : endpoints_(std::move(endpoints)), timeout_(timeout) {}

    /// POST `body` to `target` on the member that answered last, then on
    /// the others in turn (once each) when it cannot be reached or says
    /// it has no quorum. `retry` false: one member only (a campaign, which
    /// must not be sent twice).
    /// RETURN VALUE: the JSON answer of a 200.
    /// ERRORS: errc::io_error (no member reachable: detail lists each);
    /// errc::quorum_lost (members answered that they cannot decide);
    /// errc::invalid_argument (etcd refused the request: its message).
    Result<nlohmann::json> post(std::string_view target, const nlohmann::json& body,
                                std::chrono::milliseconds timeout, bool retry = true);
    Result<nlohmann::json> post(std::string_view target, const nlohmann::json& body) {
        return post(target, body, timeout_);
    }

    [[nodiscard]] const std::vector<Endpoint>& endpoints() const noexcept { return endpoints_; }
    /// The member to try first (the last that answered).
    [[nodiscard]] std::size_t preferred() const noexcept { return preferred_.load(); }
    [[nodiscard]] std::chrono::milliseconds timeout() const noexcept { return timeout_; }

private:
    std::vector<Endpoint> endpoints_;
    std::chrono::milliseconds timeout_;
    std::atomic<std::size_t> preferred_{0};
};

} // namespace rpm::coordinator
