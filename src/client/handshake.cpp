// The client half of the handshake, shared by every transport.
#include "client/transport.hpp"

namespace rpm::client {

Result<proto::Auth> answer_hello(const proto::Hello& hello, const ClientOptions& opts, HandshakeState& st) {
    if (proto::kVersion < hello.min_version || proto::kVersion > hello.max_version)
        return Error(errc::unsupported, "the server speaks protocol versions " +
                                            std::to_string(hello.min_version) + " to " +
                                            std::to_string(hello.max_version) + "; this client speaks " +
                                            std::to_string(proto::kVersion) + ": upgrade one side");
    st.hello = hello;
    st.client_nonce = proto::random_nonce();
    proto::Auth a;
    a.version = proto::kVersion;
    a.client_id = opts.client_id;
    a.client_nonce = st.client_nonce;
    a.mac = proto::auth_mac(opts.secret, hello.challenge, opts.client_id, st.client_nonce);
    return a;
}

Result<void> check_welcome(const proto::Welcome& w, const ClientOptions& opts, const HandshakeState& st) {
    auto expect = proto::server_mac(opts.secret, st.client_nonce, st.hello.challenge);
    if (!proto::mac_equal(expect, w.server_proof))
        return Error(errc::auth_failed,
                     "the client refused: the server could not prove it knows the shared secret (wrong server or "
                     "wrong secret)");
    return {};
}

} // namespace rpm::client
