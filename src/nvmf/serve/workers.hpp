#pragma once
// Serving connections without a thread each. A connection waiting for its
// next PDU sits in one epoll set (EPOLLONESHOT); when bytes arrive a worker
// thread takes it and serves it until it is idle again at a PDU boundary,
// then hands it back to the set. A connection being served holds its
// worker for as long as it blocks (a command in a slow backend, a host that
// dribbles a PDU or never sends the data of an R2T): it delays only
// itself, because workers are made on demand, one always waiting while
// any connection could need it, and idle workers beyond a few exit. So the
// threads follow the connections being served, not those open: hundreds
// of idle queues cost a descriptor and a few KiB each.
//
// Fabric-neutral: a FabricQueue (fabric.hpp) gives a pollable descriptor
// (NVMe/TCP: its socket; NVMe/RDMA: its completion channel's) and a serve
// step.

#include <cstddef>
#include <list>
#include <mutex>
#include <system_error>
#include <thread>

namespace rpm::nvmf::target {

class FabricQueue;

class Workers {
public:
    /// At most `max_threads` workers at once (more than connections can
    /// never be busy). ERRORS (error()): epoll_create1's or eventfd's errno.
    explicit Workers(std::size_t max_threads);
    /// stop()s.
    ~Workers();
    Workers(const Workers&) = delete;
    Workers& operator=(const Workers&) = delete;

    [[nodiscard]] std::error_code error() const noexcept { return error_; }
    /// Serve `c` once it has bytes (or its peer closed). Thread-safe.
    std::error_code add(FabricQueue* c);
    /// Ends every worker once its current serve() returns (connections that
    /// are still in the set are neither served nor retired) and joins them.
    void stop();
    /// Worker threads now (for tests and stats).
    [[nodiscard]] std::size_t threads() const;

private:
    struct Worker {
        std::thread thread;
        bool done = false;
    };
    void run(std::list<Worker>::iterator self);
    void spawn_locked();
    void reap_locked();

    int epoll_ = -1;
    int wake_ = -1;
    std::error_code error_;
    std::size_t max_;
    // Held around putting a connection into the set and taken by the
    // worker that gets it out: the kernel orders epoll_ctl before the
    // epoll_wait that reports it, but only a lock tells ThreadSanitizer
    // (and the compiler) that the next worker sees what the last one wrote,
    // and that the last one's epoll_ctl is over before the connection ends.
    std::mutex arm_mu_;
    mutable std::mutex mu_;
    std::list<Worker> workers_;
    std::size_t live_ = 0;  ///< workers not done
    std::size_t idle_ = 0;  ///< live workers waiting in epoll_wait
    bool stopping_ = false;
};

} // namespace rpm::nvmf::target
