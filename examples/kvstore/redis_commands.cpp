// rpm-kvstore's RESP commands (redis_commands.hpp): one table, Redis's
// arity rule (N: exactly N words with the name, -N: at least N) checked
// before any command runs, and Redis's error words.
#include "redis_commands.hpp"

#include "resp.hpp"

#include <rpm/version.hpp>

#include <fnmatch.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <string_view>

namespace kvnode {
namespace {

using Args = std::vector<std::string>;
// Data commands get the primary's store (never null); the others nullptr.
using Run = bool (*)(CommandHost&, kv::Store*, const Args&, std::string&);

// Keys as Redis's COMMAND gives them: the first key's position, the last's
// (-1: the last argument), the step between keys; 0 0 0: none.
struct KeySpec {
    int first = 0, last = 0, step = 0;
};

struct Command {
    std::string_view name;  // upper case
    int arity;
    bool data;              // needs the primary's store
    Run run;
    KeySpec keys{};
};

std::string lower(std::string_view s) {
    std::string l(s);
    std::transform(l.begin(), l.end(), l.begin(), [](unsigned char c) { return std::tolower(c); });
    return l;
}

std::string upper(std::string_view s) {
    std::string u(s);
    std::transform(u.begin(), u.end(), u.begin(), [](unsigned char c) { return std::toupper(c); });
    return u;
}

bool unknown_subcommand(const Args& a, std::string& out) {
    resp::error(out, "ERR unknown subcommand '" + a[1] + "'. Try " + upper(a[0]) + " HELP.");
    return false;
}

// --- data commands: run on the primary's store ---

bool set(CommandHost& host, kv::Store* s, const Args& a, std::string& out) {
    // SET's options (EX, PX, NX, XX, GET, KEEPTTL) need expiry or a read of
    // the old value under the write; rpm-kvstore has neither.
    if (a.size() != 3) return resp::error(out, "ERR syntax error (rpm-kvstore's SET takes no options)"), false;
    if (auto r = s->put_uncommitted(a[1], a[2]); !r) return host.write_error(r.error(), out), false;
    return resp::simple(out, "OK"), true;
}

bool get(CommandHost&, kv::Store* s, const Args& a, std::string& out) {
    auto v = s->get(a[1]);
    v ? resp::bulk(out, *v) : resp::null_bulk(out);
    return false;
}

bool del(CommandHost& host, kv::Store* s, const Args& a, std::string& out) {
    std::int64_t removed = 0;
    for (std::size_t i = 1; i < a.size(); ++i) {
        auto r = s->remove_uncommitted(a[i]);
        // Keys removed before the failure are in the log: their commit is
        // still owed, so the reply waits for it either way.
        if (!r) return host.write_error(r.error(), out), removed > 0;
        removed += *r ? 1 : 0;
    }
    resp::integer(out, removed);
    return removed > 0;
}

bool mset(CommandHost& host, kv::Store* s, const Args& a, std::string& out) {
    if (a.size() % 2 != 1) return resp::error(out, "ERR wrong number of arguments for 'mset' command"), false;
    // Every key checked before the first put: a bad one writes nothing.
    for (std::size_t i = 1; i < a.size(); i += 2)
        if (auto k = kv::check_key(a[i]); !k) return host.write_error(k.error(), out), false;
    for (std::size_t i = 1; i < a.size(); i += 2)
        if (auto r = s->put_uncommitted(a[i], a[i + 1]); !r) return host.write_error(r.error(), out), i > 1;
    return resp::simple(out, "OK"), true;
}

bool mget(CommandHost&, kv::Store* s, const Args& a, std::string& out) {
    resp::array(out, a.size() - 1);
    for (std::size_t i = 1; i < a.size(); ++i) {
        auto v = s->get(a[i]);
        v ? resp::bulk(out, *v) : resp::null_bulk(out);
    }
    return false;
}

bool exists(CommandHost&, kv::Store* s, const Args& a, std::string& out) {
    std::int64_t n = 0;
    for (std::size_t i = 1; i < a.size(); ++i) n += s->get(a[i]) ? 1 : 0;
    resp::integer(out, n);
    return false;
}

bool dbsize(CommandHost&, kv::Store* s, const Args&, std::string& out) {
    resp::integer(out, static_cast<std::int64_t>(s->live_keys()));
    return false;
}

// --- connection and introspection: any node ---

bool ping(CommandHost&, kv::Store*, const Args& a, std::string& out) {
    if (a.size() > 2) return resp::error(out, "ERR wrong number of arguments for 'ping' command"), false;
    a.size() == 2 ? resp::bulk(out, a[1]) : resp::simple(out, "PONG");
    return false;
}

bool echo(CommandHost&, kv::Store*, const Args& a, std::string& out) { return resp::bulk(out, a[1]), false; }

bool select(CommandHost&, kv::Store*, const Args& a, std::string& out) {
    long long db = -1;
    const auto [p, ec] = std::from_chars(a[1].data(), a[1].data() + a[1].size(), db);
    if (ec != std::errc() || p != a[1].data() + a[1].size())
        return resp::error(out, "ERR value is not an integer or out of range"), false;
    // One keyspace: database 0, as Redis Cluster has.
    db == 0 ? resp::simple(out, "OK") : resp::error(out, "ERR DB index is out of range");
    return false;
}

bool info(CommandHost& host, kv::Store*, const Args& a, std::string& out) {
    if (a.size() > 2) return resp::error(out, "ERR wrong number of arguments for 'info' command"), false;
    return resp::bulk(out, host.info()), false;
}

// HELLO [2 [SETNAME name]]: RESP2 only, and no AUTH (nodes have no users).
bool hello(CommandHost&, kv::Store*, const Args& a, std::string& out) {
    std::size_t i = 1;
    if (a.size() > 1) {
        if (a[1] == "3") return resp::error(out, "NOPROTO unsupported protocol version"), false;
        if (a[1] != "2") return resp::error(out, "ERR Protocol version is not an integer or out of range"), false;
        i = 2;
    }
    for (; i < a.size(); i += 2) {
        const auto opt = upper(a[i]);
        if (opt == "SETNAME" && i + 1 < a.size()) continue;  // accepted; not kept (no CLIENT GETNAME)
        return resp::error(out, "ERR Syntax error in HELLO option '" + a[i] + "'" +
                                    (opt == "AUTH" ? " (rpm-kvstore nodes have no users)" : "")),
               false;
    }
    resp::array(out, 14);
    resp::bulk(out, "server"), resp::bulk(out, "rpm-kvstore");
    resp::bulk(out, "version"), resp::bulk(out, rpm::version());
    resp::bulk(out, "proto"), resp::integer(out, 2);
    resp::bulk(out, "id"), resp::integer(out, 0);
    resp::bulk(out, "mode"), resp::bulk(out, "standalone");
    resp::bulk(out, "role"), resp::bulk(out, "master");
    resp::bulk(out, "modules"), resp::array(out, 0);
    return false;
}

// CLIENT SETNAME / SETINFO, which client libraries send on connecting, are
// accepted (a node keeps no per-connection names); other subcommands are
// refused as Redis refuses an unknown one.
bool client(CommandHost&, kv::Store*, const Args& a, std::string& out) {
    const auto sub = upper(a[1]);
    if ((sub == "SETNAME" && a.size() == 3) || (sub == "SETINFO" && a.size() == 4))
        return resp::simple(out, "OK"), false;
    return unknown_subcommand(a, out);
}

// CONFIG GET pattern...: what redis-benchmark and redis-cli ask, answered
// truthfully for a node: no RDB snapshots, no AOF (durability is the
// replicated log's), one database. Other names match nothing (an empty
// array, as Redis answers an unknown parameter).
bool config(CommandHost&, kv::Store*, const Args& a, std::string& out) {
    static constexpr std::array<std::pair<std::string_view, std::string_view>, 4> params{
        {{"save", ""}, {"appendonly", "no"}, {"databases", "1"}, {"maxmemory", "0"}}};
    if (upper(a[1]) != "GET") return unknown_subcommand(a, out);
    if (a.size() < 3) return resp::error(out, "ERR wrong number of arguments for 'config|get' command"), false;
    std::vector<std::string_view> hits;
    for (const auto& [name, value] : params)
        for (std::size_t i = 2; i < a.size(); ++i)
            if (::fnmatch(lower(a[i]).c_str(), std::string(name).c_str(), 0) == 0) {
                hits.push_back(name), hits.push_back(value);
                break;
            }
    resp::array(out, hits.size());
    for (auto h : hits) resp::bulk(out, h);
    return false;
}

// COMMAND (redis-cli asks COMMAND DOCS for its hints): no documentation
// to give, an empty array.
bool command(CommandHost&, kv::Store*, const Args&, std::string& out) { return resp::array(out, 0), false; }

constexpr std::array<Command, 16> kCommands{{
    {"SET", -3, true, set, {1, 1, 1}},    {"GET", 2, true, get, {1, 1, 1}},
    {"DEL", -2, true, del, {1, -1, 1}},   {"MSET", -3, true, mset, {1, -1, 2}},
    {"MGET", -2, true, mget, {1, -1, 1}}, {"EXISTS", -2, true, exists, {1, -1, 1}},
    {"DBSIZE", 1, true, dbsize},  {"PING", -1, false, ping},     {"ECHO", 2, false, echo},
    {"SELECT", 2, false, select}, {"INFO", -1, false, info},     {"HELLO", -1, false, hello},
    {"CLIENT", -2, false, client}, {"CONFIG", -2, false, config}, {"COMMAND", -1, false, command},
    {"QUIT", 1, false, [](CommandHost&, kv::Store*, const Args&, std::string& out) { return resp::simple(out, "OK"), false; }},
}};

bool arity_ok(int arity, std::size_t n) {
    return arity > 0 ? n == static_cast<std::size_t>(arity) : n >= static_cast<std::size_t>(-arity);
}

const Command* find(const std::string& name) {
    const auto u = upper(name);
    const auto c = std::find_if(kCommands.begin(), kCommands.end(), [&](const Command& k) { return k.name == u; });
    return c == kCommands.end() ? nullptr : &*c;
}

void unknown_command(const Args& a, std::string& out) {
    std::string e = "ERR unknown command '" + a[0] + "', with args beginning with: ";
    for (std::size_t i = 1; i < a.size() && i < 4; ++i) e += "'" + a[i].substr(0, 64) + "' ";
    resp::error(out, e);
}

} // namespace

KeyPositions key_positions(const Args& args) {
    const Command* c = args.empty() ? nullptr : find(args[0]);
    if (c == nullptr || c->keys.step == 0 || !arity_ok(c->arity, args.size())) return {};
    const auto first = static_cast<std::size_t>(c->keys.first), step = static_cast<std::size_t>(c->keys.step);
    // -1: up to the last argument, on the step (MSET's last value is no key).
    const auto last = c->keys.last < 0 ? first + (args.size() - 1 - first) / step * step
                                       : static_cast<std::size_t>(c->keys.last);
    return {first, last, step};
}

void prefetch(CommandHost& host, const Args& args) {
    const auto k = key_positions(args);
    kv::Store* store = k.step == 0 ? nullptr : host.store();
    if (store == nullptr) return;
    for (auto i = k.first; i <= k.last; i += k.step) store->prefetch(args[i]);
}

bool execute(CommandHost& host, const Args& args, std::string& out) {
    const Command* c = find(args[0]);
    if (c == nullptr) return unknown_command(args, out), false;
    if (!arity_ok(c->arity, args.size()))
        return resp::error(out, "ERR wrong number of arguments for '" + lower(args[0]) + "' command"), false;
    kv::Store* store = c->data ? host.store() : nullptr;
    if (c->data && store == nullptr) return host.not_leader(out), false;
    return c->run(host, store, args, out);
}

} // namespace kvnode
