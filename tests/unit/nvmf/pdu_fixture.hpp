// Shared by the pdu_*.cpp tests: contexts for each side, whole PDUs built
// with the encoders (header + data + data digest), and unwrapping helpers.
#pragma once

#include "nvmf/pdu/pdu.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <span>
#include <variant>
#include <vector>

namespace rpm::nvmf::pdu::test {

using Bytes = std::vector<std::uint8_t>;

inline Context ctx(Receiver who, bool initialized = true, bool hd = false, bool dd = false,
                   std::uint32_t max_data = 8192, std::uint8_t alignment = 0) {
    Context c;
    c.receiver = who;
    c.initialized = initialized;
    c.hdgst = hd;
    c.ddgst = dd;
    c.data_alignment = alignment;
    c.max_data = max_data;
    return c;
}
inline Context controller(bool hd = false, bool dd = false) { return ctx(Receiver::controller, true, hd, dd); }
inline Context host(bool hd = false, bool dd = false) { return ctx(Receiver::host, true, hd, dd); }

inline Bytes pattern(std::size_t n, std::uint8_t first = 1) {
    Bytes b(n);
    std::iota(b.begin(), b.end(), first);
    return b;
}

/// The header an encoder wrote (its return value: n bytes of out), then the
/// data and, when the header says so, the data digest: a PDU as sent.
inline Bytes whole(const Bytes& out, std::size_t n, std::span<const std::uint8_t> data = {}) {
    Bytes pdu(out.begin(), out.begin() + std::ptrdiff_t(n));
    pdu.insert(pdu.end(), data.begin(), data.end());
    if (!data.empty() && (pdu[1] & wire::flag_ddgst)) {
        pdu.resize(pdu.size() + 4);
        wire::put32(pdu.data() + pdu.size() - 4, crc32c(data));
    }
    return pdu;
}

inline Pdu parsed(std::span<const std::uint8_t> bytes, const Context& c) {
    auto r = parse_pdu(bytes, c);
    if (auto* bad = std::get_if<Refusal>(&r)) ADD_FAILURE() << "refused: " << bad->why;
    return std::holds_alternative<Pdu>(r) ? std::get<Pdu>(r) : Pdu{};
}

inline Refusal refused(std::span<const std::uint8_t> bytes, const Context& c) {
    auto r = parse_pdu(bytes, c);
    if (std::holds_alternative<Pdu>(r)) {
        ADD_FAILURE() << "accepted a PDU that should be refused";
        return Refusal{wire::Fes{}, 0xdeadbeef, ""};
    }
    return std::get<Refusal>(r);
}

/// Re-seal a header digest after a test edits the header on purpose.
inline void reseal(Bytes& pdu) {
    if (pdu[1] & wire::flag_hdgst) wire::put32(&pdu[pdu[2]], crc32c(std::span(pdu).first(pdu[2])));
}

} // namespace rpm::nvmf::pdu::test
