// RESP2, the Redis serialization protocol, as far as rpm-kvstore needs it:
// clients send commands as arrays of bulk strings, servers answer with
// simple strings, errors, integers, bulk strings (or null) and arrays.
// rpm-kvstore's nodes speak it (so redis-cli works against them), and so
// does the peer benchmark's client, against both rpm-kvstore and Redis.
//
// Both parsers are incremental: given what has arrived so far, they either
// take one whole message (and say how many bytes it used), ask for more,
// or reject it. Every length is bounded by Limits before anything is
// allocated for it, so a peer cannot make the reader hold unbounded memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace resp {

struct Limits {
    std::size_t max_args = 16;             ///< elements in a command array
    std::size_t max_bulk = 8u << 20;       ///< bytes in one bulk string
    std::size_t max_line = 64u << 10;      ///< a header or simple-string line
    std::size_t max_depth = 2;             ///< nested arrays in a reply
};

enum class Status { done, need_more, error };

struct Parsed {
    Status status = Status::need_more;
    std::size_t consumed = 0;  ///< bytes of the message (done only)
    std::string error;         ///< why it was rejected (error only)
};

/// One command, "*N\r\n$L\r\nARG\r\n..." (inline commands are refused).
/// On done, `args` holds its arguments (at least one).
Parsed parse_command(std::string_view in, std::vector<std::string>& args, const Limits& limits = {});

struct Reply {
    enum class Kind { simple, error, integer, bulk, null, array };
    Kind kind = Kind::null;
    std::string text;             ///< simple, error, bulk
    std::int64_t integer = 0;
    std::vector<Reply> elements;  ///< array
};

/// One reply of any kind.
Parsed parse_reply(std::string_view in, Reply& out, const Limits& limits = {});

// Encoders: each appends one message to `out`.
void command(std::string& out, std::initializer_list<std::string_view> args);
void simple(std::string& out, std::string_view s);  ///< s must not hold CR or LF
void error(std::string& out, std::string_view s);   ///< CR and LF become spaces
void integer(std::string& out, std::int64_t v);
void bulk(std::string& out, std::string_view s);
void null_bulk(std::string& out);
/// An array's header: its `n` elements follow, each encoded on its own.
void array(std::string& out, std::size_t n);

} // namespace resp
