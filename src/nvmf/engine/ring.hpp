#pragma once
// This thread's io_uring for the block backends. A ring is not thread-safe
// and execute() runs on every connection's thread at once, so each thread
// gets its own, created on first use and torn down when the thread exits
// (a thread_local). Operations are synchronous: one SQE, wait for its CQE;
// run_many() puts several in flight at once and waits for them all.
// Where io_uring cannot be set up (a seccomp profile refusing
// io_uring_setup), the same calls fall back to pread/pwrite/fdatasync.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

struct io_uring;

namespace rpm::nvmf::detail {

/// One read or write of ThreadRing::run_many.
struct RingOp {
    bool write = false;
    int fd = -1;
    std::byte* buf = nullptr;
    std::size_t len = 0;
    std::uint64_t offset = 0;
    bool dsync = false;  ///< writes: RWF_DSYNC
    int result = 0;      ///< out: bytes transferred (possibly short), or -errno
};

class ThreadRing {
public:
    /// The calling thread's ring.
    static ThreadRing& local();

    ThreadRing();
    ~ThreadRing();
    ThreadRing(const ThreadRing&) = delete;
    ThreadRing& operator=(const ThreadRing&) = delete;

    /// Whether io_uring is in use (false: the synchronous fallback).
    [[nodiscard]] bool uring() const noexcept { return ring_ != nullptr; }
    /// Why io_uring is not in use; empty when it is.
    [[nodiscard]] const std::string& failure() const noexcept { return failure_; }

    /// RETURN VALUE: bytes transferred (possibly short), or -errno.
    int read(int fd, std::span<std::byte> buf, std::uint64_t offset);
    /// `dsync`: RWF_DSYNC, the write is durable when it completes (FUA).
    int write(int fd, std::span<const std::byte> buf, std::uint64_t offset, bool dsync);
    /// RETURN VALUE: 0 or -errno.
    int fdatasync(int fd);
    /// Every op in flight together (as many at once as the ring holds),
    /// back when all are done; each op's result set. Without io_uring, one
    /// after another.
    void run_many(std::span<RingOp> ops);

    /// This thread's 4096-aligned scratch memory of at least `n` bytes
    /// (kept for the next call): bounce buffers and write-zeroes source.
    std::span<std::byte> scratch(std::size_t n);

private:
    int complete();

    io_uring* ring_ = nullptr;
    std::string failure_;
    std::byte* scratch_ = nullptr;
    std::size_t scratch_size_ = 0;
};

} // namespace rpm::nvmf::detail
