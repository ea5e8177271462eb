// The RESP service's commits, on a thread of their own. A commit waits for
// a round trip to the replicas; run on the service's thread it stopped every
// connection's reads for that long, so one batch per round trip was the
// most a node could take. Here the service thread goes on reading and
// executing while a commit is in flight, and what arrives meanwhile is the
// next commit's batch, started as soon as this one returns: group commit
// across everything a node received during a round trip.
#pragma once

#include <rpm/result.hpp>

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace kvnode {

class Committer {
public:
    using Commit = std::function<rpm::Result<void>()>;
    using Done = std::function<void(rpm::Result<void>)>;

    /// `commit` runs on the committer's thread, one at a time.
    explicit Committer(Commit commit);
    /// Waits for a commit in flight, then ends the thread.
    ~Committer();
    Committer(const Committer&) = delete;
    Committer& operator=(const Committer&) = delete;

    /// Starts one commit; done(result) runs on the committer's thread once
    /// it returned. The caller starts the next only after `done` (one in
    /// flight at a time).
    void start(Done done);

private:
    void loop();
    Commit commit_;
    std::mutex mu_;
    std::condition_variable cv_;
    Done pending_;
    bool stop_ = false;
    std::thread thread_;
};

} // namespace kvnode
