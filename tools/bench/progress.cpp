#include "progress.hpp"

#include <cstdio>

namespace rpmbench {

Progress::Progress(bool enabled) : enabled_(enabled) {
    if (enabled_) thread_ = std::thread([this] { run(); });
}

Progress::~Progress() {
    {
        std::lock_guard lock(mu_);
        stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void Progress::begin(std::string label, std::function<std::uint64_t()> count) {
    std::lock_guard lock(mu_);
    label_ = std::move(label);
    count_ = std::move(count);
    started_ = std::chrono::steady_clock::now();
}

void Progress::end() {
    std::lock_guard lock(mu_);
    count_ = nullptr;
}

void Progress::run() {
    std::unique_lock lock(mu_);
    while (!stop_) {
        cv_.wait_for(lock, std::chrono::seconds(1));
        if (stop_ || !count_) continue;
        const std::chrono::duration<double> ran = std::chrono::steady_clock::now() - started_;
        if (ran.count() < 1.0) continue;
        // count_ only reads atomics, so calling it under the lock is cheap
        // and keeps end() from racing with it.
        std::fprintf(stderr, "rpm-bench: %s: %llu ops, %.1f s\n", label_.c_str(),
                     static_cast<unsigned long long>(count_()), ran.count());
    }
}

} // namespace rpmbench
