// One DH-HMAC-CHAP transaction between the host side and the controller
// side (src/nvmf/auth/exchange.cpp), in memory: every hash and group, one-
// and two-way, and each way it must fail with its reason.
#include "nvmf/auth/exchange.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <tuple>

namespace {

using namespace rpm::nvmf::auth;

constexpr const char* kExchangeHostNqn = "nqn.2014-08.org.nvmexpress:uuid:4b1d0c2e-5a6f-4e1b-9c3d-2f7a8e6b5d40";
constexpr const char* kExchangeSubNqn = "nqn.2026-11.io.rpm:lab";

Secret make_secret(std::size_t len, std::uint8_t transform) {
    auto s = generate_secret(len, transform);
    EXPECT_TRUE(s);
    return *s;
}

struct Pair {
    ControllerPolicy ctrl;
    HostPolicy host;
};

Pair policies(bool bidirectional) {
    Pair p;
    p.ctrl.host_secret = make_secret(32, 1);
    p.ctrl.host_nqn = p.host.host_nqn = kExchangeHostNqn;
    p.ctrl.subsystem_nqn = p.host.subsystem_nqn = kExchangeSubNqn;
    p.host.host_secret = p.ctrl.host_secret;
    if (bidirectional) {
        p.ctrl.ctrl_secret = make_secret(48, 2);
        p.host.ctrl_secret = p.ctrl.ctrl_secret;
    }
    return p;
}

// Runs the transaction to its end; the messages pass unchanged unless
// `tamper` changes the n-th one (0: negotiate, 1: challenge, 2: reply, 3: success1).
struct Run {
    ControllerExchange ctrl;
    HostExchange host;
    std::vector<std::vector<std::uint8_t>> wire;
};

Run run(const Pair& p, const std::function<void(int, std::vector<std::uint8_t>&)>& tamper = {}) {
    Run r{ControllerExchange(p.ctrl, 0x100), HostExchange(p.host, 0x2a, 0x200), {}};
    auto pass = [&](int n, std::vector<std::uint8_t> m) {
        if (tamper) tamper(n, m);
        r.wire.push_back(m);
        return m;
    };
    r.ctrl.on_send(pass(0, r.host.negotiate()));
    auto reply = r.host.on_challenge(pass(1, r.ctrl.on_receive()));
    if (!reply) return r;
    r.ctrl.on_send(pass(2, *reply));
    if (r.host.failed()) return r;  // the host sent AUTH_Failure2
    auto last = r.host.on_result(pass(3, r.ctrl.on_receive()));
    if (last) r.ctrl.on_send(*last);
    return r;
}

class AuthExchange : public ::testing::TestWithParam<std::tuple<Hash, DhGroup, bool>> {};

TEST_P(AuthExchange, HostAndControllerAuthenticate) {
    const auto [hash, group, bidirectional] = GetParam();
    auto p = policies(bidirectional);
    p.ctrl.hashes = {hash};
    p.ctrl.dh_groups = {group};
    auto r = run(p);
    EXPECT_TRUE(r.ctrl.authenticated()) << r.ctrl.failure_detail();
    EXPECT_TRUE(r.host.authenticated()) << r.host.failure_detail();
    EXPECT_EQ(r.ctrl.hash(), hash);
    EXPECT_EQ(r.ctrl.dh_group(), group);
    EXPECT_EQ(r.ctrl.bidirectional(), bidirectional);
    EXPECT_EQ(r.wire.size(), 4u);
}

INSTANTIATE_TEST_SUITE_P(
    All, AuthExchange,
    ::testing::Combine(::testing::Values(Hash::sha256, Hash::sha384, Hash::sha512),
                       ::testing::Values(DhGroup::null, DhGroup::ffdhe2048, DhGroup::ffdhe4096), ::testing::Bool()),
    [](const auto& p) {
        return std::string(hash_name(std::get<0>(p.param))) + "_" + std::string(dh_group_name(std::get<1>(p.param))) +
               (std::get<2>(p.param) ? "_bidirectional" : "_host_only");
    });

TEST(AuthExchangeFailure, AWrongHostSecretIsRefusedWithFailed) {
    auto p = policies(false);
    p.host.host_secret = make_secret(32, 1);
    auto r = run(p);
    EXPECT_FALSE(r.ctrl.authenticated());
    EXPECT_TRUE(r.ctrl.failed());
    EXPECT_EQ(r.ctrl.failure(), FailureReason::failed);
    EXPECT_TRUE(r.host.refused_by_controller());
    EXPECT_EQ(r.host.failure(), FailureReason::failed);
}

TEST(AuthExchangeFailure, TheSameKeyUnderAnotherNqnIsRefused) {
    auto p = policies(false);
    p.host.host_nqn = "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-0000-0000-000000000000";
    auto r = run(p);
    EXPECT_EQ(r.ctrl.failure(), FailureReason::failed);
}

TEST(AuthExchangeFailure, AControllerWithTheWrongSecretIsRefusedByTheHost) {
    auto p = policies(true);
    p.ctrl.ctrl_secret = make_secret(48, 2);
    auto r = run(p);
    EXPECT_FALSE(r.host.authenticated());
    EXPECT_EQ(r.host.failure(), FailureReason::failed);
    EXPECT_FALSE(r.host.refused_by_controller());
    EXPECT_TRUE(r.ctrl.failed()) << "the host's AUTH_Failure2 must end the controller's side";
    EXPECT_FALSE(r.ctrl.authenticated());
}

TEST(AuthExchangeFailure, AHostAskingForAControllerWithoutASecretIsRefused) {
    auto p = policies(true);
    p.ctrl.ctrl_secret.reset();
    auto r = run(p);
    EXPECT_EQ(r.ctrl.failure(), FailureReason::failed);
    EXPECT_TRUE(r.host.refused_by_controller());
}

TEST(AuthExchangeFailure, NoCommonHashOrGroup) {
    auto p = policies(false);
    p.ctrl.hashes = {Hash::sha512};
    p.host.hashes = {Hash::sha256};
    auto r = run(p);
    EXPECT_EQ(r.ctrl.failure(), FailureReason::hash_unusable);
    EXPECT_EQ(r.host.failure(), FailureReason::hash_unusable);
    auto q = policies(false);
    q.ctrl.dh_groups = {DhGroup::ffdhe8192};
    q.host.dh_groups = {DhGroup::null};
    auto s = run(q);
    EXPECT_EQ(s.ctrl.failure(), FailureReason::dh_group_unusable);
}

TEST(AuthExchangeFailure, AReplayedReplyIsRefused) {
    auto p = policies(false);
    auto first = run(p);
    ASSERT_TRUE(first.ctrl.authenticated());
    // A new transaction (new challenge) answered with the first one's reply.
    ControllerExchange again(p.ctrl, 0x101);
    HostExchange host(p.host, 0x2a, 0x201);
    again.on_send(host.negotiate());
    (void)again.on_receive();
    again.on_send(first.wire[2]);
    EXPECT_EQ(again.failure(), FailureReason::failed);
    EXPECT_FALSE(again.authenticated());
}

TEST(AuthExchangeFailure, TamperedMessagesGetTheirReasons) {
    auto p = policies(false);
    p.ctrl.dh_groups = {DhGroup::ffdhe2048};
    // A truncated reply, a reply for another transaction, a response bit flipped.
    auto truncated = run(p, [](int n, auto& m) { if (n == 2) m.resize(m.size() - 1); });
    EXPECT_EQ(truncated.ctrl.failure(), FailureReason::incorrect_payload);
    auto other_tid = run(p, [](int n, auto& m) { if (n == 2) m[4] ^= 1; });
    EXPECT_EQ(other_tid.ctrl.failure(), FailureReason::incorrect_message);
    auto flipped = run(p, [](int n, auto& m) { if (n == 2) m[16] ^= 1; });
    EXPECT_EQ(flipped.ctrl.failure(), FailureReason::failed);
    // The controller's DH value replaced by all ones (not in the group): the host refuses.
    auto bad_dh = run(p, [](int n, auto& m) {
        if (n == 1) std::fill(m.end() - 256, m.end(), std::uint8_t{0xff});
    });
    EXPECT_EQ(bad_dh.host.failure(), FailureReason::incorrect_payload);
    EXPECT_TRUE(bad_dh.ctrl.failed());
}

TEST(AuthExchangeFailure, OutOfOrderMessagesAreIncorrectMessages) {
    auto p = policies(false);
    HostExchange host(p.host, 1, 1);
    ControllerExchange reply_first(p.ctrl, 1);
    reply_first.on_send(encode(Reply{1, 0, std::vector<std::uint8_t>(32, 0), {}, {}}));
    auto f = decode(reply_first.on_receive());
    ASSERT_TRUE(std::holds_alternative<Message>(f));
    ASSERT_TRUE(std::holds_alternative<Failure>(std::get<Message>(f)));
    EXPECT_EQ(std::get<Failure>(std::get<Message>(f)).reason, FailureReason::incorrect_message);
    EXPECT_TRUE(reply_first.failed());

    ControllerExchange receive_first(p.ctrl, 1);
    (void)receive_first.on_receive();
    EXPECT_EQ(receive_first.failure(), FailureReason::incorrect_message);

    ControllerExchange two_negotiates(p.ctrl, 1);
    two_negotiates.on_send(host.negotiate());
    two_negotiates.on_send(host.negotiate());
    EXPECT_EQ(two_negotiates.failure(), FailureReason::incorrect_message);
}

} // namespace
