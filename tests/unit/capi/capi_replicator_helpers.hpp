#pragma once
// A replicated group for capi_test: a primary with a 1 MiB local file region
// and two in-process servers as replicas (region "rep", 1 MiB each),
// majority durability, short timings, and an event callback that records
// every member change.
#include "capi_helpers.hpp"

#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace capi {

struct RecordedEvent {
    int kind;
    std::size_t replica;
    std::string uri;
    int error;
    std::string detail;
};

/// Thread-safe record of rpm_replica_event_fn calls.
struct EventLog {
    std::mutex mu;
    std::condition_variable cv;
    std::vector<RecordedEvent> events;

    static void fn(void* ctx, const rpm_replica_event* e) {
        auto* log = static_cast<EventLog*>(ctx);
        std::lock_guard lock(log->mu);
        log->events.push_back({e->kind, e->replica, e->uri ? e->uri : "", e->error, e->detail ? e->detail : ""});
        log->cv.notify_all();
    }
    std::vector<RecordedEvent> snapshot() {
        std::lock_guard lock(mu);
        return events;
    }
    /// Waits (at most 10 s) for an event of `kind` for `replica`; a copy of it.
    std::optional<RecordedEvent> wait_for(int kind, std::size_t replica) {
        std::unique_lock lock(mu);
        std::optional<RecordedEvent> found;
        cv.wait_for(lock, std::chrono::seconds(10), [&] {
            for (const auto& e : events)
                if (e.kind == kind && e.replica == replica) found = e;
            return found.has_value();
        });
        return found;
    }
};

class ReplicaGroup : public ::testing::Test {
protected:
    static constexpr std::size_t kLocalSize = std::size_t{1} << 20;
    static constexpr std::size_t kDataSize = kLocalSize - 4096;

    void SetUp() override {
        CAPI_ASSERT_OK(s1.start(d1, {{"rep", kLocalSize}}));
        CAPI_ASSERT_OK(s2.start(d2, {{"rep", kLocalSize}}));
        ASSERT_NO_FATAL_FAILURE(options(opts, kSecret));
        CAPI_ASSERT_OK(rpm_replicator_open(opts, rep.out()));
        ASSERT_NE(rep.get(), nullptr);
    }

    /// Options for this group, the replicas reached with `secret`.
    void options(ReplicatorOpts& o, const char* secret) {
        ClientOpts co;
        CAPI_ASSERT_OK(make_client_opts(co, kClientId, secret));
        CAPI_ASSERT_OK(rpm_replicator_opts_new(o.out()));
        CAPI_ASSERT_OK(rpm_replicator_opts_set_local(o, local.path("local").c_str(), kLocalSize, 1));
        CAPI_ASSERT_OK(rpm_replicator_opts_add_replica(o, s1.uri().c_str(), "rep", co));
        CAPI_ASSERT_OK(rpm_replicator_opts_add_replica(o, s2.uri().c_str(), "rep", co));
        CAPI_ASSERT_OK(rpm_replicator_opts_set_durability(o, "majority"));
        CAPI_ASSERT_OK(rpm_replicator_opts_set_timing(o, 20, 200, 50));
        CAPI_ASSERT_OK(rpm_replicator_opts_set_event_fn(o, EventLog::fn, &events));
    }

    /// A replica's status; state -1 when the call failed.
    rpm_replica_status status(std::size_t i) {
        rpm_replica_status st{};
        if (rpm_replicator_get_replica_status(rep, i, &st) != 0) st.state = -1;
        return st;
    }

    TempDir local, d1, d2;
    TestServer s1, s2;
    EventLog events;
    ReplicatorOpts opts;
    ReplicatorHandle rep;
};

}  // namespace capi
