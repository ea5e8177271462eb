// The RESP2 codec rpm-kvstore and rpm-kvbench share (examples/kvstore/resp.hpp):
// every message split at every byte is "need more" until it is whole,
// limits are enforced before the data they bound arrives, and malformed
// input is an error, never a guess.
#include "resp.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace resp {
// gtest prints a Status by name (found by ADL), not as four raw bytes.
void PrintTo(Status s, std::ostream* os) {
    *os << (s == Status::done ? "done" : s == Status::need_more ? "need_more" : "error");
}
} // namespace resp

namespace {

using resp::Limits;
using resp::Reply;
using resp::Status;
using Args = std::vector<std::string>;
using namespace std::string_literals;

resp::Parsed cmd(std::string_view in, Args& args, const Limits& l = {}) { return resp::parse_command(in, args, l); }
resp::Parsed rep(std::string_view in, Reply& r, const Limits& l = {}) { return resp::parse_reply(in, r, l); }

// Every proper prefix of `whole` needs more; the whole takes exactly its
// size, also with the start of a next message behind it (pipelining).
template <typename Parse>
void expect_split_everywhere(const std::string& whole, Parse parse) {
    for (std::size_t k = 0; k < whole.size(); ++k) {
        const auto p = parse(std::string_view(whole).substr(0, k));
        ASSERT_EQ(p.status, Status::need_more) << "prefix of " << k << " bytes of " << testing::PrintToString(whole)
                                               << ": " << p.error;
        EXPECT_EQ(p.consumed, 0u);
    }
    auto p = parse(whole);
    ASSERT_EQ(p.status, Status::done) << p.error;
    EXPECT_EQ(p.consumed, whole.size());
    p = parse(whole + "*1\r\n$4\r\nP");
    ASSERT_EQ(p.status, Status::done) << p.error;
    EXPECT_EQ(p.consumed, whole.size());
}

void expect_command_error(std::string_view in, const Limits& l = {}) {
    Args args;
    const auto p = cmd(in, args, l);
    EXPECT_EQ(p.status, Status::error) << testing::PrintToString(std::string(in));
    EXPECT_FALSE(p.error.empty());
}

void expect_reply_error(std::string_view in, const Limits& l = {}) {
    Reply r;
    const auto p = rep(in, r, l);
    EXPECT_EQ(p.status, Status::error) << testing::PrintToString(std::string(in));
    EXPECT_FALSE(p.error.empty());
}

TEST(RespEncode, EachKind) {
    std::string out;
    resp::command(out, {"SET", "k", ""});
    EXPECT_EQ(out, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n");
    out.clear();
    resp::simple(out, "OK");
    resp::error(out, "ERR a\r\nb");
    resp::integer(out, -42);
    resp::bulk(out, "a\r\n\0b"s);
    resp::null_bulk(out);
    EXPECT_EQ(out, "+OK\r\n-ERR a  b\r\n:-42\r\n$5\r\na\r\n\0b\r\n$-1\r\n"s);
}

TEST(RespCommand, SplitAtEveryByte) {
    const std::string value(300, 'v');
    for (const auto& whole : {std::string("*1\r\n$4\r\nPING\r\n"), std::string("*3\r\n$3\r\nSET\r\n$0\r\n\r\n$300\r\n") + value + "\r\n",
                              std::string("*2\r\n$3\r\nGET\r\n$4\r\na\r\nb\r\n")}) {
        Args args;
        expect_split_everywhere(whole, [&](std::string_view in) { return cmd(in, args); });
    }
    Args args;
    ASSERT_EQ(cmd("*3\r\n$3\r\nSET\r\n$0\r\n\r\n$4\r\na\r\nb\r\n", args).status, Status::done);
    EXPECT_EQ(args, (Args{"SET", "", "a\r\nb"}));
}

TEST(RespCommand, RoundTripsTheEncoder) {
    std::string out;
    const auto binary = "\0\r\n\xff"s;
    resp::command(out, {"SET", binary, std::string(4096, 'x')});
    Args args;
    const auto p = cmd(out, args);
    ASSERT_EQ(p.status, Status::done) << p.error;
    EXPECT_EQ(p.consumed, out.size());
    EXPECT_EQ(args, (Args{"SET", binary, std::string(4096, 'x')}));
}

TEST(RespReply, EachKindSplitAtEveryByte) {
    struct Case {
        std::string wire;
        Reply::Kind kind;
    };
    const std::vector<Case> cases = {
        {"+OK\r\n", Reply::Kind::simple},         {"-NOTLEADER n2\r\n", Reply::Kind::error},
        {":-7\r\n", Reply::Kind::integer},        {"$5\r\nhe\r\no\r\n", Reply::Kind::bulk},
        {"$0\r\n\r\n", Reply::Kind::bulk},        {"$-1\r\n", Reply::Kind::null},
        {"*-1\r\n", Reply::Kind::null},           {"*0\r\n", Reply::Kind::array},
        {"*3\r\n:1\r\n$-1\r\n*2\r\n+a\r\n$1\r\nb\r\n", Reply::Kind::array},
    };
    for (const auto& c : cases) {
        Reply r;
        expect_split_everywhere(c.wire, [&](std::string_view in) { return rep(in, r); });
        Reply whole;
        ASSERT_EQ(rep(c.wire, whole).status, Status::done);
        EXPECT_EQ(whole.kind, c.kind) << c.wire;
    }
}

TEST(RespReply, Values) {
    Reply r;
    ASSERT_EQ(rep("-NOTLEADER n2 127.0.0.1:7001\r\n", r).status, Status::done);
    EXPECT_EQ(r.text, "NOTLEADER n2 127.0.0.1:7001");
    ASSERT_EQ(rep(":-9223372036854775808\r\n", r).status, Status::done);
    EXPECT_EQ(r.integer, INT64_MIN);
    Reply a;
    ASSERT_EQ(rep("*3\r\n:1\r\n$-1\r\n*2\r\n+a\r\n$1\r\nb\r\n", a).status, Status::done);
    ASSERT_EQ(a.elements.size(), 3u);
    EXPECT_EQ(a.elements[0].integer, 1);
    EXPECT_EQ(a.elements[1].kind, Reply::Kind::null);
    ASSERT_EQ(a.elements[2].elements.size(), 2u);
    EXPECT_EQ(a.elements[2].elements[0].text, "a");
    EXPECT_EQ(a.elements[2].elements[1].text, "b");
}

// A header that announces more than the limits allow is refused as soon as
// the header is whole: nothing waits for (or allocates) the data.
TEST(RespLimits, RefusedBeforeTheDataArrives) {
    Limits l;
    l.max_args = 3;
    l.max_bulk = 8;
    l.max_line = 16;
    l.max_depth = 1;
    expect_command_error("*4\r\n", l);
    expect_command_error("*1\r\n$9\r\n", l);
    expect_command_error("*1\r\n$99999999999999\r\n", l);
    expect_reply_error("$9\r\n", l);
    expect_reply_error("*4\r\n", l);
    expect_reply_error("*1\r\n*1\r\n", l);  // nested deeper than max_depth
    // A line longer than max_line, with or without its end in sight.
    expect_reply_error("+" + std::string(16, 'a'), l);
    expect_reply_error("+" + std::string(16, 'a') + "\r\n", l);
    expect_command_error("*1" + std::string(15, '0'), l);
    expect_command_error("*1\r\n$1" + std::string(15, '0'), l);
    // At the limits: accepted.
    Args args;
    EXPECT_EQ(cmd("*3\r\n$1\r\na\r\n$8\r\n12345678\r\n$0\r\n\r\n", args, l).status, Status::done);
    Reply r;
    EXPECT_EQ(rep("+" + std::string(15, 'a') + "\r\n", r, l).status, Status::done);
    EXPECT_EQ(rep("*1\r\n:1\r\n", r, l).status, Status::done);
    EXPECT_EQ(rep("$8\r\n12345678\r\n", r, l).status, Status::done);
}

// A line of exactly max_line bytes is accepted whole, so it must also be
// accepted when it arrives in two pieces split between its CR and its LF
// (line_at once counted that CR against the limit and refused the prefix).
TEST(RespLimits, LineOfExactlyMaxLineSplitBeforeItsLf) {
    Limits l;
    l.max_line = 16;
    const std::string whole = "+" + std::string(15, 'a') + "\r\n";
    Reply r;
    ASSERT_EQ(rep(whole, r, l).status, Status::done);
    expect_split_everywhere(whole, [&](std::string_view in) { return rep(in, r, l); });
}

TEST(RespMalformed, Commands) {
    expect_command_error("PING\r\n");  // inline commands are refused
    expect_command_error("GET k\r\n");
    expect_command_error("*0\r\n");
    expect_command_error("*-1\r\n");
    expect_command_error("*x\r\n");
    expect_command_error("*\r\n");
    expect_command_error("*1 \r\n");
    expect_command_error("*1\r\n:1\r\n");        // an element that is not a bulk string
    expect_command_error("*1\r\n+OK\r\n");
    expect_command_error("*1\r\n$-1\r\n");       // null bulk
    expect_command_error("*1\r\n$-2\r\n");
    expect_command_error("*1\r\n$x\r\n");
    expect_command_error("*1\r\n$\r\n");
    expect_command_error("*1\r\n$3\r\nabcXY");  // data not followed by CRLF
    expect_command_error("*1\r\n$3\r\nabcd\r\n");
    expect_command_error("*2\r\n$1\r\na\r\nb");
}

TEST(RespMalformed, Replies) {
    expect_reply_error("\r\n");
    expect_reply_error("!3\r\nabc\r\n");
    expect_reply_error("OK\r\n");
    expect_reply_error(":\r\n");
    expect_reply_error(":12a\r\n");
    expect_reply_error(":9223372036854775808\r\n");  // out of int64
    expect_reply_error("$-2\r\n");
    expect_reply_error("$x\r\n");
    expect_reply_error("$3\r\nabcXY");
    expect_reply_error("*-2\r\n");
    expect_reply_error("*x\r\n");
    expect_reply_error("*2\r\n+a\r\n!\r\n");  // an element that is malformed
}

TEST(RespMalformed, AnErrorIsAnErrorWhateverFollows) {
    Reply r;
    const auto p = rep("*1\r\n:x\r\n+OK\r\n", r);
    EXPECT_EQ(p.status, Status::error);
    EXPECT_EQ(p.consumed, 0u);
}

} // namespace
