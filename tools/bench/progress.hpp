// The progress line on stderr: once a second, while a test has been running
// for a second or more, which test and how many operations so far. Short
// tests print nothing, so a quick run stays quiet.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace rpmbench {

class Progress {
public:
    explicit Progress(bool enabled);
    ~Progress();
    Progress(const Progress&) = delete;
    Progress& operator=(const Progress&) = delete;

    /// A test starts; `count` returns its operations so far (called from
    /// the progress thread, so it must be thread-safe).
    void begin(std::string label, std::function<std::uint64_t()> count);
    void end();

private:
    void run();

    bool enabled_;
    std::mutex mu_;
    std::condition_variable cv_;
    bool stop_ = false;
    std::string label_;
    std::function<std::uint64_t()> count_;
    std::chrono::steady_clock::time_point started_;
    std::thread thread_;
};

} // namespace rpmbench
