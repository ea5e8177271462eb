// A 3-member etcd cluster on 127.0.0.1 for one test: free ports, data in
// /dev/shm, members started and killed by the test, all gone at the end.
#pragma once

#include "coordinator/etcd_http.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

namespace rpm::test {

class EtcdCluster {
public:
    static constexpr int kMembers = 3;

    EtcdCluster() {
        dir_ = "/dev/shm/rpm-etcd-" + std::to_string(::getpid()) + "-" + std::to_string(++counter());
        std::filesystem::create_directories(dir_);
        for (int i = 0; i < kMembers; ++i) client_.push_back(free_port()), peer_.push_back(free_port());
        pids_.assign(kMembers, -1);
    }
    ~EtcdCluster() {
        for (int i = 0; i < kMembers; ++i) kill(i);
        std::filesystem::remove_all(dir_);
    }
    EtcdCluster(const EtcdCluster&) = delete;
    EtcdCluster& operator=(const EtcdCluster&) = delete;

    /// Start every member; true once the cluster answers (bounded: 20 s).
    bool start() {
        for (int i = 0; i < kMembers; ++i) start(i);
        return healthy();
    }
    void start(int i) {
        std::vector<std::string> args = {
            "etcd", "--name", name(i), "--data-dir", (dir_ / name(i)).string(),
            "--listen-client-urls", url(client_[i]), "--advertise-client-urls", url(client_[i]),
            "--listen-peer-urls", url(peer_[i]), "--initial-advertise-peer-urls", url(peer_[i]),
            "--initial-cluster", initial_cluster(), "--initial-cluster-state", "new",
            "--initial-cluster-token", dir_.filename().string(),
            "--heartbeat-interval", "50", "--election-timeout", "500"};
        const auto log = (dir_ / (name(i) + ".log")).string();
        // Everything the child needs is made before fork (the test is
        // multi-threaded: the child only dup2s and execs).
        std::vector<char*> argv;
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        const pid_t pid = ::fork();
        if (pid == 0) {
            if (fd >= 0) ::dup2(fd, 1), ::dup2(fd, 2);
            ::execvp("etcd", argv.data());
            ::_exit(127);
        }
        if (fd >= 0) ::close(fd);
        pids_[i] = pid;
    }
    void kill(int i, int sig = SIGKILL) {
        if (pids_[i] <= 0) return;
        ::kill(pids_[i], sig);
        ::waitpid(pids_[i], nullptr, 0);
        pids_[i] = -1;
    }
    /// Every started member answers /health with a leader (bounded: 20 s).
    bool healthy() {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (std::chrono::steady_clock::now() < deadline) {
            bool all = true;
            for (int i = 0; i < kMembers && all; ++i) {
                if (pids_[i] <= 0) continue;
                auto a = coordinator::http_post({"127.0.0.1", std::to_string(client_[i])}, "/v3/maintenance/status", "{}",
                                                std::chrono::milliseconds(500));
                all = a && a->status == 200 && a->body.find("\"leader\"") != std::string::npos;
            }
            if (all) return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        return false;
    }
    /// Lease renewals the cluster has done (etcd_debugging_lease_renewed_total
    /// of /metrics, summed over the running members: the leader counts
    /// them); -1 when a member does not answer.
    [[nodiscard]] long renewals() const {
        long sum = 0;
        for (int i = 0; i < kMembers; ++i) {
            if (pids_[i] <= 0) continue;
            auto a = coordinator::http_post({"127.0.0.1", std::to_string(client_[i])}, "/metrics", "{}",
                                            std::chrono::milliseconds(1000));
            if (!a || a->status != 200) return -1;
            const std::string name = "\netcd_debugging_lease_renewed_total ";
            const auto at = a->body.find(name);
            if (at == std::string::npos) return -1;
            sum += std::stol(a->body.substr(at + name.size(), 24));
        }
        return sum;
    }
    [[nodiscard]] std::string endpoint(int i) const { return "127.0.0.1:" + std::to_string(client_[i]); }
    [[nodiscard]] std::vector<std::string> endpoints() const {
        std::vector<std::string> out;
        for (int i = 0; i < kMembers; ++i) out.push_back(endpoint(i));
        return out;
    }
    [[nodiscard]] std::string uri() const {
        std::string u = "etcd://";
        for (int i = 0; i < kMembers; ++i) u += (i ? "," : "") + endpoint(i);
        return u;
    }

private:
    static int& counter() {
        static int n = 0;
        return n;
    }
    static std::string name(int i) { return "m" + std::to_string(i); }
    static std::string url(int port) { return "http://127.0.0.1:" + std::to_string(port); }
    std::string initial_cluster() const {
        std::string s;
        for (int i = 0; i < kMembers; ++i) s += (i ? "," : "") + name(i) + "=" + url(peer_[i]);
        return s;
    }
    // A port the kernel just gave out; another process may take it before
    // etcd binds it (then start() fails and the test says so).
    static int free_port() {
        const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        int port = 0;
        if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
            ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
            port = ntohs(a.sin_port);
        ::close(fd);
        return port;
    }

    std::filesystem::path dir_;
    std::vector<int> client_, peer_;
    std::vector<pid_t> pids_;
};

} // namespace rpm::test
