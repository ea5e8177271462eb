// The closed sets a connection's transport is described by: its URI scheme
// (Connection::transport, Server::port) and how its atomic writes travel
// (Connection::atomic_write_stats, ReplicaStatus::atomic_write). Enums, so
// that a caller compares values the compiler checks; to_string gives the
// words tools print and scripts parse.
#pragma once

#include <rpm/export.hpp>

#include <optional>
#include <string_view>

RPM_API_BEGIN

namespace rpm {

/// A URI scheme rpm speaks: tcp://HOST:PORT or rdma://HOST:PORT.
enum class Scheme {
    tcp,   ///< TCP (optionally TLS); the server stores every byte itself
    rdma,  ///< RDMA (rdma_cm + verbs): one-sided writes into the region
};

/// RETURN VALUE: the scheme as it is written in a URI: "tcp" or "rdma";
/// "invalid" for a value outside the enum. ERRORS: none.
std::string_view to_string(Scheme s) noexcept;
/// RETURN VALUE: the scheme `s` names ("tcp" or "rdma", exact and
/// case-sensitive, without "://"), or std::nullopt for anything else.
/// ERRORS: none.
std::optional<Scheme> parse_scheme(std::string_view s) noexcept;

/// How a connection's atomic writes (RemoteRegion::atomic_write) reach the
/// region. Each stores the 8 bytes whole; they differ in who stores them.
enum class AtomicWriteKind {
    /// tcp://: the server stores the 8 bytes as one aligned CPU store.
    server,
    /// rdma:// without native atomic writes: an 8-byte RDMA write, inline
    /// and fenced behind earlier reads (one aligned write is placed whole).
    fenced_write,
    /// rdma://: IBTA ATOMIC WRITE work requests, where the device reports
    /// the capability (e.g. rxe on Linux >= 6.2).
    native,
};

/// RETURN VALUE: the kind as the enumerator is spelt: "server",
/// "fenced_write" or "native"; "invalid" for a value outside the enum.
/// ERRORS: none.
std::string_view to_string(AtomicWriteKind k) noexcept;
/// RETURN VALUE: the kind to_string(AtomicWriteKind) names by `s` (exact,
/// case-sensitive), or std::nullopt. ERRORS: none.
std::optional<AtomicWriteKind> parse_atomic_write_kind(std::string_view s) noexcept;

} // namespace rpm

RPM_API_END
