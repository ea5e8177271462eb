// Bodies of the handshake and region messages: Hello, Auth, Welcome,
// OpenRegion, RegionGrant. Layouts are in docs/protocol.md; each encoder
// and its decoder list the fields in the same order, so read them side by
// side.
#include "protocol/codec.hpp"

namespace rpm::proto {
namespace {

using detail::FrameWriter;
using detail::Reader;

// Wire values of the enums are their C++ values; appending is compatible,
// reordering is not, and these make reordering a compile error.
constexpr std::uint8_t kPersistCount = 5;
constexpr std::uint8_t kDomainCount = 5;
static_assert(static_cast<int>(flush::ServerPersist::msync) == kPersistCount - 1 &&
                  static_cast<int>(flush::ServerPersist::none) == 0,
              "flush::ServerPersist's values are wire values (docs/protocol.md)");
static_assert(static_cast<int>(PersistenceDomain::not_pmem) == kDomainCount - 1 &&
                  static_cast<int>(PersistenceDomain::cpu_cache) == 0,
              "PersistenceDomain's values are wire values (docs/protocol.md)");
static_assert(static_cast<int>(flush::Method::read_after_write) == 0);

} // namespace

void encode(std::vector<std::byte>& out, std::uint32_t request_id, const Hello& m) {
    FrameWriter w(out, Type::hello, request_id);
    w.u16(m.min_version);
    w.u16(m.max_version);
    w.bytes(m.challenge);
    w.finish();
}

Result<Hello> decode_hello(std::span<const std::byte> body) {
    Reader r(body, "hello");
    Hello m;
    r.u16(m.min_version, "min_version");
    r.u16(m.max_version, "max_version");
    r.bytes(m.challenge, "challenge");
    // An empty range cannot be negotiated; say so here rather than as a
    // confusing "no common version" later.
    if (r.ok() && m.min_version > m.max_version)
        r.fail("min_version " + std::to_string(m.min_version) + " > max_version " +
               std::to_string(m.max_version));
    return r.finish(std::move(m));
}

void encode(std::vector<std::byte>& out, std::uint32_t request_id, const Auth& m) {
    FrameWriter w(out, Type::auth, request_id);
    w.u16(m.version);
    w.str16(m.client_id);
    w.bytes(m.client_nonce);
    w.bytes(m.mac);
    w.finish();
}

Result<Auth> decode_auth(std::span<const std::byte> body) {
    Reader r(body, "auth");
    Auth m;
    r.u16(m.version, "version");
    r.str16(m.client_id, kMaxName, "client_id");
    r.bytes(m.client_nonce, "client_nonce");
    r.bytes(m.mac, "mac");
    return r.finish(std::move(m));
}

void encode(std::vector<std::byte>& out, std::uint32_t request_id, const Welcome& m) {
    FrameWriter w(out, Type::welcome, request_id);
    w.bytes(m.server_proof);
    w.str32(m.profile_json);
    w.finish();
}

Result<Welcome> decode_welcome(std::span<const std::byte> body) {
    Reader r(body, "welcome");
    Welcome m;
    r.bytes(m.server_proof, "server_proof");
    r.str32(m.profile_json, "profile_json");
    return r.finish(std::move(m));
}

void encode(std::vector<std::byte>& out, std::uint32_t request_id, const OpenRegion& m) {
    FrameWriter w(out, Type::open_region, request_id);
    w.str16(m.name);
    w.method(m.force_method);
    w.boolean(m.unsafe);
    w.u64(m.fencing_term);
    w.finish();
}

Result<OpenRegion> decode_open_region(std::span<const std::byte> body) {
    Reader r(body, "open_region");
    OpenRegion m;
    r.str16(m.name, kMaxName, "name");
    r.method(m.force_method, "force_method");
    r.boolean(m.unsafe, "unsafe");
    r.u64(m.fencing_term, "fencing_term");
    return r.finish(std::move(m));
}

void encode(std::vector<std::byte>& out, std::uint32_t request_id, const RegionGrant& m) {
    FrameWriter w(out, Type::region, request_id);
    w.u32(m.id);
    w.u64(m.size);
    w.method(m.method);
    w.enumeration(m.server_persist);
    w.enumeration(m.domain);
    w.boolean(m.forced);
    w.str32(m.reason);
    w.bytes32(m.rdma_mr);
    w.bytes32(m.rdma_peer_cfg);
    w.finish();
}

Result<RegionGrant> decode_region(std::span<const std::byte> body) {
    Reader r(body, "region");
    RegionGrant m;
    r.u32(m.id, "id");
    r.u64(m.size, "size");
    std::optional<flush::Method> method;
    r.method(method, "method");
    // The grant always names a method: the "none" value is malformed here.
    if (r.ok() && !method) r.fail("method: unknown value 255");
    if (method) m.method = *method;
    r.enumeration(m.server_persist, kPersistCount, "server_persist");
    r.enumeration(m.domain, kDomainCount, "domain");
    r.boolean(m.forced, "forced");
    r.str32(m.reason, "reason");
    r.bytes32(m.rdma_mr, "rdma_mr");
    r.bytes32(m.rdma_peer_cfg, "rdma_peer_cfg");
    return r.finish(std::move(m));
}

} // namespace rpm::proto
