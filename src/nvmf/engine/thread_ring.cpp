// ThreadRing: one io_uring per thread, synchronous operations on it.
#include "nvmf/engine/ring.hpp"

#include <liburing.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

namespace rpm::nvmf::detail {
namespace {

// run_many() puts up to this many operations in flight at once (a queue's
// commands that arrived together); single operations use one entry.
constexpr unsigned ring_entries = 32;
// A run_many() op's result until its completion arrives.
constexpr int in_flight = -EINPROGRESS;

// liburing maps and unmaps a ring's memory with raw system calls that
// ThreadSanitizer does not intercept, so when a new thread's ring lands at
// the address of an exited thread's ring it reports the kernel's reuse as a
// race. Tell it what the kernel guarantees: a ring's unmapping happens
// before any later ring's mapping. The release comes before the unmapping
// (io_uring_queue_exit), not after: another thread's ring may be mapped at
// the freed address, and acquire, between the two.
#if defined(__SANITIZE_THREAD__)
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
char ring_mappings;
void mapped() { __tsan_acquire(&ring_mappings); }
void unmapped() { __tsan_release(&ring_mappings); }
#else
void mapped() {}
void unmapped() {}
#endif

} // namespace

ThreadRing& ThreadRing::local() {
    thread_local ThreadRing ring;
    return ring;
}

ThreadRing::ThreadRing() {
    auto* r = new (std::nothrow) io_uring{};
    if (r == nullptr) {
        failure_ = "out of memory for the ring";
        return;
    }
    if (int rc = io_uring_queue_init(ring_entries, r, 0); rc < 0) {
        failure_ = std::string("io_uring_queue_init: ") + std::strerror(-rc);
        delete r;
        return;
    }
    mapped();
    ring_ = r;
}

ThreadRing::~ThreadRing() {
    if (ring_ != nullptr) {
        unmapped();
        io_uring_queue_exit(ring_);
        delete ring_;
    }
    if (scratch_ != nullptr) ::munmap(scratch_, scratch_size_);
}

int ThreadRing::complete() {
    int rc;
    do rc = io_uring_submit_and_wait(ring_, 1);
    while (rc == -EINTR);
    if (rc < 0) return rc;
    io_uring_cqe* cqe = nullptr;
    do rc = io_uring_wait_cqe(ring_, &cqe);
    while (rc == -EINTR);
    if (rc < 0) return rc;
    const int res = cqe->res;
    io_uring_cqe_seen(ring_, cqe);
    return res;
}

int ThreadRing::read(int fd, std::span<std::byte> buf, std::uint64_t offset) {
    if (ring_ == nullptr) {
        const auto n = ::pread(fd, buf.data(), buf.size(), static_cast<off_t>(offset));
        return n < 0 ? -errno : static_cast<int>(n);
    }
    io_uring_sqe* sqe = io_uring_get_sqe(ring_);
    if (sqe == nullptr) return -EBUSY;
    io_uring_prep_read(sqe, fd, buf.data(), static_cast<unsigned>(buf.size()), offset);
    return complete();
}

int ThreadRing::write(int fd, std::span<const std::byte> buf, std::uint64_t offset, bool dsync) {
    if (ring_ == nullptr) {
        iovec iov{const_cast<std::byte*>(buf.data()), buf.size()};
        const auto n = ::pwritev2(fd, &iov, 1, static_cast<off_t>(offset), dsync ? RWF_DSYNC : 0);
        return n < 0 ? -errno : static_cast<int>(n);
    }
    io_uring_sqe* sqe = io_uring_get_sqe(ring_);
    if (sqe == nullptr) return -EBUSY;
    io_uring_prep_write(sqe, fd, buf.data(), static_cast<unsigned>(buf.size()), offset);
    if (dsync) sqe->rw_flags = RWF_DSYNC;
    return complete();
}

int ThreadRing::fdatasync(int fd) {
    if (ring_ == nullptr) return ::fdatasync(fd) == 0 ? 0 : -errno;
    io_uring_sqe* sqe = io_uring_get_sqe(ring_);
    if (sqe == nullptr) return -EBUSY;
    io_uring_prep_fsync(sqe, fd, IORING_FSYNC_DATASYNC);
    return complete();
}

void ThreadRing::run_many(std::span<RingOp> ops) {
    if (ring_ == nullptr) {
        for (auto& op : ops)
            op.result = op.write ? write(op.fd, {op.buf, op.len}, op.offset, op.dsync) : read(op.fd, {op.buf, op.len}, op.offset);
        return;
    }
    for (std::size_t first = 0; first < ops.size();) {
        std::size_t n = 0;
        for (; first + n < ops.size(); ++n) {
            io_uring_sqe* sqe = io_uring_get_sqe(ring_);
            if (sqe == nullptr) break;
            auto& op = ops[first + n];
            if (op.write) {
                io_uring_prep_write(sqe, op.fd, op.buf, static_cast<unsigned>(op.len), op.offset);
                if (op.dsync) sqe->rw_flags = RWF_DSYNC;
            } else {
                io_uring_prep_read(sqe, op.fd, op.buf, static_cast<unsigned>(op.len), op.offset);
            }
            io_uring_sqe_set_data64(sqe, first + n);
            op.result = in_flight;
        }
        // Each round submits what is still queued (all n the first time)
        // and takes every completion there is: the ops finish in any order.
        for (std::size_t got = 0; got < n;) {
            const int rc = io_uring_submit_and_wait(ring_, 1);
            if (rc == -EINTR) continue;
            if (rc < 0) {
                for (std::size_t i = 0; i < n; ++i)
                    if (ops[first + i].result == in_flight) ops[first + i].result = rc;
                break;
            }
            unsigned head = 0, seen = 0;
            io_uring_cqe* cqe = nullptr;
            io_uring_for_each_cqe(ring_, head, cqe) {
                ops[io_uring_cqe_get_data64(cqe)].result = cqe->res;
                ++seen;
            }
            io_uring_cq_advance(ring_, seen);
            got += seen;
        }
        first += n;
    }
}

std::span<std::byte> ThreadRing::scratch(std::size_t n) {
    if (n > scratch_size_) {
        if (scratch_ != nullptr) ::munmap(scratch_, scratch_size_);
        scratch_ = nullptr;
        scratch_size_ = 0;
        // mmap: page-aligned (O_DIRECT) and zero-filled.
        void* p = ::mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return {};
        scratch_ = static_cast<std::byte*>(p);
        scratch_size_ = n;
    }
    return {scratch_, n};
}

} // namespace rpm::nvmf::detail
