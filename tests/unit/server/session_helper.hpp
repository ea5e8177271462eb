// A session of client "c" (secret "s"), or of another client the Service
// knows, authenticated with a Service, for the server's unit tests.
#pragma once

#include "server/service.hpp"

#include <gtest/gtest.h>

namespace rpm::test {

inline server::Session authenticated_session(server::Service& service, const std::string& id = "c",
                                             const std::string& secret = "s") {
    auto s = service.new_session();
    auto hello = service.hello_for(s);
    proto::Auth a;
    a.client_id = id;
    a.client_nonce = proto::random_nonce();
    a.mac = proto::auth_mac(secret, hello.challenge, id, a.client_nonce);
    EXPECT_TRUE(service.authenticate(s, a));
    return s;
}

} // namespace rpm::test
