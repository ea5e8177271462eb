#include "records.hpp"

#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <iostream>
#include <thread>
#include <unistd.h>

namespace rpmtool {
namespace {

using Clock = std::chrono::steady_clock;

// Appends "n\n" with one write(2) to an O_APPEND file: a killed client
// leaves whole lines only.
void log_acked(int fd, std::uint64_t n) {
    std::string line = std::to_string(n) + "\n";
    if (::write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) std::perror("acked log");
}

// Persist record n, reconnecting until the deadline (the planted fault
// tries once: it has already told the world the record is safe). False
// when it never went through.
bool persist_with_retry(std::uint64_t n, const StreamOptions& o, const Opener& open,
                        std::optional<rpm::Connection>& conn, std::optional<rpm::RemoteRegion>& region) {
    const double patience = o.fault.empty() ? o.reconnect_seconds : 0;
    const auto deadline = Clock::now() + std::chrono::duration<double>(patience);
    const auto rec = record(n, o.record_size, o.run);
    while (true) {
        if (!region) {
            auto r = open(conn);
            if (r) region.emplace(std::move(*r));
        }
        if (region && (n + 1) * o.record_size > region->size()) {
            std::cerr << "rpm-client: record " << n << " does not fit in the region (" << region->size()
                      << " bytes); lower --count or --record-size\n";
            return false;
        }
        if (region && region->persist(n * o.record_size, rec).has_value()) return true;
        region.reset();
        conn.reset();
        if (Clock::now() >= deadline) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

} // namespace

std::vector<std::byte> record(std::uint64_t n, std::size_t size, std::uint64_t run) {
    std::vector<std::byte> r(size);
    std::memcpy(r.data(), &n, sizeof n);
    const std::uint64_t mix = n * 131 + run * 0x9E3779B97F4A7C15ull;
    for (std::size_t i = sizeof n; i < size; ++i)
        r[i] = static_cast<std::byte>(((mix >> (8 * (i % 8))) + i * 7) & 0xff);
    return r;
}

int stream(const StreamOptions& o, const Opener& open) {
    int fd = ::open(o.log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd < 0) return std::perror(o.log.c_str()), 1;
    std::optional<rpm::Connection> conn;
    std::optional<rpm::RemoteRegion> region;
    std::uint64_t acked = 0;
    for (std::uint64_t n = 0; n < o.count; ++n) {
        const bool planted = o.fault == "log-before-persist";
        if (planted) log_acked(fd, n);  // the bug: acknowledged before durable
        if (!persist_with_retry(n, o, open, conn, region)) {
            if (planted) continue;  // and carries on as if it had worked
            std::cerr << "rpm-client: record " << n << " could not be persisted; stopping\n";
            return ::close(fd), 1;
        }
        if (!planted) log_acked(fd, n);
        ++acked;
    }
    ::close(fd);
    std::cout << "stream: " << acked << " records persisted\n";
    return 0;
}

int verify(const StreamOptions& o, const Opener& open) {
    std::optional<rpm::Connection> conn;
    auto region = open(conn);
    if (!region) return std::cerr << "rpm-client: " << region.error().message() << "\n", 1;
    std::ifstream in(o.log);
    std::uint64_t checked = 0, bad = 0;
    std::vector<std::byte> got(o.record_size);
    for (std::uint64_t n; in >> n; ++checked) {
        const bool read = region->read(n * o.record_size, got).has_value();
        if (!read || got != record(n, o.record_size, o.run)) {
            if (bad++ < 5) std::cerr << "verify: acknowledged record " << n << " is missing or wrong\n";
        }
    }
    std::cout << "verify: " << checked << " acknowledged records checked, " << bad << " lost\n";
    return bad == 0 && checked > 0 ? 0 : 1;
}

} // namespace rpmtool
