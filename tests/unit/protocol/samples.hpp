// Sample messages for the protocol tests: every field set to something
// distinguishable (no zero that could hide a field left unwritten), and the
// helpers that take a frame apart again.
#pragma once

#include "protocol/protocol.hpp"

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace proto_test {
using namespace rpm::proto;

template <std::size_t N>
std::array<std::uint8_t, N> counting(std::uint8_t first) {
    std::array<std::uint8_t, N> a{};
    for (std::size_t i = 0; i < N; ++i) a[i] = static_cast<std::uint8_t>(first + i);
    return a;
}

inline std::vector<std::byte> bytes_of(std::string_view s) {
    const auto* p = reinterpret_cast<const std::byte*>(s.data());
    return {p, p + s.size()};
}

inline Hello sample_hello() { return {1, 7, counting<kNonceSize>(0x10)}; }

inline Auth sample_auth() {
    return {3, "client-\xc3\xa9", counting<kNonceSize>(0x40), counting<kMacSize>(0x80)};
}

inline Welcome sample_welcome() {
    return {counting<kMacSize>(0xa0), R"({"domain":"memory_controller","ddio":"on"})"};
}

inline OpenRegion sample_open_region() { return {"pool-a", rpm::flush::Method::native_flush, true}; }

inline RegionGrant sample_grant() {
    RegionGrant g;
    g.id = 0x01020304;
    g.size = 0x1122334455667788ull;
    g.method = rpm::flush::Method::read_after_write;
    g.server_persist = rpm::flush::ServerPersist::msync;
    g.domain = rpm::PersistenceDomain::memory_controller;
    g.forced = true;
    g.reason = "ADR, DDIO off: read-after-write";
    g.rdma_mr = {1, 2, 3, 4, 5};
    g.rdma_peer_cfg = {9, 8, 7};
    return g;
}

inline Flush sample_flush() { return {42, {{0, 64}, {4096, 8192}, {~0ull - 1, 1}}}; }

/// A record and its commit word; the data lives as long as the program.
inline Persist sample_persist() {
    static const std::vector<std::byte> record = bytes_of("a log record");
    static const std::vector<std::byte> commit = bytes_of("8 bytes!");
    return {0x0a0b0c0d, {{0x1000, record}, {0x40, commit}}};
}

/// The payload of the one frame in `frame`, after checking its header.
inline std::span<const std::byte> body_of(const std::vector<std::byte>& frame) {
    return std::span(frame).subspan(kHeaderSize);
}

template <class M>
std::vector<std::byte> frame_of(const M& m, std::uint32_t request_id = 77) {
    std::vector<std::byte> out;
    encode(out, request_id, m);
    return out;
}

} // namespace proto_test
