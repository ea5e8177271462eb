// The closed loop: every completion records its latency and, on the
// connection's I/O thread, issues the slot's next operation. Issuing from
// the callback keeps the benchmark thread out of the hot path, so what is
// measured is the library and the wire, not a thread hand-off of ours.
#include "rpm_driver.hpp"

#include <condition_variable>
#include <mutex>
#include <thread>

namespace rpmbench {

std::string_view to_string(Op op) noexcept {
    switch (op) {
    case Op::write: return "write";
    case Op::read: return "read";
    case Op::persist: return "persist";
    case Op::atomic_write: return "atomic_write";
    }
    return "?";
}

std::optional<Op> parse_op(std::string_view s) noexcept {
    for (Op op : {Op::write, Op::read, Op::persist, Op::atomic_write})
        if (s == to_string(op)) return op;
    return std::nullopt;
}

namespace {

struct Slot {
    std::span<std::byte> buf;  ///< this slot's part of the worker's arena
    std::uint64_t offset = 0;
    Clock::time_point issued;
};

// Distinct slots for every (thread, slot) pair while the region is large
// enough; beyond that they wrap (still in range, 8-byte aligned).
std::uint64_t slot_offset(std::uint64_t index, std::size_t size, std::uint64_t region_size) {
    const std::uint64_t stride = (std::max<std::uint64_t>(size, 8) + 63) / 64 * 64;
    const std::uint64_t span = region_size - size + 1;
    return (index * stride) % span / 8 * 8;
}

class Worker {
public:
    Worker(rpm::RemoteRegion region, const OpSpec& spec, unsigned thread, OpBudget& budget,
           const Clock::time_point& deadline)
        : region_(std::move(region)), spec_(spec), budget_(budget), deadline_(deadline) {
        slots_.resize(spec.api == Api::sync ? 1 : spec.qd);
        // One arena for every slot, so one registration covers them all.
        arena_.assign(slots_.size() * spec.size, std::byte{0x5a});
        for (std::size_t k = 0; k < slots_.size(); ++k) {
            auto& s = slots_[k];
            s.buf = std::span(arena_).subspan(k * spec.size, spec.size);
            s.offset = slot_offset(std::uint64_t{thread} * slots_.size() + k, spec.size, region_.size());
        }
    }
    /// Register the arena with `conn` (spec.registered). RETURN VALUE: "" or the error.
    std::string register_with(rpm::Connection& conn) {
        auto m = conn.register_memory(arena_);
        if (!m) return "register_memory: " + m.error().message();
        memory_ = std::move(*m);
        return {};
    }

    void run() { spec_.api == Api::sync ? run_sync() : run_callbacks(); }

    Histogram latency;
    std::uint64_t ops = 0, errors = 0;
    std::string first_error;
    Clock::time_point last_done{};
    OpCounter counter;

private:
    bool should_stop(Clock::time_point now) {
        return failed_.load(std::memory_order_relaxed) || interrupted().load(std::memory_order_relaxed) ||
               now >= deadline_ || !budget_.claim();
    }

    void completed(Slot& s, const rpm::Result<void>& r, Clock::time_point now) {
        std::lock_guard lock(mu_);
        last_done = now;
        if (!r.has_value()) {
            if (errors++ == 0) first_error = std::string(to_string(spec_.op)) + ": " + r.error().message();
            failed_ = true;  // the connection is likely gone; stop this thread's loop
            return;
        }
        latency.record(now - s.issued);
        ++ops;
        counter.done.store(ops, std::memory_order_relaxed);
    }

    void start(Slot& s, rpm::Callback done) {
        const std::uint64_t off = s.offset;
        switch (spec_.op) {
        case Op::write: return region_.write(off, s.buf, std::move(done));
        case Op::read: return region_.read(off, s.buf, std::move(done));
        case Op::persist: return region_.persist(off, s.buf, std::move(done));
        case Op::atomic_write: return region_.atomic_write(off, next_value(), std::move(done));
        }
    }

    rpm::Result<void> start_sync(Slot& s) {
        switch (spec_.op) {
        case Op::write: return region_.write(s.offset, s.buf);
        case Op::read: return region_.read(s.offset, s.buf);
        case Op::persist: return region_.persist(s.offset, s.buf);
        case Op::atomic_write: return region_.atomic_write(s.offset, next_value());
        }
        return {};
    }

    // Slots start from this thread while earlier ones already complete on
    // the I/O thread, so the value counter is shared by both.
    std::uint64_t next_value() noexcept { return value_.fetch_add(1, std::memory_order_relaxed) + 1; }

    // Issue the slot's next operation, or retire the slot.
    void kick(Slot& s, Clock::time_point now) {
        if (should_stop(now)) return retire();
        s.issued = Clock::now();
        start(s, [this, &s](rpm::Result<void> r) {
            const auto t = Clock::now();
            completed(s, r, t);
            kick(s, t);
        });
    }

    void retire() {
        // Notify under the lock: once inflight_ reaches 0 the waiting thread
        // may destroy this Worker as soon as it can take the lock.
        std::lock_guard lock(mu_);
        if (--inflight_ == 0) cv_.notify_all();
    }

    void run_callbacks() {
        inflight_ = static_cast<unsigned>(slots_.size());  // before any completion can retire one
        for (auto& s : slots_) kick(s, Clock::now());
        std::unique_lock lock(mu_);
        cv_.wait(lock, [this] { return inflight_ == 0; });
    }

    void run_sync() {
        // Two clock reads per operation, as rpm-floor's: where a read is a
        // system call (the lab VM), a third would be charged to rpm.
        auto& s = slots_.front();
        auto now = Clock::now();
        while (!should_stop(now)) {
            s.issued = Clock::now();
            const rpm::Result<void> r = start_sync(s);
            now = Clock::now();
            completed(s, r, now);
        }
    }

    rpm::RemoteRegion region_;
    OpSpec spec_;
    OpBudget& budget_;
    const Clock::time_point& deadline_;  ///< set by run_rpm once every Worker is built
    std::vector<Slot> slots_;
    std::atomic<std::uint64_t> value_{0};
    std::mutex mu_;
    std::condition_variable cv_;
    std::vector<std::byte> arena_;
    rpm::LocalMemory memory_;
    unsigned inflight_ = 0;
    std::atomic<bool> failed_{false};
};

} // namespace

Measurement run_rpm(const std::vector<rpm::RemoteRegion>& regions, const OpSpec& spec, const StopRule& stop,
                    Progress& progress, const std::string& label, std::span<rpm::Connection> conns) {
    OpBudget budget(stop.ops);
    Clock::time_point deadline{};
    std::vector<std::unique_ptr<Worker>> workers;
    for (unsigned t = 0; t < regions.size(); ++t) {
        workers.push_back(std::make_unique<Worker>(regions[t], spec, t, budget, deadline));
        if (!spec.registered) continue;
        std::string err = t < conns.size() ? workers.back()->register_with(conns[t]) : "no connection to register with";
        if (!err.empty()) {
            Measurement m;
            m.errors = 1;
            m.first_error = std::move(err);
            return m;
        }
    }
    // The clock starts once the buffers are allocated: a 1 MiB x qd
    // allocation is not part of the test.
    const auto start = Clock::now();
    deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(stop.seconds));
    progress.begin(label, [&workers] {
        std::uint64_t n = 0;
        for (const auto& w : workers) n += w->counter.done.load(std::memory_order_relaxed);
        return n;
    });
    const double cpu_start = process_cpu();
    std::vector<std::thread> threads;
    for (auto& w : workers) threads.emplace_back([&w] { w->run(); });
    for (auto& t : threads) t.join();
    const double cpu = process_cpu() - cpu_start;
    progress.end();

    Measurement m;
    Clock::time_point end = start;
    for (const auto& w : workers) {
        m.latency.merge(w->latency);
        m.ops += w->ops;
        m.errors += w->errors;
        if (m.first_error.empty()) m.first_error = w->first_error;
        end = std::max(end, w->last_done);
    }
    m.bytes = m.ops * spec.size;
    m.seconds = std::chrono::duration<double>(end - start).count();
    m.cpu_seconds = cpu;
    return m;
}

} // namespace rpmbench
