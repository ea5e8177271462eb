// libFuzzer target: arbitrary bytes as DH-HMAC-CHAP messages
// (src/nvmf/auth/messages.cpp) and as the Authentication Send data a
// controller's side of a transaction is fed (src/nvmf/auth/exchange.cpp).
//
// Input: the whole input is decoded once as one message; then it is cut into
// messages, each after one byte: bits 0-6 times 9 are its length (up to
// 1143 bytes, room for a reply with an 8192-bit DH value), bit 7 says to
// call on_receive after it.
// Checks: a decoded message encodes to bytes that decode to the same kind
// of message and encode the same again; a refusal names one of the seven
// failure reasons; a controller never reports both authenticated and failed,
// and is never authenticated by these messages (they cannot hold the
// response to its random challenge); every answer it returns decodes.
#include "nvmf/auth/exchange.hpp"

#include <cstdio>
#include <cstdlib>

namespace {
using namespace rpm::nvmf::auth;

void require(bool ok, const char* what) {
    if (!ok) {
        std::fprintf(stderr, "fuzz check failed: %s\n", what);
        std::abort();
    }
}

void check_decode(std::span<const std::uint8_t> in) {
    auto d = decode(in);
    if (const auto* r = std::get_if<Refusal>(&d)) {
        const auto v = static_cast<unsigned>(r->reason);
        require(v >= 1 && v <= 7, "a refusal with an unknown failure reason");
        require(!r->why.empty(), "a refusal without its reason");
        return;
    }
    const auto& m = std::get<Message>(d);
    const auto bytes = std::visit([](const auto& x) { return encode(x); }, m);
    auto again = decode(bytes);
    require(std::holds_alternative<Message>(again), "an encoded message does not decode");
    const auto& m2 = std::get<Message>(again);
    require(m2.index() == m.index(), "an encoded message decodes as another kind");
    require(std::visit([](const auto& x) { return encode(x); }, m2) == bytes, "encoding is not stable");
}

const ControllerPolicy& policy() {
    static const ControllerPolicy p = [] {
        ControllerPolicy c;
        c.host_secret.key = SecretBytes(std::vector<std::uint8_t>(32, 0x5a));
        c.host_secret.transform = 1;
        c.ctrl_secret = Secret{SecretBytes(std::vector<std::uint8_t>(32, 0xa5)), 0};
        // The null group only: a DH key per input would make each run
        // milliseconds long (the groups are tested in nvmf_auth_test).
        c.dh_groups = {DhGroup::null};
        c.host_nqn = "nqn.2014-08.org.nvmexpress:uuid:fuzz";
        c.subsystem_nqn = "nqn.2026-11.io.rpm:fuzz";
        return c;
    }();
    return p;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::span<const std::uint8_t> in(data, size);
    check_decode(in);
    ControllerExchange x(policy(), 1);
    std::size_t at = 0;
    while (at < in.size()) {
        const std::uint8_t head = in[at++];
        const std::size_t len = std::min<std::size_t>((head & 0x7f) * 9u, in.size() - at);
        const auto msg = in.subspan(at, len);
        at += len;
        check_decode(msg);
        x.on_send(msg);
        if (head & 0x80) {
            const auto answer = x.on_receive();
            require(std::holds_alternative<Message>(decode(answer)), "a controller answer does not decode");
        }
        require(!(x.authenticated() && x.failed()), "authenticated and failed at once");
        require(!x.authenticated(), "authenticated without knowing the secret");
    }
    return 0;
}
