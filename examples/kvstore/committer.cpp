// The RESP service's commit thread (committer.hpp).
#include "committer.hpp"

#include <utility>

namespace kvnode {

Committer::Committer(Commit commit) : commit_(std::move(commit)), thread_([this] { loop(); }) {}

Committer::~Committer() {
    {
        std::lock_guard lk(mu_);
        stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
}

void Committer::start(Done done) {
    {
        std::lock_guard lk(mu_);
        pending_ = std::move(done);
    }
    cv_.notify_all();
}

void Committer::loop() {
    for (;;) {
        Done done;
        {
            std::unique_lock lk(mu_);
            cv_.wait(lk, [&] { return stop_ || pending_; });
            if (!pending_) return;  // stopping, nothing started
            done = std::exchange(pending_, nullptr);
        }
        done(commit_());
    }
}

} // namespace kvnode
