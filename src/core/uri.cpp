#include "core/uri.hpp"

#include <charconv>

namespace rpm::detail {
namespace {

Error bad(std::string_view uri, const char* why) {
    return Error(errc::invalid_argument,
                 "URI '" + std::string(uri) + "' " + why + " (expected tcp://HOST:PORT or rdma://HOST:PORT)");
}

} // namespace

Result<Uri> parse_uri(std::string_view uri) {
    Uri u;
    auto sep = uri.find("://");
    if (sep == std::string_view::npos) return bad(uri, "has no scheme");
    const auto scheme = parse_scheme(uri.substr(0, sep));
    if (!scheme) return bad(uri, "has an unknown scheme");
    u.scheme = *scheme;
    std::string_view rest = uri.substr(sep + 3);
    auto colon = rest.rfind(':');
    if (colon == std::string_view::npos || colon + 1 == rest.size()) return bad(uri, "has no port");
    std::string_view host = rest.substr(0, colon);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    if (host.empty()) return bad(uri, "has no host");
    std::string_view port = rest.substr(colon + 1);
    unsigned value = 0;
    auto [p, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (ec != std::errc() || p != port.data() + port.size() || value > 65535)
        return bad(uri, "has a port that is not a number from 0 to 65535");
    u.host = std::string(host);
    u.port = static_cast<std::uint16_t>(value);
    return u;
}

} // namespace rpm::detail
