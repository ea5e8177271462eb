// Opening the primary, and the one-shot commands: put, get, delete, stats, shell.
#include "commands.hpp"

#include <atomic>
#include <cstdio>
#include <iostream>
#include <sstream>

namespace kvcli {
namespace {

std::atomic<unsigned> g_events{0};

// One fputs per event: they come from the replicator's monitor thread,
// and whole lines keep the test logs readable.
void print_event(const rpm::ReplicaEvent& e) {
    if (e.kind == rpm::ReplicaEvent::Kind::joined) return;  // the open summary counts members
    std::string line = "rpm-kvstore: replica " + std::to_string(e.replica) + " " + e.uri + " " +
                       std::string(rpm::to_string(e.kind)) + " at frontier " + std::to_string(e.frontier);
    if (e.error.code()) line += ": " + e.error.message();
    if (!e.detail.empty()) line += ": " + e.detail;
    std::fputs((line + "\n").c_str(), stderr);
    ++g_events;
}

} // namespace

unsigned events_seen() noexcept { return g_events.load(); }

rpm::Result<rpm::ReplicatorOptions> replicator_options(const PrimaryArgs& a) {
    rpm::ReplicatorOptions o;
    o.local_path = a.local;
    auto size = parse_size(a.size);  // checked even when unused: a typo is an error
    if (!size) return rpm::Error(rpm::errc::invalid_argument, "--size " + a.size + " is not like 65536, 64M or 1G");
    std::error_code ec;
    if (!std::filesystem::exists(a.local, ec)) {
        o.create = true;
        o.local_size = *size;
    }
    auto d = rpm::parse_durability(a.durability);
    if (!d) return rpm::Error(rpm::errc::invalid_argument, "--durability " + a.durability + ": " + d.error().message());
    o.durability = *d;
    for (const auto& uri : a.replicas) {
        rpm::ReplicaSpec spec;
        spec.uri = uri;
        spec.region = kRegionName;
        spec.client.client_id = a.id;
        spec.client.secret = a.secret;
        o.replicas.push_back(std::move(spec));
    }
    o.heartbeat_interval = std::chrono::milliseconds(a.heartbeat_ms);
    o.failure_timeout = std::chrono::milliseconds(a.failure_timeout_ms);
    o.reconnect_interval = std::chrono::milliseconds(a.reconnect_ms);
    o.dial_timeout = std::chrono::milliseconds(a.dial_timeout_ms);
    o.degraded_round_trip = std::chrono::milliseconds(a.degraded_ms);
    o.on_event = print_event;
    o.fencing_term = a.fencing_term;
    return o;
}

std::unique_ptr<kv::Store> open_primary(const PrimaryArgs& a, int& status) {
    auto o = replicator_options(a);
    if (!o) return status = fail(o.error().message(), 2), nullptr;
    const bool creating = o->create;
    auto s = kv::Store::open(std::move(*o));
    if (!s) {
        std::error_code ec;
        if (creating) std::filesystem::remove(a.local, ec);  // a blank file would hide a wrong --size next time
        // These are about what was asked for (flags, paths), not the store.
        const auto& e = s.error();
        const bool input = e == rpm::errc::invalid_argument || e == rpm::errc::bad_size ||
                           e == rpm::errc::path_not_found || e == rpm::errc::not_pmem;
        return status = fail(a.local + ": " + s.error().message(), input ? 2 : 3), nullptr;
    }
    const auto st = (*s)->stats();
    const auto& rep = (*s)->report();
    std::cerr << "rpm-kvstore: " << a.local << ": generation " << st.generation << ", " << st.records << " records, "
              << st.live_keys << " live keys, durability " << st.durability << " (" << st.needed << " of "
              << st.members << " members)" << (rep.formatted ? ", new store" : "");
    if (rep.repaired_slots) std::cerr << ", repaired " << rep.repaired_slots << " index slots from the log";
    if (rep.malformed) std::cerr << ", skipped " << rep.malformed << " foreign log records";
    std::cerr << "\n";
    return std::move(*s);
}

int put(kv::Store& s, const std::string& key, const std::string& value) {
    if (auto r = s.put(key, value); !r)
        return fail("put " + key + ": " + r.error().message(), r.error() == rpm::errc::invalid_argument ? 2 : 3);
    std::cout << "ok\n";
    return 0;
}

int get(const kv::Store& s, const std::string& key) {
    if (auto k = kv::check_key(key); !k) return fail(k.error().message(), 2);
    auto v = s.get(key);
    if (!v) return std::cout << "not found\n", 1;
    std::cout << *v << "\n";
    return 0;
}

int remove(kv::Store& s, const std::string& key) {
    auto r = s.remove(key);
    if (!r) return fail("delete " + key + ": " + r.error().message(), 3);
    if (!*r) return std::cout << "not found\n", 1;
    std::cout << "deleted\n";
    return 0;
}

std::string health(const rpm::ReplicaStatus& r) {
    const auto ms = [](std::chrono::microseconds d) {
        char b[32];
        std::snprintf(b, sizeof b, "%.2f ms", static_cast<double>(d.count()) / 1000.0);
        return std::string(b);
    };
    std::string s = r.degraded ? "degraded, " : "";
    if (r.round_trip_samples > 0)
        s += "round trips p50 " + ms(r.round_trip_p50) + " p90 " + ms(r.round_trip_p90) + " max " + ms(r.round_trip_max) +
             ", ";
    return s + "lag " + std::to_string(r.lag) + " LSNs " + std::to_string(r.lag_bytes) + " bytes, degraded " +
           std::to_string(r.degradations) + " times";
}

int stats(const kv::Store& s) {
    const auto st = s.stats();
    std::cout << "records " << st.records << ", live keys " << st.live_keys << " (index of " << st.slots << " slots)\n"
              << "log: " << st.log_used << " of " << st.log_capacity << " bytes used\n"
              << "generation " << st.generation << ", durability " << st.durability << " (" << st.needed << " of " << st.members
              << " members)\n"
              << "lsn frontiers: local " << st.local << ", quorum " << st.quorum << ", all " << st.all << "\n";
    for (std::size_t i = 0; i < st.replicas.size(); ++i) {
        const auto& r = st.replicas[i];
        std::cout << "replica " << i << " " << r.uri << ": " << rpm::to_string(r.state) << ", frontier " << r.frontier
                  << ", failures " << r.failures << ", resyncs " << r.resyncs << " (" << r.bytes_resynced
                  << " bytes), method " << (r.method ? rpm::flush::to_string(*r.method) : "none") << ", "
                  << health(r);
        // Why it left, while it is away: once it is live again the error is
        // history (failures counts it), not something wrong now.
        if (r.state != rpm::ReplicaState::live && r.last_error.code()) std::cout << ", left because: " << r.last_error.message();
        std::cout << "\n";
    }
    return 0;
}

// One command per line; "put KEY VALUE" takes the rest of the line as the
// value, so values may hold spaces. "not found" is an answer; the exit
// status is the worst failure (2 bad input, 3 the store failed), else 0.
int shell(kv::Store& s) {
    int worst = 0;
    for (std::string line; std::getline(std::cin, line);) {
        std::istringstream in(line);
        std::string cmd, key;
        in >> cmd >> key;
        int status = 0;
        if (cmd.empty() || cmd[0] == '#') continue;
        if (cmd == "quit" || cmd == "exit") break;
        if (cmd == "put" && !key.empty()) {
            std::string value;
            std::getline(in >> std::ws, value);
            status = put(s, key, value);
        } else if (cmd == "get" && !key.empty()) {
            status = get(s, key);
            if (status == 1) status = 0;  // "not found" is an answer, not a failure
        } else if (cmd == "delete" && !key.empty()) {
            status = remove(s, key);
            if (status == 1) status = 0;
        } else if (cmd == "stats" && key.empty()) {
            status = stats(s);
        } else if (cmd == "dump" && key.empty()) {
            status = dump(s);
        } else {
            std::cout << "usage: put KEY VALUE | get KEY | delete KEY | stats | dump | quit\n";
            status = 2;
        }
        std::cout.flush();
        worst = std::max(worst, status);
    }
    return worst;
}

} // namespace kvcli
