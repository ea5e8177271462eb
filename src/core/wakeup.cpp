#include "core/wakeup.hpp"

#include <cstdint>
#include <sys/eventfd.h>
#include <unistd.h>

namespace rpm {

Wakeup::Wakeup(bool spinning) noexcept : fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)), spinning_(spinning) {}

Wakeup::~Wakeup() {
    if (fd_ >= 0) ::close(fd_);
}

void Wakeup::notify() noexcept {
    // Seq-cst against the Waiter's "not spinning, then pending?" before it
    // sleeps: either it sees the flag or this sees it may sleep and writes.
    pending_.store(true);
    if (spinning_.load()) return;
    const std::uint64_t one = 1;
    // EAGAIN means the counter is already non-zero: the thread wakes anyway.
    (void)!::write(fd_, &one, sizeof one);
}

void Wakeup::drain() noexcept {
    pending_.store(false);
    std::uint64_t n = 0;
    (void)!::read(fd_, &n, sizeof n);
}

} // namespace rpm
