#include "client/io_group.hpp"

#include "transport/tcp/event_loop.hpp"

#include "transport/tcp/stream.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

namespace rpm {

IoGroup::IoGroup() : loop_(std::make_unique<tcp::EventLoop>()) {
    if (loop_->error()) return;
    // Without it a group cannot be driven (try_drive says no); it still works.
    wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    thread_ = std::thread([this] {
        tcp::block_sigpipe();
        loop_->run();
    });
}

IoGroup::~IoGroup() {
    loop_->stop();
    if (thread_.joinable()) {
        // Never from the group's own thread: TcpClient hands its last
        // reference to a helper thread then (client.cpp).
        thread_.join();
    }
    if (wake_fd_ >= 0) ::close(wake_fd_);
}

std::shared_ptr<IoGroup> make_io_group() { return std::make_shared<IoGroup>(); }

} // namespace rpm
