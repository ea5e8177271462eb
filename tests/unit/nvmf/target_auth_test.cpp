// DH-HMAC-CHAP between rpm's target and host over 127.0.0.1 (NVMe/TCP):
// Connect answered with AUTHREQ, each queue authenticated before anything
// else is served, one- and two-way, and a host with a wrong or no secret
// refused, counted, and unable to touch a namespace while others work.
#include "target_support.hpp"

#include "nvmf/auth/messages.hpp"
#include "nvmf/host/impl.hpp"
#include "nvmf/wire.hpp"

#include <thread>

namespace rpm::nvmf {
namespace {

using testing::TempDir;

constexpr char kAuthHost[] = "nqn.2014-08.org.nvmexpress:uuid:11111111-2222-3333-4444-555555555555";
constexpr char kOpenHost[] = "nqn.2014-08.org.nvmexpress:uuid:99999999-2222-3333-4444-555555555555";

std::string new_secret(std::size_t len = 32, std::uint8_t transform = 1) {
    auto s = generate_dhchap_secret(len, transform);
    EXPECT_TRUE(s);
    return s ? *s : std::string{};
}

struct AuthTarget {
    TempDir dir;
    std::string host_secret = new_secret(), ctrl_secret = new_secret(48, 2);
    std::optional<Target> target;
    explicit AuthTarget(bool with_ctrl_secret, std::chrono::milliseconds setup_timeout = std::chrono::seconds(10)) {
        auto o = testing::options(dir);
        o.setup_timeout = setup_timeout;
        o.subsystems[0].allowed_hosts = {kOpenHost};
        o.subsystems[0].host_secrets.push_back({kAuthHost, host_secret, with_ctrl_secret ? ctrl_secret : ""});
        auto t = Target::start(o);
        if (!t) ADD_FAILURE() << t.error().message();
        else target = std::move(*t);
    }
    HostOptions host(std::string key, std::string ctrl = "") const {
        auto h = testing::host_options(target->port());
        h.hostnqn = kAuthHost;
        h.dhchap_secret = std::move(key);
        h.dhchap_ctrl_secret = std::move(ctrl);
        return h;
    }
};

TEST(NvmfTargetAuth, AHostWithItsSecretAuthenticatesEveryQueueAndDoesIo) {
    AuthTarget r(false);
    ASSERT_TRUE(r.target);
    auto h = Host::connect(r.host(r.host_secret));
    ASSERT_TRUE(h) << h.error().message();
    const auto data = testing::random_bytes(4096, 7);
    ASSERT_TRUE(h->write(1, 0, data));
    std::vector<std::byte> back(data.size());
    ASSERT_TRUE(h->read(1, 0, back));
    EXPECT_EQ(back, data);
    EXPECT_EQ(r.target->stats().auth_succeeded, 2u) << "the admin queue and the I/O queue";
    EXPECT_EQ(r.target->stats().auth_failed, 0u);
}

TEST(NvmfTargetAuth, BidirectionalTheControllerProvesItsSecretToo) {
    AuthTarget r(true);
    ASSERT_TRUE(r.target);
    auto h = Host::connect(r.host(r.host_secret, r.ctrl_secret));
    ASSERT_TRUE(h) << h.error().message();
    EXPECT_EQ(r.target->stats().auth_succeeded, 2u);
    // A host expecting another controller secret refuses this controller.
    auto wrong = Host::connect(r.host(r.host_secret, new_secret(48, 2)));
    ASSERT_FALSE(wrong);
    EXPECT_EQ(wrong.error().code(), errc::auth_failed) << wrong.error().message();
}

TEST(NvmfTargetAuth, AWrongOrMissingSecretIsRefusedAndCounted) {
    AuthTarget r(false);
    ASSERT_TRUE(r.target);
    const auto before = testing::file_bytes(r.dir.path() / "disk", 0, 4096);
    auto wrong = Host::connect(r.host(new_secret()));
    ASSERT_FALSE(wrong);
    EXPECT_EQ(wrong.error().code(), errc::auth_failed);
    EXPECT_NE(wrong.error().message().find("authentication failed"), std::string::npos) << wrong.error().message();
    auto none = Host::connect(r.host(""));
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error().code(), errc::auth_failed);
    EXPECT_NE(none.error().message().find("no secret"), std::string::npos) << none.error().message();
    EXPECT_GE(r.target->stats().auth_failed, 1u);
    EXPECT_EQ(r.target->stats().auth_succeeded, 0u);
    // A host asking the controller to authenticate when it has no secret.
    auto ask = Host::connect(r.host(r.host_secret, new_secret(48, 2)));
    ASSERT_FALSE(ask);
    EXPECT_EQ(ask.error().code(), errc::auth_failed);
    EXPECT_EQ(testing::file_bytes(r.dir.path() / "disk", 0, 4096), before);
    // Another host, allowed without a secret, is unaffected.
    auto other = testing::host_options(r.target->port());
    other.hostnqn = kOpenHost;
    auto h = Host::connect(other);
    ASSERT_TRUE(h) << h.error().message();
    ASSERT_TRUE(h->write(1, 0, testing::random_bytes(512, 3)));
}

TEST(NvmfTargetAuth, NothingButAuthenticationIsServedBeforeIt) {
    AuthTarget r(false);
    ASSERT_TRUE(r.target);
    auto o = r.host(r.host_secret);
    auto q = host::Queue::open(o, 0, 32);
    ASSERT_TRUE(q) << q.error().message();
    auto c = host::connect_queue(**q, o, 0, 31, wire::dynamic_cntlid);
    ASSERT_TRUE(c);
    ASSERT_EQ(c->status, 0);
    EXPECT_TRUE(c->dw0 & wire::connect_authreq_atr) << "Connect must ask for authentication";
    auto cap = host::property_get(**q, wire::prop::cap, true);
    ASSERT_FALSE(cap);
    EXPECT_NE(cap.error().message().find("Authentication Required"), std::string::npos) << cap.error().message();
    // Authenticated, the same queue serves it.
    ASSERT_TRUE(host::authenticate(**q, o, 0));
    EXPECT_TRUE(host::property_get(**q, wire::prop::cap, true));
    // Re-authentication with the secret keeps it served.
    ASSERT_TRUE(host::authenticate(**q, o, 0));
    EXPECT_TRUE(host::property_get(**q, wire::prop::cap, true));
    EXPECT_EQ(r.target->stats().auth_succeeded, 1u);
    EXPECT_EQ(r.target->stats().auth_failed, 0u);
}

// The queue's next command after a failed re-authentication: the
// connection's end (io_error), not a status the queue answered with.
void expect_closed(host::Queue& q) {
    auto cap = host::property_get(q, wire::prop::cap, true);
    ASSERT_FALSE(cap);
    EXPECT_EQ(cap.error().code(), errc::io_error) << cap.error().message();
}

TEST(NvmfTargetAuth, AFailedReauthenticationEndsTheQueue) {
    AuthTarget r(true);
    ASSERT_TRUE(r.target);
    const auto o = r.host(r.host_secret, r.ctrl_secret);
    // The host's wrong secret: the controller's AUTH_Failure1 is read, then
    // the queue ends.
    auto q = host::Queue::open(o, 0, 32);
    ASSERT_TRUE(q) << q.error().message();
    ASSERT_TRUE(host::connect_queue(**q, o, 0, 31, wire::dynamic_cntlid));
    ASSERT_TRUE(host::authenticate(**q, o, 0));
    auto wrong = o;
    wrong.dhchap_secret = new_secret();
    auto again = host::authenticate(**q, wrong, 0);
    ASSERT_FALSE(again);
    EXPECT_EQ(again.error().code(), errc::auth_failed);
    EXPECT_NE(again.error().message().find("the controller refused"), std::string::npos) << again.error().message();
    expect_closed(**q);
    // The host refuses the controller's response (AUTH_Failure2): the queue
    // ends after that command.
    auto q2 = host::Queue::open(o, 0, 32);
    ASSERT_TRUE(q2) << q2.error().message();
    ASSERT_TRUE(host::connect_queue(**q2, o, 0, 31, wire::dynamic_cntlid));
    ASSERT_TRUE(host::authenticate(**q2, o, 0));
    auto suspicious = o;
    suspicious.dhchap_ctrl_secret = new_secret(48, 2);
    auto refused = host::authenticate(**q2, suspicious, 0);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message().find("does not prove its secret"), std::string::npos)
        << refused.error().message();
    expect_closed(**q2);
    EXPECT_EQ(r.target->stats().auth_succeeded, 2u);
    EXPECT_EQ(r.target->stats().auth_failed, 2u);
}

// An Authentication Send or Receive as a host would build it, with any
// CDW10 (SPSP0, SPSP1, SECP) and transfer length: for commands rpm's host
// never sends.
wire::Sqe auth_sqe(std::uint8_t fctype, std::uint32_t cdw10, std::uint32_t len) {
    wire::Sqe s;
    s.set_opcode(wire::admin::fabrics);
    s.set_fctype(fctype);
    s.set_cdw(10, cdw10);
    s.set_cdw(11, len);
    return s;
}
// DH-HMAC-CHAP's SPSP0 = SPSP1 = 1, SECP = 0xe9.
constexpr std::uint32_t kDhchapCdw10 = 0x01u << 8 | 0x01u << 16 | 0xe9u << 24;

TEST(NvmfTargetAuth, AuthenticationCommandsWithBadFieldsAreInvalidField) {
    AuthTarget r(false);
    ASSERT_TRUE(r.target);
    auto o = r.host(r.host_secret);
    auto q = host::Queue::open(o, 0, 32);
    ASSERT_TRUE(q);
    ASSERT_TRUE(host::connect_queue(**q, o, 0, 31, wire::dynamic_cntlid));
    std::vector<std::byte> msg(72);
    const std::uint32_t good = kDhchapCdw10;
    struct Case {
        const char* what;
        wire::Sqe sqe;
    };
    const Case cases[] = {
        {"SECP not DH-HMAC-CHAP's", auth_sqe(wire::fctype::auth_send, 0x01u << 8 | 0x01u << 16 | 0xeau << 24, 72)},
        {"SPSP0 not 1", auth_sqe(wire::fctype::auth_send, 0x00u << 8 | 0x01u << 16 | 0xe9u << 24, 72)},
        {"TL not the data's length", auth_sqe(wire::fctype::auth_send, good, 64)},
        {"AL 0", auth_sqe(wire::fctype::auth_receive, good, 0)},
    };
    for (const auto& c : cases) {
        const bool send = c.sqe.fctype() == wire::fctype::auth_send;
        std::vector<std::byte> in(send ? 0 : 64);
        auto done = (*q)->submit(c.sqe, send ? std::span<const std::byte>(msg) : std::span<const std::byte>{}, in);
        ASSERT_TRUE(done) << c.what;
        EXPECT_EQ(done->status, wire::sc::invalid_field) << c.what << ": " << describe_status(done->status);
    }
    // The queue still authenticates afterwards.
    EXPECT_TRUE(host::authenticate(**q, o, 0));
}

// A failed first authentication ends the queue too, once the failure is
// told: a wrong secret (the controller's AUTH_Failure1 read by the host),
// and a malformed AUTH_Negotiate (answered with AUTH_Failure1 and its reason
// on the next Receive). The host's other queues, and later ones, are
// unaffected.
TEST(NvmfTargetAuth, AFailedAuthenticationEndsTheQueueOnceTheFailureIsTold) {
    AuthTarget r(false);
    ASSERT_TRUE(r.target);
    const auto o = r.host(r.host_secret);
    auto good = host::Queue::open(o, 0, 32);
    ASSERT_TRUE(good);
    ASSERT_TRUE(host::connect_queue(**good, o, 0, 31, wire::dynamic_cntlid));
    ASSERT_TRUE(host::authenticate(**good, o, 0));

    auto wrong = o;
    wrong.dhchap_secret = new_secret();
    auto q = host::Queue::open(wrong, 0, 32);
    ASSERT_TRUE(q);
    ASSERT_TRUE(host::connect_queue(**q, wrong, 0, 31, wire::dynamic_cntlid));
    auto refused = host::authenticate(**q, wrong, 0);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code(), errc::auth_failed);
    expect_closed(**q);

    auto m = host::Queue::open(o, 0, 32);
    ASSERT_TRUE(m);
    ASSERT_TRUE(host::connect_queue(**m, o, 0, 31, wire::dynamic_cntlid));
    std::vector<std::byte> negotiate(8);  // AUTH_Negotiate cut short: NAPD 1, its descriptor missing
    negotiate[7] = std::byte{1};
    auto sent = (*m)->submit(auth_sqe(wire::fctype::auth_send, kDhchapCdw10, 8), negotiate, {});
    ASSERT_TRUE(sent) << sent.error().message();
    EXPECT_EQ(sent->status, 0) << "a bad message never fails the command that carried it";
    std::vector<std::byte> answer(64);
    auto got = (*m)->submit(auth_sqe(wire::fctype::auth_receive, kDhchapCdw10, 64), {}, answer);
    ASSERT_TRUE(got) << got.error().message();
    EXPECT_EQ(std::uint8_t(answer[1]), std::uint8_t(auth::MessageId::failure1));
    EXPECT_EQ(std::uint8_t(answer[7]), std::uint8_t(auth::FailureReason::incorrect_payload));
    expect_closed(**m);

    EXPECT_TRUE(host::property_get(**good, wire::prop::cap, true)) << "the first queue still serves";
    auto later = Host::connect(o);
    ASSERT_TRUE(later) << later.error().message();
    EXPECT_EQ(r.target->stats().auth_failed, 2u);
}

TEST(NvmfTargetAuth, AQueueThatNeverAuthenticatesIsClosedAfterTheSetupTimeout) {
    AuthTarget r(false, std::chrono::milliseconds(300));
    ASSERT_TRUE(r.target);
    auto o = r.host(r.host_secret);
    auto q = host::Queue::open(o, 0, 32);
    ASSERT_TRUE(q);
    ASSERT_TRUE(host::connect_queue(**q, o, 0, 31, wire::dynamic_cntlid));
    for (int i = 0; i < 100 && r.target->stats().setup_timeouts == 0; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(r.target->stats().setup_timeouts, 1u);
    EXPECT_FALSE(host::property_get(**q, wire::prop::cap, true)) << "the connection should be closed";
}

TEST(NvmfTargetAuth, StartRefusesMalformedOrDuplicateSecretsWithoutQuotingThem) {
    TempDir dir;
    const auto good = new_secret();
    const std::vector<std::vector<HostSecret>> bad = {
        {{kAuthHost, "DHHC-1:01:bm90IGEga2V5Cg==:", ""}},   // a key of 9 bytes
        {{kAuthHost, good, "DHHC-1:09:AAAA:"}},             // an unknown transform
        {{kAuthHost, good, ""}, {kAuthHost, new_secret(), ""}},     // one host twice
        {{"", good, ""}},
    };
    for (const auto& secrets : bad) {
        auto o = testing::options(dir);
        o.subsystems[0].host_secrets = secrets;
        auto t = Target::start(o);
        ASSERT_FALSE(t);
        EXPECT_EQ(t.error().code(), errc::invalid_argument);
        EXPECT_EQ(t.error().message().find(good.substr(10, 20)), std::string::npos) << "a secret was quoted";
    }
}

} // namespace
} // namespace rpm::nvmf
