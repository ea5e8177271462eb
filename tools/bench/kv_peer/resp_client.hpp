// A RESP2 connection: requests out, replies parsed as bytes arrive
// (resp_client.cpp; used by clients.hpp's rpm-kvstore and Redis clients).
#pragma once

#include "clients.hpp"
#include "net.hpp"

#include <cstddef>
#include <string>

namespace resp {
struct Reply;
}

namespace kvbench {

class RespConnection {
public:
    explicit RespConnection(Socket s) : socket_(std::move(s)) {}
    bool send(std::string_view bytes, std::string& error) { return socket_.send(bytes, error); }
    /// The next reply, or false with `error` set (connection, malformed).
    bool read(resp::Reply& r, std::string& error);

private:
    Socket socket_;
    std::string in_;        ///< received, not yet parsed from `used_` on
    std::size_t used_ = 0;
};

std::unique_ptr<PutClient> connect_resp(const Options& o, const Address& at, std::string& error);
std::string probe_resp(const Options& o, const Address& at);

} // namespace kvbench
