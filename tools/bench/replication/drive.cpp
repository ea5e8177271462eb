// The measured loops of --replication: one blocking commit at a time from
// the benchmark thread, timed from the first write to the commit's return.
// The replicated and the single-replica loop have the same shape, so their
// ratio is the cost of replication, not of a different driver.
#include "replication.hpp"

#include <rpm/replicated_log.hpp>

#include <array>
#include <condition_variable>
#include <mutex>
#include <optional>

namespace rpmbench {
namespace {

Clock::time_point deadline_of(Clock::time_point start, const StopRule& stop) {
    return start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(stop.seconds));
}

// The loop shared by both: `one(k)` does commit number k (a persist or a
// batch) and returns its error, if any; the first error ends the slice.
template <typename Commit>
Measurement drive(const SliceSpec& spec, const StopRule& stop, Progress& progress, const std::string& label,
                  Commit&& one) {
    Measurement m;
    OpCounter counter;
    OpBudget budget(stop.ops);
    const auto start = Clock::now();
    const auto deadline = deadline_of(start, stop);
    auto last = start;
    const double cpu_start = process_cpu();
    progress.begin(label, [&counter] { return counter.done.load(std::memory_order_relaxed); });
    for (std::uint64_t k = 0;; ++k) {
        if (interrupted().load(std::memory_order_relaxed) || Clock::now() >= deadline || !budget.claim()) break;
        const auto issued = Clock::now();
        const std::string error = one(k);
        last = Clock::now();
        if (!error.empty()) {
            ++m.errors;
            m.first_error = error;
            break;
        }
        m.latency.record(last - issued);
        ++m.ops;
        counter.done.store(m.ops, std::memory_order_relaxed);
    }
    m.cpu_seconds = process_cpu() - cpu_start;
    progress.end();
    m.bytes = m.ops * spec.writes * spec.size;
    m.seconds = std::chrono::duration<double>(last - start).count();
    return m;
}

std::uint64_t slot_offset(const SliceSpec& spec, std::uint64_t n) { return spec.base + (n % spec.slots) * spec.stride; }

// Completion count for the single batch's asynchronous writes.
struct Pending {
    std::mutex mu;
    std::condition_variable cv;
    unsigned left = 0;
    rpm::Result<void> first;  ///< success until a write fails

    void reset(unsigned n) {
        std::lock_guard lock(mu);
        left = n;
        first = {};
    }
    void done(rpm::Result<void> r) {
        std::lock_guard lock(mu);
        if (!r.has_value() && first.has_value()) first = std::move(r);
        if (--left == 0) cv.notify_all();
    }
    rpm::Result<void> wait() {
        std::unique_lock lock(mu);
        cv.wait(lock, [this] { return left == 0; });
        return first;
    }
};

} // namespace

// The log test's log: the whole data area. When it is full it is formatted
// again (its header zeroed, then ReplicatedLog::open): two more commits in
// one timed append out of thousands.
class LogAppender {
public:
    explicit LogAppender(rpm::Replicator& rep) : rep_(rep) {}
    std::string append(std::span<const std::byte> payload) {
        if (!log_) {
            if (auto e = open(); !e.empty()) return e;
        }
        auto a = log_->append_durable(payload);
        if (!a && a.error() == rpm::errc::bad_size && log_->records() > 0) {
            const std::array<std::byte, rpm::ReplicatedLog::kHeaderSize> zero{};
            if (auto z = rep_.persist(0, zero); !z) return "log reset: " + z.error().message();
            log_.reset();
            if (auto e = open(); !e.empty()) return e;
            a = log_->append_durable(payload);
        }
        return a ? std::string() : "append_durable: " + a.error().message();
    }

private:
    std::string open() {
        auto l = rpm::ReplicatedLog::open(rep_, 0, rep_.size() / 8 * 8);
        if (!l) return "ReplicatedLog::open: " + l.error().message();
        log_.emplace(std::move(*l));
        return {};
    }
    rpm::Replicator& rep_;
    std::optional<rpm::ReplicatedLog> log_;
};

Measurement replicated_slice(rpm::Replicator& rep, const SliceSpec& spec, const StopRule& stop, Progress& progress,
                             const std::string& label) {
    std::vector<std::byte> buf(spec.size, std::byte{0x5a});
    if (spec.log) {
        LogAppender log(rep);
        return drive(spec, stop, progress, label, [&](std::uint64_t k) -> std::string {
            buf[0] = static_cast<std::byte>(k);
            return log.append(buf);
        });
    }
    return drive(spec, stop, progress, label, [&](std::uint64_t k) -> std::string {
        buf[0] = static_cast<std::byte>(k);
        if (spec.writes == 1) {
            auto r = rep.persist(slot_offset(spec, k), buf);
            return r ? std::string() : "persist: " + r.error().message();
        }
        for (unsigned w = 0; w < spec.writes; ++w)
            if (auto r = rep.write(slot_offset(spec, w), buf); !r) return "write: " + r.error().message();
        auto c = rep.commit();
        return c ? std::string() : "commit: " + c.error().message();
    });
}

Measurement single_slice(rpm::RemoteRegion& region, const SliceSpec& spec, const StopRule& stop, Progress& progress,
                         const std::string& label) {
    std::vector<std::byte> buf(spec.size, std::byte{0x5a});
    Pending pending;
    return drive(spec, stop, progress, label, [&](std::uint64_t k) -> std::string {
        buf[0] = static_cast<std::byte>(k);
        if (spec.writes == 1) {
            const rpm::Result<void> r = region.persist(slot_offset(spec, k), buf);
            return r.has_value() ? std::string() : "persist: " + r.error().message();
        }
        // The batch shape of a commit: the writes in flight together, then
        // one flush over the range they cover (buf is not changed meanwhile).
        pending.reset(spec.writes);
        for (unsigned w = 0; w < spec.writes; ++w)
            region.write(slot_offset(spec, w), buf, [&pending](rpm::Result<void> r) { pending.done(std::move(r)); });
        const rpm::Result<void> flushed = region.flush(spec.base, (spec.writes - 1) * spec.stride + spec.size);
        const rpm::Result<void> written = pending.wait();
        if (!written.has_value()) return "write: " + written.error().message();
        return flushed.has_value() ? std::string() : "flush: " + flushed.error().message();
    });
}

std::string_view to_string(RepTest t) noexcept {
    return t == RepTest::persist ? "persist" : t == RepTest::log ? "log" : "batch";
}

} // namespace rpmbench
