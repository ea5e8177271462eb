// load, verify, dump and offline: the commands the fault test drives.
//
// load puts keys k<RUN>-<I> whose value follows from the key, and logs a key
// in the acked file only once its put returned success (committed per the
// durability). verify checks every logged key, so after any crash or
// failover "every acknowledged put is there" is one command.
#include "commands.hpp"

#include <rpm/pmem.hpp>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <thread>
#include <unistd.h>

namespace kvcli {

std::string load_key(std::uint64_t run, std::uint64_t i) {
    return "k" + std::to_string(run) + "-" + std::to_string(i);
}

// 32..79 bytes: values span cache lines and differ from run to run.
std::string load_value(std::uint64_t run, std::uint64_t i) {
    std::string v = "v" + std::to_string(run) + "-" + std::to_string(i) + "-";
    const std::uint64_t length = 32 + i % 48;
    for (std::uint64_t j = 0; v.size() < length; ++j) v += static_cast<char>('a' + (i * 7 + j * 13 + run) % 26);
    return v;
}

// "k<RUN>-<I>" -> the value load put there; nullopt for anything else.
std::optional<std::string> expected_value(std::string_view key) {
    std::uint64_t run = 0, i = 0;
    const char* end = key.data() + key.size();
    if (key.size() < 4 || key[0] != 'k') return std::nullopt;
    auto [p, ec] = std::from_chars(key.data() + 1, end, run);
    if (ec != std::errc() || p == end || *p != '-') return std::nullopt;
    auto [q, ec2] = std::from_chars(p + 1, end, i);
    if (ec2 != std::errc() || q != end) return std::nullopt;
    return load_value(run, i);
}

// One write(2) of a whole line to an O_APPEND file: a process killed at any
// point leaves whole lines (the test kills processes, not the machine).
bool log_acked(int fd, const std::string& key) {
    const std::string line = key + "\n";
    return ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
}

namespace {

// load --timeline: per acknowledged put, "<steady-clock ns at the ack>
// <latency ns>\n". A write(2) per put would double the load's system calls
// on a loopback put of tens of microseconds, so lines are kept and written
// in blocks; a block goes out once it holds kBlockLines lines or kBlockAge
// has passed since the last one, so a reader polling the file sees it at
// most that far behind (a killed load loses only that much), and the
// memory held is bounded.
class Timeline {
public:
    using Clock = std::chrono::steady_clock;
    static constexpr std::size_t kBlockLines = 4096;
    static constexpr auto kBlockAge = std::chrono::milliseconds(100);

    Timeline() = default;
    Timeline(const Timeline&) = delete;
    Timeline& operator=(const Timeline&) = delete;
    ~Timeline() {
        if (fd_ >= 0) ::close(fd_);
    }

    /// Appends to `path` (created if missing); false with errno set.
    bool open(const std::string& path) {
        fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        last_write_ = Clock::now();
        return fd_ >= 0;
    }
    /// False when a block could not be written (errno set).
    bool add(Clock::time_point ack, Clock::duration latency) {
        if (fd_ < 0) return true;
        append(ack.time_since_epoch().count());
        buf_ += ' ';
        append(latency.count());
        buf_ += '\n';
        ++lines_;
        return lines_ < kBlockLines && ack - last_write_ < kBlockAge ? true : flush(ack);
    }

    bool flush(Clock::time_point now = Clock::now()) {
        last_write_ = now;
        lines_ = 0;
        for (std::size_t done = 0; done < buf_.size();) {
            const auto n = ::write(fd_, buf_.data() + done, buf_.size() - done);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return false;
            done += static_cast<std::size_t>(n);
        }
        buf_.clear();
        return true;
    }

private:
    void append(std::int64_t v) {
        char digits[24];
        auto [end, ec] = std::to_chars(digits, digits + sizeof digits, v);
        buf_.append(digits, end);
    }

    int fd_ = -1;
    std::string buf_;
    std::size_t lines_ = 0;
    Clock::time_point last_write_;
};

} // namespace

int verify_with(const std::string& acked, const Lookup& lookup) {
    std::ifstream in(acked);
    if (!in) return fail(acked + ": " + std::strerror(errno), 2);
    std::uint64_t checked = 0, lost = 0, line_no = 0;
    for (std::string key; std::getline(in, key);) {
        ++line_no;
        if (key.empty()) continue;
        auto want = expected_value(key);
        if (!want) return fail(acked + " line " + std::to_string(line_no) + ": '" + key + "' is not a key load writes", 2);
        ++checked;
        auto got = lookup(key);
        if (got == want) continue;
        if (lost++ < 5)
            std::cerr << "verify: acknowledged put of " << key << (got ? " has a wrong value" : " is missing") << "\n";
    }
    std::cout << "verify: checked " << checked << ", lost " << lost << "\n";
    return lost == 0 ? 0 : 1;
}

namespace {

// After replica events: what each resync copied, and each replica's
// health when it became degraded or healthy, for the test logs.
void print_resyncs(const kv::Store& s, std::vector<std::uint64_t>& seen, std::vector<bool>& degraded) {
    const auto replicas = s.stats().replicas;
    seen.resize(replicas.size());
    degraded.resize(replicas.size());
    for (std::size_t i = 0; i < replicas.size(); ++i) {
        const auto& r = replicas[i];
        if (r.resyncs == seen[i] && r.degraded == degraded[i]) continue;
        seen[i] = r.resyncs;
        degraded[i] = r.degraded;
        std::cerr << "load: replica " << i << " " << r.uri << ": " << rpm::to_string(r.state) << ", frontier "
                  << r.frontier << ", " << r.failures << " failures, " << r.resyncs << " resyncs, "
                  << r.bytes_resynced << " bytes resynced, " << r.bytes_missed << " bytes missed, " << health(r) << "\n";
    }
}

} // namespace

int load(kv::Store& s, const LoadArgs& a) {
    const int fd = ::open(a.acked.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return fail(a.acked + ": " + std::strerror(errno), 2);
    Timeline timeline;
    if (!a.timeline.empty() && !timeline.open(a.timeline))
        return ::close(fd), fail("--timeline " + a.timeline + ": " + std::strerror(errno), 2);
    auto timeline_failed = [&] {
        const int e = errno;
        return ::close(fd), fail("--timeline " + a.timeline + ": " + std::strerror(e), 3);
    };
    const bool planted = a.fault == "ack-before-quorum";
    std::uint64_t acked = 0, failed = 0;
    std::vector<std::uint64_t> resyncs;
    std::vector<bool> degraded;
    unsigned events = events_seen();
    print_resyncs(s, resyncs, degraded);
    for (std::uint64_t i = 0; i < a.count; ++i) {
        if (events != events_seen()) events = events_seen(), print_resyncs(s, resyncs, degraded);
        const auto key = load_key(a.run, i);
        const auto value = load_value(a.run, i);
        rpm::Result<void> r;
        bool logged = true;
        const auto start = Timeline::Clock::now();
        std::optional<Timeline::Clock::time_point> acked_at;  // when the put returned, if acknowledged
        if (planted) {
            // The bug: acknowledged once the record is in the local copy,
            // before the commit, which cannot take it back when it fails.
            r = s.put_uncommitted(key, value);
            if (r && (logged = log_acked(fd, key))) {
                ++acked;
                acked_at = Timeline::Clock::now();
                if (auto c = s.commit(); !c) r = c.error();
            }
        } else {
            r = s.put(key, value);
            if (r) acked_at = Timeline::Clock::now();
            if (r && (logged = log_acked(fd, key))) ++acked;
        }
        if (!logged) return ::close(fd), fail(a.acked + ": " + std::strerror(errno), 3);
        if (acked_at && !timeline.add(*acked_at, *acked_at - start)) return timeline_failed();
        if (!r && r.error() == rpm::errc::quorum_lost) {
            // Not acknowledged (but by the bug); the replicas may be back for the next key.
            // What was acknowledged before goes out now, not after the outage.
            if (!timeline.flush()) return timeline_failed();
            ++failed;
            std::cerr << "load: put " << key << ": " << r.error().message() << "\n";
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            continue;
        }
        if (!r) return timeline.flush(), ::close(fd), fail("load: put " + key + ": " + r.error().message(), 3);
    }
    if (!timeline.flush()) return timeline_failed();
    ::close(fd);
    std::cout << "load: run " << a.run << ": " << acked << " puts acknowledged, " << failed << " failed (quorum lost)\n";
    return 0;
}

int verify(const kv::Store& s, const std::string& acked) {
    return verify_with(acked, [&s](const std::string& key) { return s.get(key); });
}

int dump(const kv::Store& s) {
    std::map<std::string, std::string> sorted;
    s.for_each_live([&](std::string_view k, std::string_view v) { sorted.emplace(k, v); });
    for (const auto& [k, v] : sorted) std::cout << k << "=" << v << "\n";
    return 0;
}

int offline(const std::string& region, const std::optional<std::string>& acked) {
    // Mapped, never written: this reads what a member holds, as it is.
    auto r = rpm::pmem::Region::open(region);
    if (!r) return fail(region + ": " + r.error().message(), 2);
    if (r->size() <= rpm::kReplicaHeaderSize) return fail(region + ": too small to hold a replicated store", 2);
    auto map = kv::scan_region(r->bytes().subspan(rpm::kReplicaHeaderSize));
    if (!map) return fail(region + ": " + map.error().message(), 3);
    if (!acked) {
        for (const auto& [k, v] : *map) std::cout << k << "=" << v << "\n";
        return 0;
    }
    return verify_with(*acked, [&map](const std::string& key) -> std::optional<std::string> {
        auto it = map->find(key);
        if (it == map->end()) return std::nullopt;
        return it->second;
    });
}

} // namespace kvcli
