// The words of include/rpm/transport.hpp's enums. parse_* reads back exactly
// what to_string writes, so a value printed by a tool parses again.
#include <rpm/transport.hpp>

namespace rpm {

std::string_view to_string(Scheme s) noexcept {
    switch (s) {
    case Scheme::tcp: return "tcp";
    case Scheme::rdma: return "rdma";
    }
    return "invalid";
}

std::optional<Scheme> parse_scheme(std::string_view s) noexcept {
    for (auto v : {Scheme::tcp, Scheme::rdma})
        if (s == to_string(v)) return v;
    return std::nullopt;
}

std::string_view to_string(AtomicWriteKind k) noexcept {
    switch (k) {
    case AtomicWriteKind::server: return "server";
    case AtomicWriteKind::fenced_write: return "fenced_write";
    case AtomicWriteKind::native: return "native";
    }
    return "invalid";
}

std::optional<AtomicWriteKind> parse_atomic_write_kind(std::string_view s) noexcept {
    for (auto v : {AtomicWriteKind::server, AtomicWriteKind::fenced_write, AtomicWriteKind::native})
        if (s == to_string(v)) return v;
    return std::nullopt;
}

} // namespace rpm
