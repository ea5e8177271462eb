// rpm-kvstore and Redis clients over RESP2, with rpm-kvstore's own codec
// (examples/kvstore/resp.hpp), so both systems are driven by identical
// code: one write per put, replies parsed incrementally as they arrive.
#include "clients.hpp"
#include "resp_client.hpp"

#include "resp.hpp"

namespace kvbench {
namespace {

std::string describe(const resp::Reply& r) {
    switch (r.kind) {
    case resp::Reply::Kind::simple: return "+" + r.text;
    case resp::Reply::Kind::error: return "-" + r.text;
    case resp::Reply::Kind::integer: return ":" + std::to_string(r.integer);
    case resp::Reply::Kind::bulk: return "a bulk string of " + std::to_string(r.text.size()) + " bytes";
    case resp::Reply::Kind::null: return "null";
    case resp::Reply::Kind::array: return "an array of " + std::to_string(r.elements.size());
    }
    return "?";
}

bool is_ok(const resp::Reply& r) { return r.kind == resp::Reply::Kind::simple && r.text == "OK"; }

// rpm-kvstore: SET is durable on a majority when it answers +OK.
class KvstoreClient final : public PutClient {
public:
    explicit KvstoreClient(RespConnection c) : c_(std::move(c)) {}
    std::string put(std::string_view key, std::string_view value) override {
        out_.clear();
        resp::command(out_, {"SET", key, value});
        std::string error;
        resp::Reply r;
        if (!c_.send(out_, error) || !c_.read(r, error)) return error;
        return is_ok(r) ? std::string() : "rpm-kvstore answered SET with " + describe(r);
    }

private:
    RespConnection c_;
    std::string out_;
};

// Redis: SET then WAIT in one write (one round trip, as a pipelining
// client would do it); durable once WAIT counts the replicas asked for.
class RedisClient final : public PutClient {
public:
    RedisClient(RespConnection c, int replicas) : c_(std::move(c)), replicas_(replicas), n_(std::to_string(replicas)) {}
    std::string put(std::string_view key, std::string_view value) override {
        out_.clear();
        resp::command(out_, {"SET", key, value});
        resp::command(out_, {"WAIT", n_, "1000"});
        std::string error;
        resp::Reply set, wait;
        if (!c_.send(out_, error) || !c_.read(set, error) || !c_.read(wait, error)) return error;
        if (!is_ok(set)) return "redis answered SET with " + describe(set);
        if (wait.kind != resp::Reply::Kind::integer) return "redis answered WAIT with " + describe(wait);
        if (wait.integer < replicas_)
            return "replicas did not ack: WAIT " + n_ + " 1000 returned " + std::to_string(wait.integer);
        return {};
    }

private:
    RespConnection c_;
    int replicas_;
    std::string n_;
    std::string out_;
};

// --op ping: a bare PING answered +PONG. No put can be acknowledged in
// less than this round trip to the same server through the same code.
class PingClient final : public PutClient {
public:
    explicit PingClient(RespConnection c) : c_(std::move(c)) { resp::command(out_, {"PING"}); }
    std::string put(std::string_view, std::string_view) override {
        std::string error;
        resp::Reply r;
        if (!c_.send(out_, error) || !c_.read(r, error)) return error;
        return r.kind == resp::Reply::Kind::simple && r.text == "PONG" ? std::string() : "PING answered " + describe(r);
    }

private:
    RespConnection c_;
    std::string out_;
};

} // namespace

bool RespConnection::read(resp::Reply& r, std::string& error) {
    for (;;) {
        const auto p = resp::parse_reply(std::string_view(in_).substr(used_), r);
        if (p.status == resp::Status::done) {
            used_ += p.consumed;
            if (used_ == in_.size()) in_.clear(), used_ = 0;  // the usual case: nothing pipelined behind
            return true;
        }
        if (p.status == resp::Status::error) return error = "malformed reply: " + p.error, false;
        if (!socket_.recv_some(in_, error)) return false;
    }
}

std::unique_ptr<PutClient> connect_resp(const Options& o, const Address& at, std::string& error) {
    const auto timeout = std::chrono::milliseconds(static_cast<long>(o.reply_timeout * 1000));
    auto s = Socket::connect(at, timeout, error);
    if (!s.valid()) return nullptr;
    RespConnection c(std::move(s));
    if (o.op == "ping") return std::make_unique<PingClient>(std::move(c));
    if (o.target == "redis") return std::make_unique<RedisClient>(std::move(c), o.wait_replicas);
    return std::make_unique<KvstoreClient>(std::move(c));
}

std::string probe_resp(const Options& o, const Address& at) {
    std::string error;
    auto s = Socket::connect(at, std::chrono::milliseconds(static_cast<long>(o.reply_timeout * 1000)), error);
    if (!s.valid()) return error;
    RespConnection c(std::move(s));
    std::string out;
    resp::command(out, {"PING"});
    resp::Reply r;
    return c.send(out, error) && c.read(r, error) ? std::string() : error;
}

std::string try_leader(const Options& o, const Address& at) {
    std::string error;
    auto c = connect_resp(o, at, error);
    if (!c) return error;
    return c->put("kvb-leader-probe", "x");
}

} // namespace kvbench
