#include "transport/rdma/handshake.hpp"
#include "transport/rdma/frames.hpp"

namespace rpm::rdma {

Result<proto::Auth> Handshake::on_hello(std::span<const std::byte> body, const ClientOptions& opts,
                                        const std::string& where, bool& failed) {
    failed = true;
    if (stage_ != Stage::awaiting_hello) return Error(errc::io_error, where + ": a second Hello");
    auto hello = proto::decode_hello(body);
    if (!hello) return Error(errc::io_error, where + ": bad Hello: " + hello.error().message());
    failed = false;
    auto auth = client::answer_hello(*hello, opts, state_);
    if (auth) stage_ = Stage::awaiting_welcome;
    return auth;
}

Result<void> Handshake::on_welcome(const proto::Header& h, std::span<const std::byte> body,
                                   const ClientOptions& opts) {
    if (h.type != proto::Type::welcome) return unexpected_reply(h, body, "Welcome");
    auto w = proto::decode_welcome(body);
    if (!w) return w.error();
    if (auto ok = client::check_welcome(*w, opts, state_); !ok) return ok;
    profile_ = std::move(w->profile_json);
    stage_ = Stage::ready;
    return {};
}

void Handshake::settle(Result<void> r) {
    if (ready_set_) return;
    ready_set_ = true;
    ready_.set_value(std::move(r));
}

Result<void> Handshake::await(std::chrono::milliseconds timeout, const std::string& where) {
    auto f = ready_.get_future();
    if (f.wait_for(timeout) != std::future_status::ready)
        return Error(errc::io_error, where + ": no handshake from the server within " +
                                         std::to_string(timeout.count()) + " ms");
    return f.get();
}

} // namespace rpm::rdma
