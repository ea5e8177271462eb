// The fixture the replicator's tests share: three replica nodes, a local
// region, and an event log filled by the monitor thread.
#pragma once

#include "replication/nodes.hpp"

#include <rpm/replicated_log.hpp>

#include <unistd.h>

#include <condition_variable>
#include <mutex>
#include <vector>

namespace rpm::test {

class ReplicatorTest : public ::testing::Test {
protected:
    static constexpr std::size_t kSize = 4u << 20;

    void SetUp() override {
        char tmpl[] = "/dev/shm/rpm-repl-test.XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
        for (int i = 0; i < 4; ++i) nodes_.push_back(std::make_unique<ReplicaNode>(dir_, "node" + std::to_string(i), kSize));
        for (int i = 0; i < 3; ++i) nodes_[i]->start();
    }
    void TearDown() override {
        nodes_.clear();
        std::filesystem::remove_all(dir_);
    }

    ReplicatorOptions options(Durability d, std::vector<std::string> uris = {}) {
        ReplicatorOptions o;
        o.local_path = dir_ / "local.pool";
        o.local_size = kSize;
        o.create = true;
        o.durability = d;
        if (uris.empty())
            for (int i = 0; i < 3; ++i) uris.push_back(nodes_[i]->uri());
        for (auto& u : uris) o.replicas.push_back(spec_for(u));
        o.heartbeat_interval = std::chrono::milliseconds(20);
        o.failure_timeout = std::chrono::milliseconds(400);
        o.reconnect_interval = std::chrono::milliseconds(50);
        o.on_event = [this](const ReplicaEvent& e) {
            std::lock_guard lock(mu_);
            events_.push_back(e);
            cv_.notify_all();
        };
        return o;
    }

    /// Wait (bounded) for an event of `kind` from replica `i`; the monitor
    /// delivers them asynchronously.
    bool saw(ReplicaEvent::Kind kind, std::size_t i, std::chrono::milliseconds limit = std::chrono::seconds(10)) {
        std::unique_lock lock(mu_);
        return cv_.wait_for(lock, limit, [&] {
            for (const auto& e : events_)
                if (e.kind == kind && e.replica == i) return true;
            return false;
        });
    }
    std::vector<ReplicaEvent> events() {
        std::lock_guard lock(mu_);
        return events_;
    }

    static std::vector<std::byte> bytes(const std::string& s) {
        std::vector<std::byte> v(s.size());
        std::memcpy(v.data(), s.data(), s.size());
        return v;
    }
    static std::string local_data(const Replicator& r, std::size_t off, std::size_t n) {
        return {reinterpret_cast<const char*>(r.data().data()) + off, n};
    }

    std::filesystem::path dir_;
    std::vector<std::unique_ptr<ReplicaNode>> nodes_;
    std::mutex mu_;
    std::condition_variable cv_;
    std::vector<ReplicaEvent> events_;
};

} // namespace rpm::test
