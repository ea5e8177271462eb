#include "transport/tcp/io_group.hpp"

#include "transport/tcp/stream.hpp"

namespace rpm {

IoGroup::IoGroup() {
    if (loop_.error()) return;
    thread_ = std::thread([this] {
        tcp::block_sigpipe();
        loop_.run();
    });
}

IoGroup::~IoGroup() {
    loop_.stop();
    if (thread_.joinable()) {
        // Never from the group's own thread: TcpClient hands its last
        // reference to a helper thread then (tcp_client.cpp).
        thread_.join();
    }
}

std::shared_ptr<IoGroup> make_io_group() { return std::make_shared<IoGroup>(); }

} // namespace rpm
