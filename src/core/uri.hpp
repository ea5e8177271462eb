// tcp://host:port and rdma://host:port, parsed once for clients and servers.
#pragma once

#include <rpm/result.hpp>
#include <rpm/transport.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace rpm::detail {

struct Uri {
    Scheme scheme = Scheme::tcp;
    std::string host;    ///< without brackets for IPv6
    std::uint16_t port = 0;
};

/// ERRORS: errc::invalid_argument naming the URI and what is wrong with it.
Result<Uri> parse_uri(std::string_view uri);

} // namespace rpm::detail
