// outside-replicator: a primary that keeps its own copy of a region in a
// file and replicates every write to rpm-server replicas; a commit returns
// once a majority of the members (the local copy and the replicas) hold the
// writes durably.
//
//   outside-replicator SECRETS_FILE LOCAL_FILE URI [URI...]
//
// SECRETS_FILE: its first ID:SECRET line is this client's id and secret (the
// format of rpm-server --secrets-file, so the replicas' own file will do).
// LOCAL_FILE: the local copy, created at 1 MiB if missing; run again with the
// same file and replicas, it recovers and goes on with a new generation.
// URI: tcp://HOST:PORT of an rpm-server that serves a region named "data" of
// at least 1 MiB, e.g.
//   rpm-server --listen tcp://127.0.0.1:7001 --region data=/dev/shm/data-b.pool:1M --secrets-file secrets
// Exit status 0 when every commit held, 1 otherwise (with the message), 2 for
// a bad command line.
#include <rpm/replication.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <mutex>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

// on_event runs on the caller's thread during open() and on the
// replicator's monitor thread later: one lock keeps lines whole.
std::mutex out_mu;
void say(const std::string& line) {
    std::lock_guard lock(out_mu);
    std::cout << line << std::endl;
}

int fail(std::string_view what, const rpm::Error& e) {
    std::lock_guard lock(out_mu);
    std::cerr << "outside-replicator: " << what << ": " << e.message() << "\n";
    return 1;
}

bool read_secret(const std::string& file, rpm::ClientOptions& co) {
    std::ifstream in(file);
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] == '#') continue;
        const auto colon = line.find(':');
        if (colon == std::string::npos || colon == 0 || colon + 1 == line.size()) return false;
        co.client_id = line.substr(0, colon);
        co.secret = line.substr(colon + 1);
        return true;
    }
    return false;
}

void print_event(const rpm::ReplicaEvent& e) {
    std::ostringstream line;
    line << "event: replica " << e.replica << " " << e.uri << " " << rpm::to_string(e.kind) << ", frontier "
         << e.frontier;
    if (e.error.code()) line << " (" << e.error.message() << ")";
    say(line.str());
}

// The replicator the command line describes into `o`; false after printing
// why (the exit status is then 2).
bool options(int argc, char** argv, rpm::ReplicatorOptions& o) {
    if (argc < 4) {
        std::cerr << "usage: outside-replicator SECRETS_FILE LOCAL_FILE URI [URI...]\n";
        return false;
    }
    rpm::ClientOptions co;
    if (!read_secret(argv[1], co)) {
        std::cerr << "outside-replicator: " << argv[1] << ": no ID:SECRET line\n";
        return false;
    }
    co.timeout = std::chrono::seconds(5);  // an unreachable replica fails in bounded time

    o.local_path = argv[2];
    o.local_size = 1u << 20;  // the 4 KiB header included; each replica region must be at least as large
    o.create = true;
    for (int i = 3; i < argc; ++i) o.replicas.push_back({argv[i], "data", co, {}});
    // Majority with the local copy counted: with two replicas a commit needs
    // 2 of 3 members, so one replica may be down without stopping writes.
    o.durability = rpm::Durability::majority();
    o.on_event = print_event;
    return true;
}

void say_opened(const rpm::Replicator& r) {
    say("open: generation " + std::to_string(r.generation()) + ", " + std::to_string(r.members()) + " members, a commit needs " +
        std::to_string(r.needed()) + " (" + rpm::to_string(r.durability()) + "), recovered up to LSN " +
        std::to_string(r.last_lsn()) + ", data area " + std::to_string(r.size()) + " bytes");

    // Run again over the same files, what the last run committed is back:
    // recovery made every member equal to the most advanced one.
    if (const auto area = r.data(); area[0] != std::byte{0}) {
        std::string found;
        for (std::size_t i = 0; i < 64 && area[i] != std::byte{0}; ++i) found += static_cast<char>(area[i]);
        say("found at offset 0: '" + found + "'");
    }
}

// Each record 64 bytes after the one before, from offset 0, then a commit.
// 0, or fail()'s status.
int write_and_commit(rpm::Replicator& r, const std::vector<std::string>& records) {
    std::uint64_t offset = 0;
    for (const auto& rec : records) {
        // write() returns once the local copy holds the bytes; nothing is
        // durable anywhere until a commit covers it.
        auto lsn = r.write(offset, std::as_bytes(std::span(rec)));
        if (!lsn) return fail("write", lsn.error());
        say("write '" + rec + "' at " + std::to_string(offset) + ": LSN " + std::to_string(*lsn));
        offset += 64;
    }
    auto committed = r.commit();
    if (!committed) return fail("commit", committed.error());  // errc::quorum_lost: acknowledge nothing
    say("commit: durable on a majority up to LSN " + std::to_string(*committed));
    return 0;
}

// Reads come from the local copy and never leave the machine.
int read_back(const rpm::Replicator& r, const std::vector<std::string>& records, std::uint64_t offset,
              const std::string& last) {
    const auto data = r.data();
    const auto holds = [&](std::uint64_t at, const std::string& s) {
        const auto want = std::as_bytes(std::span(s));
        return std::equal(want.begin(), want.end(), data.begin() + static_cast<std::ptrdiff_t>(at));
    };
    for (std::size_t i = 0; i < records.size(); ++i)
        if (!holds(i * 64, records[i])) return fail("read back", rpm::Error(rpm::errc::io_error, records[i]));
    if (!holds(offset, last)) return fail("read back", rpm::Error(rpm::errc::io_error, last));
    return 0;
}

// A majority commit does not wait for the slowest replica. Wait (10 s at
// most) for every member, so that the states printed after show them caught
// up: wait() gives up at once while a member is not live, but one that left
// (a busy machine can miss a heartbeat) is reconnected and caught up in the
// background, so ask again.
void wait_for_every_member(rpm::Replicator& r, rpm::Lsn lsn) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    for (;;) {
        auto all = r.wait(rpm::Frontier::all, lsn, std::chrono::seconds(1));
        if (all) break;
        if (std::chrono::steady_clock::now() >= deadline) {
            say("not every member holds LSN " + std::to_string(lsn) + ": " + all.error().message());
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
}

void say_states(const rpm::Replicator& r) {
    say("frontiers: local " + std::to_string(r.frontier(rpm::Frontier::local)) + ", quorum " +
        std::to_string(r.frontier(rpm::Frontier::quorum)) + ", all " + std::to_string(r.frontier(rpm::Frontier::all)));
    const auto replicas = r.replicas();
    for (std::size_t i = 0; i < replicas.size(); ++i) {
        const auto& s = replicas[i];
        std::ostringstream line;
        line << "replica " << i << " " << s.uri << ": " << rpm::to_string(s.state) << ", frontier " << s.frontier
             << ", method " << (s.method ? rpm::flush::to_string(*s.method) : "none") << ", failures " << s.failures;
        if (s.state != rpm::ReplicaState::live && s.last_error.code()) line << " (" << s.last_error.message() << ")";
        say(line.str());
    }
}

}  // namespace

int main(int argc, char** argv) {
    rpm::ReplicatorOptions o;
    if (!options(argc, argv, o)) return 2;
    auto r = rpm::Replicator::open(std::move(o));
    if (!r) return fail("open", r.error());
    say_opened(*r);

    // Records carry the generation (one more at each open), so that a
    // second run visibly writes anew.
    const std::string tag = " (generation " + std::to_string(r->generation()) + ")";
    const std::vector<std::string> records = {"alpha" + tag, "beta" + tag, "gamma" + tag};
    if (const int status = write_and_commit(*r, records)) return status;

    // persist = write + commit in one request per member.
    const std::uint64_t offset = 64 * records.size();
    const std::string last = "delta" + tag;
    auto persisted = r->persist(offset, std::as_bytes(std::span(last)));
    if (!persisted) return fail("persist", persisted.error());
    say("persist '" + last + "' at " + std::to_string(offset) + ": LSN " + std::to_string(*persisted));

    if (const int status = read_back(*r, records, offset, last)) return status;
    wait_for_every_member(*r, *persisted);
    say_states(*r);
    say("outside-replicator: ok");
    return 0;
}
