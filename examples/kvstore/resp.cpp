// RESP2 parsing and encoding (resp.hpp).
#include "resp.hpp"

#include <charconv>

namespace resp {
namespace {

struct Line {
    Status status = Status::need_more;
    std::string_view text;  ///< without CRLF
    std::size_t next = 0;   ///< offset after CRLF
    std::string error;
};

// The line starting at `at`; a line longer than the limit is an error even
// before its end arrives (else a peer could make us buffer without end).
Line line_at(std::string_view in, std::size_t at, const Limits& limits) {
    Line l;
    const auto end = in.find("\r\n", at);
    if (end == std::string_view::npos) {
        // A CR at the end is not counted: the line's LF may be on its way.
        const auto pending = in.size() - at - (in.size() > at && in.back() == '\r' ? 1 : 0);
        if (pending > limits.max_line) l.status = Status::error, l.error = "line too long";
        return l;
    }
    if (end - at > limits.max_line) return l.status = Status::error, l.error = "line too long", l;
    l.status = Status::done;
    l.text = in.substr(at, end - at);
    l.next = end + 2;
    return l;
}

bool to_int(std::string_view s, std::int64_t& v) {
    if (s.empty()) return false;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    return ec == std::errc() && p == s.data() + s.size();
}

Parsed fail(std::string why) { return {Status::error, 0, std::move(why)}; }

// "$L\r\n<L bytes>\r\n" at `at` (the header already read as `header`).
// L == -1 is null (allowed only when `allow_null`).
Parsed bulk_body(std::string_view in, const Line& header, bool allow_null, const Limits& limits, std::string& out,
                 bool& is_null) {
    std::int64_t len = 0;
    if (!to_int(header.text.substr(1), len)) return fail("bad bulk length");
    is_null = len == -1;
    if (is_null) return allow_null ? Parsed{Status::done, header.next, {}} : fail("null bulk in a command");
    if (len < 0 || static_cast<std::uint64_t>(len) > limits.max_bulk) return fail("bulk length out of range");
    const auto n = static_cast<std::size_t>(len);
    if (in.size() - header.next < n + 2) return {};
    if (in.substr(header.next + n, 2) != "\r\n") return fail("bulk string not followed by CRLF");
    out.assign(in.substr(header.next, n));
    return {Status::done, header.next + n + 2, {}};
}

Parsed reply_at(std::string_view in, std::size_t at, Reply& out, const Limits& limits, std::size_t depth) {
    auto l = line_at(in, at, limits);
    if (l.status != Status::done) return {l.status, 0, l.error};
    if (l.text.empty()) return fail("empty line");
    const char type = l.text[0];
    const auto rest = l.text.substr(1);
    switch (type) {
    case '+': out.kind = Reply::Kind::simple, out.text.assign(rest); return {Status::done, l.next, {}};
    case '-': out.kind = Reply::Kind::error, out.text.assign(rest); return {Status::done, l.next, {}};
    case ':':
        out.kind = Reply::Kind::integer;
        return to_int(rest, out.integer) ? Parsed{Status::done, l.next, {}} : fail("bad integer");
    case '$': {
        bool is_null = false;
        auto p = bulk_body(in, l, true, limits, out.text, is_null);
        out.kind = is_null ? Reply::Kind::null : Reply::Kind::bulk;
        return p;
    }
    case '*': {
        std::int64_t n = 0;
        if (!to_int(rest, n)) return fail("bad array length");
        if (n == -1) return out.kind = Reply::Kind::null, Parsed{Status::done, l.next, {}};
        if (n < 0 || static_cast<std::uint64_t>(n) > limits.max_args) return fail("array length out of range");
        if (depth >= limits.max_depth) return fail("arrays nested too deep");
        out.kind = Reply::Kind::array;
        out.elements.assign(static_cast<std::size_t>(n), Reply{});
        std::size_t next = l.next;
        for (auto& e : out.elements) {
            auto p = reply_at(in, next, e, limits, depth + 1);
            if (p.status != Status::done) return p;
            next = p.consumed;
        }
        return {Status::done, next, {}};
    }
    default: return fail("unknown reply type");
    }
}

void header(std::string& out, char type, std::int64_t n) {
    out += type;
    out += std::to_string(n);
    out += "\r\n";
}

} // namespace

Parsed parse_command(std::string_view in, std::vector<std::string>& args, const Limits& limits) {
    if (in.empty()) return {};
    if (in[0] != '*') return fail("expected an array of bulk strings (inline commands are not supported)");
    auto l = line_at(in, 0, limits);
    if (l.status != Status::done) return {l.status, 0, l.error};
    std::int64_t n = 0;
    if (!to_int(l.text.substr(1), n) || n < 1 || static_cast<std::uint64_t>(n) > limits.max_args)
        return fail("bad argument count");
    args.resize(static_cast<std::size_t>(n));
    std::size_t next = l.next;
    for (auto& a : args) {
        if (next == in.size()) return {};
        if (in[next] != '$') return fail("expected a bulk string");
        auto h = line_at(in, next, limits);
        if (h.status != Status::done) return {h.status, 0, h.error};
        bool is_null = false;
        auto p = bulk_body(in, h, false, limits, a, is_null);
        if (p.status != Status::done) return p;
        next = p.consumed;
    }
    return {Status::done, next, {}};
}

Parsed parse_reply(std::string_view in, Reply& out, const Limits& limits) {
    auto p = reply_at(in, 0, out, limits, 0);
    if (p.status != Status::done) p.consumed = 0;
    return p;
}

void command(std::string& out, std::initializer_list<std::string_view> args) {
    header(out, '*', static_cast<std::int64_t>(args.size()));
    for (auto a : args) bulk(out, a);
}

void simple(std::string& out, std::string_view s) {
    out += '+';
    out += s;
    out += "\r\n";
}

void error(std::string& out, std::string_view s) {
    out += '-';
    for (char c : s) out += (c == '\r' || c == '\n') ? ' ' : c;
    out += "\r\n";
}

void integer(std::string& out, std::int64_t v) { header(out, ':', v); }

void bulk(std::string& out, std::string_view s) {
    header(out, '$', static_cast<std::int64_t>(s.size()));
    out += s;
    out += "\r\n";
}

void null_bulk(std::string& out) { out += "$-1\r\n"; }

void array(std::string& out, std::size_t n) { header(out, '*', static_cast<std::int64_t>(n)); }

} // namespace resp
