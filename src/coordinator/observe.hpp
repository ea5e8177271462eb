// A streaming POST to etcd's gateway (the election's observe): the answer
// is a chunked body of JSON objects, one per line, for as long as the
// stream lives. run() blocks on its own io_context; stop() (any thread)
// ends it.
#pragma once

#include "coordinator/etcd_http.hpp"

#include <boost/asio/io_context.hpp>

#include <functional>
#include <mutex>

namespace rpm::coordinator {

class JsonStream {
public:
    /// Until stop(), the stream's end or an error: `on_message` for each
    /// JSON object. ERRORS: errc::io_error (connect, a non-200 answer, the
    /// stream broken), errc::invalid_argument (stopped before it began).
    Result<void> run(const Endpoint& ep, std::string_view target, const std::string& body,
                     std::chrono::milliseconds connect_timeout,
                     const std::function<void(const nlohmann::json&)>& on_message);
    void stop();

private:
    std::mutex mu_;
    boost::asio::io_context* ioc_ = nullptr;  ///< run()'s, while it runs
    bool stopped_ = false;
};

} // namespace rpm::coordinator
