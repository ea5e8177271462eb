// `rpm-kvstore node`: campaign, lead, step down (node.hpp has the steps).
#include "node.hpp"

#include "redis_commands.hpp"
#include "resp_service.hpp"

#include <rpm/client.hpp>
#include <rpm/coordinator.hpp>

#include <algorithm>
#include <cctype>
#include <condition_variable>
#include <csignal>
#include <ctime>
#include <iostream>
#include <mutex>
#include <optional>
#include <thread>

namespace kvcli {

std::string candidate_value(const std::string& name, const std::string& serve) { return name + " " + serve; }

bool parse_candidate(const std::string& value, std::string& name, std::string& serve) {
    const auto space = value.find(' ');
    if (space == std::string::npos || space == 0 || space + 1 == value.size()) return false;
    name = value.substr(0, space);
    serve = value.substr(space + 1);
    return serve.find(' ') == std::string::npos;
}

namespace {

using namespace std::chrono_literals;

class Node final : public kvnode::Handler, public kvnode::CommandHost {
public:
    explicit Node(NodeArgs a) : a_(std::move(a)) {}
    int run();

    bool execute(const std::vector<std::string>& args, std::string& out) override;
    void prefetch(const std::vector<std::string>& args) override { kvnode::prefetch(*this, args); }
    rpm::Result<void> commit() override;
    std::string commit_error(const rpm::Error& e) override;
    bool replies_before_commit() override { return a_.fault == "ack-before-commit"; }

private:
    NodeArgs a_;
    std::string serve_;  // HOST:PORT as bound
    std::unique_ptr<rpm::Coordinator> coord_;
    std::unique_ptr<kvnode::Service> service_;
    std::optional<rpm::Server> server_;
    // The service thread's alone (changed through service_->run).
    std::unique_ptr<kv::Store> store_;
    std::uint64_t term_ = 0;
    // Shared with the coordinator's threads and the signal thread.
    std::mutex mu_;
    std::condition_variable cv_;
    bool stop_ = false, step_down_ = false;
    std::string step_down_reason_;
    std::optional<rpm::Leader> leader_;  // as the watch last said

    [[nodiscard]] bool ignores_lease() const { return a_.fault == "ignore-lease" || a_.fault == "no-fencing"; }
    [[nodiscard]] bool fencing() const { return a_.fault != "no-fencing"; }
    void say(const std::string& what) const { std::cerr << "rpm-kvstore node " << a_.name << ": " << what << std::endl; }
    bool stopping() {
        std::lock_guard lk(mu_);
        return stop_;
    }
    void pause(std::chrono::milliseconds d) {
        std::unique_lock lk(mu_);
        cv_.wait_for(lk, d, [&] { return stop_; });
    }
    void request_step_down(const std::string& why);
    bool start_server();
    rpm::Result<void> self_fence(std::uint64_t term);
    rpm::Result<std::unique_ptr<kv::Store>> open_store(std::uint64_t term);
    std::unique_ptr<kv::Store> open_while_leading(std::uint64_t term);
    void lead(const rpm::Leader& l);
    int check_members() const;
    int check_args() const;
    std::thread watch_signals();
    rpm::Result<void> connect_coordinator(const rpm::CoordinatorOptions& o);
    void campaign_until_stopped();
    kv::Store* store() override { return store_.get(); }
    void not_leader(std::string& out) override;
    std::string info() override;
    void write_error(const rpm::Error& e, std::string& out) override;
    // Ends the signal thread when run() returns before any signal came.
    static void stop_signals(std::thread& t) {
        ::kill(::getpid(), SIGTERM);  // blocked in every thread: only sigwait takes it
        t.join();
    }
};

void Node::request_step_down(const std::string& why) {
    std::lock_guard lk(mu_);
    if (!step_down_) step_down_ = true, step_down_reason_ = why;
    cv_.notify_all();
}

// Serve the region as a replica; retried, as the port may still be held
// for a moment by the server just stopped.
bool Node::start_server() {
    for (int attempt = 0; !stopping(); ++attempt) {
        auto o = replica_server_options(a_.replica);
        auto s = o ? rpm::Server::start(std::move(*o)) : rpm::Result<rpm::Server>(o.error());
        if (s) return server_.emplace(std::move(*s)), true;
        if (attempt % 10 == 0) say("cannot serve the region yet: " + s.error().message());
        pause(200ms);
    }
    return false;
}

// Open our own region through our own server with the new term: the server
// keeps it in the fence file and revokes the older primary's connection, so
// nothing of an older term lands here, now or after we serve it again.
rpm::Result<void> Node::self_fence(std::uint64_t term) {
    rpm::ClientOptions co;
    co.client_id = a_.primary.id;
    co.secret = a_.primary.secret;
    auto conn = rpm::Client(co).connect(a_.replica.listen);
    if (!conn) return conn.error();
    rpm::RegionOptions ro;
    ro.fencing_term = term;
    auto r = conn->open_region(kRegionName, ro);
    if (!r) return r.error();
    return {};
}

rpm::Result<std::unique_ptr<kv::Store>> Node::open_store(std::uint64_t term) {
    PrimaryArgs p = a_.primary;
    p.local = a_.replica.region;
    p.size = a_.replica.size;
    p.replicas.clear();
    for (const auto& m : a_.members)
        if (m != a_.replica.listen) p.replicas.push_back(m);
    p.fencing_term = fencing() ? term : 0;
    auto o = replicator_options(p);
    if (!o) return o.error();
    return kv::Store::open(std::move(*o));
}

// Recovery needs a majority of members; right after a start they may not
// all be serving yet, so a few tries, while the leadership lasts.
std::unique_ptr<kv::Store> Node::open_while_leading(std::uint64_t term) {
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (!stopping() && (coord_->leading() || ignores_lease()) && std::chrono::steady_clock::now() < deadline) {
        auto s = open_store(term);
        if (s) return std::move(*s);
        say("cannot open the store: " + s.error().message());
        if (s.error() == rpm::errc::fenced || s.error() == rpm::errc::bad_config) return nullptr;
        pause(300ms);
    }
    return nullptr;
}

void Node::lead(const rpm::Leader& l) {
    {
        std::lock_guard lk(mu_);
        step_down_ = false;
    }
    if (stopping()) return (void)coord_->resign();  // elected while being stopped: hand it on at once
    say("elected, term " + std::to_string(l.fencing_term));
    if (fencing())
        if (auto f = self_fence(l.fencing_term); !f) {
            say("cannot fence its own region with term " + std::to_string(l.fencing_term) + ": " + f.error().message());
            (void)coord_->resign();
            return pause(1s);
        }
    server_.reset();  // the region is the primary's local copy from here on
    auto store = open_while_leading(l.fencing_term);
    if (!store) {
        start_server();
        (void)coord_->resign();
        return pause(1s);  // let another candidate try
    }
    const auto st = store->stats();
    service_->run([&] { store_ = std::move(store), term_ = l.fencing_term; });
    say("serving as primary, term " + std::to_string(l.fencing_term) + ", " + std::to_string(st.live_keys) + " keys, " +
        std::to_string(st.needed) + " of " + std::to_string(st.members) + " members per put");
    std::string why;
    {
        std::unique_lock lk(mu_);
        cv_.wait(lk, [&] { return stop_ || step_down_; });
        why = stop_ ? "stopping" : step_down_reason_;
    }
    say("stepping down: " + why);
    service_->run([&] { store_.reset(), term_ = 0; });
    if (!stopping()) start_server();
    (void)coord_->resign();
}

void Node::not_leader(std::string& out) {
    std::lock_guard lk(mu_);
    std::string name, serve;
    if (leader_ && leader_->name.rfind(a_.name + " ", 0) != 0 && parse_candidate(leader_->name, name, serve))
        return resp::error(out, "NOTLEADER " + name + " " + serve + " " + std::to_string(leader_->fencing_term));
    resp::error(out, "NOTLEADER none");
}

void Node::write_error(const rpm::Error& e, std::string& out) {
    if (e == rpm::errc::fenced) request_step_down("fenced: " + e.message());
    resp::error(out, commit_error(e));
}

bool Node::execute(const std::vector<std::string>& args, std::string& out) {
    return kvnode::execute(*this, args, out);
}

rpm::Result<void> Node::commit() {
    if (!store_) return rpm::Error(rpm::errc::io_error, "this node stepped down before the commit");
    auto c = store_->commit();
    if (!c) {
        if (c.error() == rpm::errc::fenced) request_step_down("fenced: " + c.error().message());
        return c.error();
    }
    return {};
}

std::string Node::commit_error(const rpm::Error& e) {
    if (e == rpm::errc::fenced) return "FENCED " + e.message();
    if (e == rpm::errc::quorum_lost) return "NOREPLICAS " + e.message();
    if (e == rpm::errc::invalid_argument) return "ERR " + e.message();
    return "ERR " + e.message();
}

// How group commit grouped (kv-peer divides two readings), and the
// service thread's CPU time: INFO runs on that thread.
std::string service_line(const kvnode::ServiceStats& st) {
    timespec cpu{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
    const auto us = static_cast<std::uint64_t>(cpu.tv_sec) * 1000000 + static_cast<std::uint64_t>(cpu.tv_nsec) / 1000;
    return "service reads " + std::to_string(st.reads) + " commands " + std::to_string(st.commands) + " commits " +
           std::to_string(st.commits) + " covered " + std::to_string(st.covered) + " connections " +
           std::to_string(st.commit_conns) + " commit_us " + std::to_string(st.commit_ns / 1000) + " thread_cpu_us " +
           std::to_string(us) + "\n";
}

std::string Node::info() {
    std::string s = "node " + a_.name + "\nrole " + std::string(store_ ? "primary" : "candidate") + "\n";
    {
        std::lock_guard lk(mu_);
        std::string name, serve;
        if (leader_ && parse_candidate(leader_->name, name, serve))
            s += "leader " + name + " " + serve + " term " + std::to_string(leader_->fencing_term) + "\n";
        else
            s += "leader none\n";
    }
    if (store_) {
        const auto st = store_->stats();
        s += "term " + std::to_string(term_) + "\nkeys " + std::to_string(st.live_keys) + " records " +
             std::to_string(st.records) + "\ndurability " + st.durability + " (" + std::to_string(st.needed) +
             " of " + std::to_string(st.members) + " members)\nmember " + a_.replica.listen + " local frontier " +
             std::to_string(st.local) + "\n";
        for (const auto& r : st.replicas)
            s += "member " + r.uri + " " + std::string(rpm::to_string(r.state)) + " frontier " +
                 std::to_string(r.frontier) + ", " + kvcli::health(r) + "\n";
    }
    return s + service_line(service_->stats());
}

// Each --member a tcp:// or rdma:// URI with a port, given once, this
// node's --listen among them. 0, or fail()'s status after saying why.
int Node::check_members() const {
    for (std::size_t i = 0; i < a_.members.size(); ++i) {
        const auto& m = a_.members[i];
        const auto sep = m.find("://");
        const auto scheme = sep == std::string::npos ? std::string() : m.substr(0, sep);
        std::string host;
        std::uint16_t port = 0;
        if ((scheme != "tcp" && scheme != "rdma") || !kvnode::split_host_port(m.substr(sep + 3), host, port) || port == 0)
            return fail("--member " + m + ": expected tcp://HOST:PORT or rdma://HOST:PORT");
        if (std::find(a_.members.begin(), a_.members.begin() + static_cast<std::ptrdiff_t>(i), m) !=
            a_.members.begin() + static_cast<std::ptrdiff_t>(i))
            return fail("--member " + m + " is given twice");
    }
    if (std::find(a_.members.begin(), a_.members.end(), a_.replica.listen) == a_.members.end())
        return fail("--member must list every node's --listen, this one's (" + a_.replica.listen + ") included");
    return 0;
}

// The command line checked before anything starts (a bad one exits 2 at once).
int Node::check_args() const {
    if (const int status = check_members()) return status;
    if (auto o = replica_server_options(a_.replica); !o) return fail(o.error().message());
    if (a_.name.empty() || a_.name.find(' ') != std::string::npos) return fail("--name: one word");
    std::string serve_host;
    std::uint16_t serve_port = 0;
    if (!kvnode::split_host_port(a_.serve, serve_host, serve_port))
        return fail("--serve " + a_.serve + ": expected HOST:PORT");
    return 0;
}

// SIGINT and SIGTERM stop the node: blocked in every thread, they reach
// only the thread returned, which sigwaits for them.
std::thread Node::watch_signals() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);  // before any thread starts
    return std::thread([this, set] {
        int sig = 0;
        sigwait(&set, &sig);
        std::lock_guard lk(mu_);
        stop_ = true;
        cv_.notify_all();
    });
}

// etcd may come up after the nodes: a candidate waits for it (coord_ stays
// empty when stopped first). An error other than io_error ends the wait.
rpm::Result<void> Node::connect_coordinator(const rpm::CoordinatorOptions& o) {
    for (int attempt = 0; !coord_ && !stopping(); ++attempt) {
        auto coord = rpm::connect_etcd(o);
        if (coord) coord_ = std::move(*coord);
        else if (coord.error() != rpm::errc::io_error) return coord.error();
        else if (attempt % 20 == 0) say("waiting for etcd: " + coord.error().message());
        if (!coord_) pause(500ms);
    }
    return {};
}

void Node::campaign_until_stopped() {
    while (!stopping()) {
        auto l = coord_->campaign(candidate_value(a_.name, serve_), 2s);
        if (l) lead(*l);
        else if (l.error() != rpm::errc::io_error || l.error().detail().find("leads") == std::string::npos)
            say("campaign: " + l.error().message()), pause(500ms);
    }
}

int Node::run() {
    auto copts = rpm::parse_coordinator_uri(a_.coordinator);
    if (!copts) return fail("--coordinator " + a_.coordinator + ": " + copts.error().message());
    if (const int status = check_args()) return status;
    copts->election = a_.election;
    copts->lease_ttl = std::chrono::seconds(a_.lease_ttl_s);
    copts->on_lost = [this](const rpm::Error& e) {
        if (ignores_lease()) return say("lease lost (ignored: --fault " + a_.fault + "): " + e.message());
        request_step_down("lease lost: " + e.message());
    };

    std::thread signals = watch_signals();
    if (auto c = connect_coordinator(*copts); !c) return stop_signals(signals), fail(c.error().message());
    if (!coord_) return stop_signals(signals), 0;
    auto service = kvnode::Service::start(a_.serve, *this);
    if (!service) return stop_signals(signals), fail(service.error().message(), 3);
    service_ = std::move(*service);
    serve_ = a_.serve.substr(0, a_.serve.rfind(':') + 1) + std::to_string(service_->port());
    (void)coord_->watch([this](const rpm::Leader& l) {
        std::lock_guard lk(mu_);
        leader_ = l;
    });
    if (start_server()) say("candidate; region on " + a_.replica.listen + ", clients on " + serve_);
    campaign_until_stopped();
    say("stopping");
    service_.reset();
    coord_.reset();  // revokes the lease: another node is elected at once
    server_.reset();
    signals.join();
    return 0;
}

} // namespace

int node(NodeArgs a) { return Node(std::move(a)).run(); }

} // namespace kvcli
