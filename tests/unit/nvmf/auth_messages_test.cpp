// DH-HMAC-CHAP messages (src/nvmf/auth/messages.cpp): the bytes of each
// message at the offsets Linux's include/linux/nvme.h gives, round trips,
// and every malformed message refused with the failure reason to answer.
#include "nvmf/auth/messages.hpp"

#include <gtest/gtest.h>

namespace {

using namespace rpm::nvmf::auth;

template <class T>
T as(const std::variant<Message, Refusal>& d) {
    if (const auto* r = std::get_if<Refusal>(&d)) ADD_FAILURE() << "refused: " << r->why;
    const auto* m = std::get_if<Message>(&d);
    if (m == nullptr || !std::holds_alternative<T>(*m)) {
        ADD_FAILURE() << "decoded as another message";
        return T{};
    }
    return std::get<T>(*m);
}

Refusal refusal(std::span<const std::uint8_t> b) {
    auto d = decode(b);
    if (const auto* r = std::get_if<Refusal>(&d)) return *r;
    ADD_FAILURE() << "accepted " << b.size() << " bytes";
    return {};
}

TEST(AuthMessages, NegotiateAsLinuxSendsIt) {
    Negotiate n{0x1234, 0, {1, 2, 3}, {0, 1, 2, 3, 4, 5}};
    const auto b = encode(n);
    ASSERT_EQ(b.size(), 72u);
    EXPECT_EQ(b[0], 0x00);  // AUTH_COMMON_MESSAGES
    EXPECT_EQ(b[1], 0x00);  // negotiate
    EXPECT_EQ(b[4] | b[5] << 8, 0x1234);
    EXPECT_EQ(b[7], 1);     // NAPD
    EXPECT_EQ(b[8], 0x01);  // AUTHID DH-HMAC-CHAP
    EXPECT_EQ(b[10], 3);    // HALEN
    EXPECT_EQ(b[11], 6);    // DHLEN
    EXPECT_EQ(b[12], 1);    // idlist[0]: SHA-256
    EXPECT_EQ(b[12 + 30 + 5], 5);  // idlist[35]: ffdhe8192
    const auto d = as<Negotiate>(decode(b));
    EXPECT_EQ(d.transaction, 0x1234);
    EXPECT_EQ(d.hashes, n.hashes);
    EXPECT_EQ(d.dh_groups, n.dh_groups);
}

TEST(AuthMessages, ChallengeReplySuccessAndFailureRoundTrip) {
    Challenge c{7, Hash::sha384, DhGroup::ffdhe2048, 0xa1b2c3d4, std::vector<std::uint8_t>(48, 0x11),
                std::vector<std::uint8_t>(256, 0x22)};
    auto cb = encode(c);
    ASSERT_EQ(cb.size(), 16u + 48 + 256);
    EXPECT_EQ(cb[0], 0x01);
    EXPECT_EQ(cb[1], 0x01);
    EXPECT_EQ(cb[6], 48);   // HL
    EXPECT_EQ(cb[8], 2);    // HASHID
    EXPECT_EQ(cb[9], 1);    // DHGID
    EXPECT_EQ(cb[10] | cb[11] << 8, 256);
    EXPECT_EQ(cb[12], 0xd4);
    auto cd = as<Challenge>(decode(cb));
    EXPECT_EQ(cd.seqnum, c.seqnum);
    EXPECT_EQ(cd.challenge, c.challenge);
    EXPECT_EQ(cd.dh_value, c.dh_value);

    Reply r{7, 99, std::vector<std::uint8_t>(48, 0x33), std::vector<std::uint8_t>(48, 0x44),
            std::vector<std::uint8_t>(256, 0x55)};
    auto rb = encode(r);
    ASSERT_EQ(rb.size(), 16u + 96 + 256);
    EXPECT_EQ(rb[8], 1);  // CVALID
    auto rd = as<Reply>(decode(rb));
    EXPECT_EQ(rd.seqnum, 99u);
    EXPECT_EQ(rd.response, r.response);
    EXPECT_EQ(rd.challenge, r.challenge);
    EXPECT_EQ(rd.dh_value, r.dh_value);
    Reply unidirectional{7, 0, std::vector<std::uint8_t>(32, 0x33), {}, {}};
    auto ub = encode(unidirectional);
    auto ud = as<Reply>(decode(ub));
    EXPECT_TRUE(ud.challenge.empty());
    // Linux 6.12 sends a sequence number without a challenge: accepted, unused.
    ub[12] = 0x2a;
    EXPECT_EQ(as<Reply>(decode(ub)).seqnum, 0u);

    Success1 s1{7, 48, std::vector<std::uint8_t>(48, 0x66)};
    auto s1d = as<Success1>(decode(encode(s1)));
    EXPECT_EQ(s1d.response, s1.response);
    EXPECT_TRUE(as<Success1>(decode(encode(Success1{7, 32, {}}))).response.empty());
    EXPECT_EQ(as<Success2>(decode(encode(Success2{7}))).transaction, 7);
    auto f = encode(Failure{MessageId::failure1, 7, FailureReason::hash_unusable});
    ASSERT_EQ(f.size(), 8u);
    EXPECT_EQ(f[1], 0xf1);
    EXPECT_EQ(f[6], 0x01);
    EXPECT_EQ(f[7], 0x04);
    EXPECT_EQ(as<Failure>(decode(f)).reason, FailureReason::hash_unusable);
}

TEST(AuthMessages, EveryTruncationOfAMessageIsRefused) {
    Challenge c{1, Hash::sha256, DhGroup::ffdhe2048, 1, std::vector<std::uint8_t>(32, 1),
                std::vector<std::uint8_t>(256, 2)};
    Reply r{1, 0, std::vector<std::uint8_t>(32, 3), std::vector<std::uint8_t>(32, 4), std::vector<std::uint8_t>(256, 5)};
    for (const auto& full : {encode(Negotiate{1, 0, {1}, {0}}), encode(c), encode(r)}) {
        for (std::size_t n = 0; n < full.size(); ++n) {
            auto d = decode(std::span(full).first(n));
            EXPECT_TRUE(std::holds_alternative<Refusal>(d)) << n << " of " << full.size() << " bytes accepted";
        }
        auto longer = full;
        longer.push_back(0);
        EXPECT_TRUE(std::holds_alternative<Refusal>(decode(longer))) << "a trailing byte was accepted";
    }
}

TEST(AuthMessages, UnknownIdsGetTheirFailureReasons) {
    auto c = encode(Challenge{1, Hash::sha256, DhGroup::null, 1, std::vector<std::uint8_t>(32, 1), {}});
    auto bad_hash = c;
    bad_hash[8] = 4;
    EXPECT_EQ(refusal(bad_hash).reason, FailureReason::hash_unusable);
    auto bad_group = c;
    bad_group[9] = 6;
    EXPECT_EQ(refusal(bad_group).reason, FailureReason::dh_group_unusable);
    auto bad_hl = c;
    bad_hl[6] = 48;
    EXPECT_EQ(refusal(bad_hl).reason, FailureReason::hash_unusable);
    auto dh_on_null = encode(Challenge{1, Hash::sha256, DhGroup::null, 1, std::vector<std::uint8_t>(32, 1),
                                       std::vector<std::uint8_t>(8, 1)});
    EXPECT_EQ(refusal(dh_on_null).reason, FailureReason::incorrect_payload);
    auto unknown = c;
    unknown[1] = 0x09;
    EXPECT_EQ(refusal(unknown).reason, FailureReason::incorrect_message);
    auto wrong_type = c;
    wrong_type[0] = 0x00;  // a challenge id under the common messages' type
    EXPECT_EQ(refusal(wrong_type).reason, FailureReason::incorrect_message);
    auto n = encode(Negotiate{1, 0, {1}, {0}});
    auto no_dhchap = n;
    no_dhchap[8] = 0x02;
    EXPECT_EQ(refusal(no_dhchap).reason, FailureReason::not_usable);
    auto napd0 = n;
    napd0[7] = 0;
    EXPECT_EQ(refusal(std::span(napd0).first(8)).reason, FailureReason::not_usable);
    auto long_list = n;
    long_list[10] = 31;
    EXPECT_EQ(refusal(long_list).reason, FailureReason::incorrect_payload);
    EXPECT_EQ(refusal(std::vector<std::uint8_t>(kMaxMessage + 1, 0)).reason, FailureReason::incorrect_payload);
}

} // namespace
