// A session of client "c" (secret "s") authenticated with a Service, for the
// server's unit tests.
#pragma once

#include "server/service.hpp"

#include <gtest/gtest.h>

namespace rpm::test {

inline server::Session authenticated_session(server::Service& core) {
    auto s = core.new_session();
    auto hello = core.hello_for(s);
    proto::Auth a;
    a.client_id = "c";
    a.client_nonce = proto::random_nonce();
    a.mac = proto::auth_mac("s", hello.challenge, "c", a.client_nonce);
    EXPECT_TRUE(core.authenticate(s, a));
    return s;
}

} // namespace rpm::test
