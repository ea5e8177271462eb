// TcpClient and the thread driving its IoGroup (client/io_group.hpp): claiming
// the receive side when the driver sends, the driver's reads, and handing
// the socket back to the group's thread.
#include "transport/tcp/client.hpp"

namespace rpm::tcp {

// A plain connection is claimed by the first request the driver sends on
// it. It leaves the group's epoll set (if it was in it) so the group's
// thread is not woken for answers the driver reads; it stays out once the
// drive ends unless answers are still owed (update_watch_locked), so a
// Replicator committing again and again makes no epoll_ctl per commit.
bool TcpClient::claim_locked() {
    if (driver_ || state_ != State::ready || stream_.is_tls() || loop_.in_loop() || !io_->driven_here()) return false;
    driver_ = claimed_ = true;
    driver_thread_ = std::this_thread::get_id();
    if (watched_) loop_.unwatch(stream_.fd());
    watched_ = false;
    return true;
}

pollfd TcpClient::driver_poll() {
    std::lock_guard lock(mu_);
    if (state_ != State::ready || !claimed_) return {-1, 0, 0};
    return {stream_.fd(), static_cast<short>(POLLIN | (outq_.empty() ? 0 : POLLOUT)), 0};
}

void TcpClient::driver_io(short revents, Completions& out) {
    std::lock_guard lock(mu_);
    if (state_ != State::ready || !claimed_) return;
    if (revents & POLLOUT) flush_locked();
    if (revents & (POLLIN | POLLHUP | POLLERR)) read_locked(out);
}

bool TcpClient::owes_answers() {
    std::lock_guard lock(mu_);
    return state_ == State::ready && !pending_.empty();
}

void TcpClient::release_claim() {
    std::lock_guard lock(mu_);
    if (!claimed_) return;
    driver_ = claimed_ = false;
    driver_thread_ = {};
    if (state_ != State::ready) return;
    // Frames are parsed as they arrive, so none is left whole in the
    // reader: what is owed arrives on the socket, which the loop now watches.
    flush_locked();
    update_watch_locked();
}

} // namespace rpm::tcp
