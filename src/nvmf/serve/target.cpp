// rpm::nvmf::Target: checks the options, builds the subsystems in the
// engine (the seed's verbs: create_subsystem, create_backend,
// map_namespace), listens through its fabric's entry in the fabric table
// (fabric.hpp: NVMe/TCP or NVMe/RDMA), hands each queue to the Workers (no
// thread per connection: workers.hpp), and runs a watchdog that tears
// down controllers whose keep-alive timer expired or whose admin queue
// went away.
#include "core/log.hpp"
#include "nvmf/serve/fabric.hpp"
#include "nvmf/serve/setup.hpp"
#include "nvmf/serve/workers.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <list>
#include <thread>

namespace rpm::nvmf {

using target::FabricQueue;

struct Target::Impl {
    TargetOptions options;
    std::shared_ptr<Engine> engine;
    std::vector<SubsystemHandle> handles;
    std::unique_ptr<target::Registry> registry;
    target::SharedStats stats;
    std::uint16_t port = 0;
    std::unique_ptr<target::FabricPort> fabric;

    struct Running {
        std::shared_ptr<FabricQueue> queue;
        bool timed_out = false;
    };
    std::unique_ptr<target::Workers> workers;
    std::mutex mu;
    std::condition_variable cv;
    std::list<Running> queues;
    bool stopping = false;
    std::thread watchdog_thread;

    /// A new queue into the Workers and the watchdog's list, unless a limit
    /// refuses it. RETURN VALUE: whether it was taken.
    bool admit(const std::shared_ptr<FabricQueue>& q);
    void watchdog_loop();
    void sweep();
    void reap();
    bool refuse(const FabricQueue& s) const;
    void expire_setups();
};

bool Target::Impl::admit(const std::shared_ptr<FabricQueue>& q) {
    std::lock_guard lock(mu);
    if (stopping) return false;
    ++stats.connections;
    if (refuse(*q)) {
        ++stats.refused;
        return false;
    }
    if (auto added = workers->add(q.get()); added) {
        rpm::detail::logf(LogLevel::info, "nvmf", "cannot serve a connection from %s: %s", q->peer().c_str(),
                     added.message().c_str());
        ++stats.refused;
        return false;
    }
    queues.push_back({q});
    return true;
}

/// Close the queues of controllers that are gone: keep-alive expired, or
/// their admin queue closed (the association ends with its admin queue).
void Target::Impl::sweep() {
    const auto expired = registry->take_expired(std::chrono::steady_clock::now());
    stats.keep_alive_expired += expired.size();
    std::vector<const target::Controller*> gone;
    for (const auto& c : expired) gone.push_back(c.get());
    for (auto& r : queues) {
        auto c = r.queue->controller();
        if (c && r.queue->qid() == 0 && r.queue->finished()) gone.push_back(c.get());
    }
    for (auto& r : queues) {
        auto c = r.queue->controller();
        if (c && std::find(gone.begin(), gone.end(), c.get()) != gone.end()) r.queue->close();
    }
}

// Under mu: whether a new connection is over the limits. Each refusal is
// traced (RPM_NVMF_TRACE) and counted (TargetStats::connections_refused).
bool Target::Impl::refuse(const FabricQueue& s) const {
    std::size_t open = 0, setting_up = 0;
    for (const auto& r : queues) {
        if (r.queue->finished()) continue;
        ++open;
        if (!r.queue->set_up() && r.queue->peer() == s.peer()) ++setting_up;
    }
    const char* why = open >= options.max_connections              ? "max_connections"
                      : setting_up >= options.max_setup_per_address ? "max_setup_per_address"
                                                                    : nullptr;
    if (why) rpm::detail::logf(LogLevel::info, "nvmf", "refused a connection from %s (%s)", s.peer().c_str(), why);
    return why != nullptr;
}

// Under mu: close connections that have not completed ICReq and Connect
// within the set-up timeout (a silent or dribbling peer).
void Target::Impl::expire_setups() {
    const auto now = std::chrono::steady_clock::now();
    for (auto& r : queues) {
        if (r.queue->finished() || r.queue->set_up() || now - r.queue->accepted() < options.setup_timeout) continue;
        if (r.timed_out) continue;
        r.timed_out = true;
        ++stats.setup_timeouts;
        rpm::detail::logf(LogLevel::info, "nvmf", "closed a connection from %s: no ICReq and Connect within %lld ms",
                     r.queue->peer().c_str(), static_cast<long long>(options.setup_timeout.count()));
        r.queue->close();
    }
}

// Queues that ended are out of the Workers set (finished() is their
// worker's last touch): they may go.
void Target::Impl::reap() {
    std::erase_if(queues, [](const Running& r) { return r.queue->finished(); });
}

void Target::Impl::watchdog_loop() {
    std::unique_lock lock(mu);
    while (!stopping) {
        cv.wait_for(lock, std::chrono::milliseconds(100));
        if (stopping) break;
        sweep();
        expire_setups();
        reap();
    }
}

Target::Target(std::unique_ptr<Impl> impl) noexcept : impl_(std::move(impl)) {}

// The threads and callbacks hold the Impl (start() gives them `d`), never the
// Target, so moving the pointer leaves them serving.
Target::Target(Target&& other) noexcept = default;

Target& Target::operator=(Target&& other) noexcept {
    if (this != &other) {
        stop();  // the target this object held goes first, as in ~Target
        impl_ = std::move(other.impl_);
    }
    return *this;
}

Target::~Target() { stop(); }

// A moved-from Target has no impl_: it reports nothing and stops nothing.
std::uint16_t Target::port() const noexcept { return impl_ ? impl_->port : 0; }

TargetStats Target::stats() const {
    if (!impl_) return {};
    const auto& s = impl_->stats;
    return {s.connections, s.terminated, s.controllers, s.keep_alive_expired, s.admin,
            s.io,          s.offloaded,  s.errors,      s.digest_errors,      s.refused,
            s.setup_timeouts, s.auth_succeeded, s.auth_failed};
}

StagingReport Target::staging() const {
    if (!impl_ || impl_->handles.empty()) return {};
    return impl_->engine->staging(impl_->handles.front());
}

std::vector<NamespaceView> Target::namespaces() const {
    std::vector<NamespaceView> out;
    if (!impl_) return out;
    for (auto h : impl_->handles) {
        auto v = impl_->engine->namespaces(h);
        out.insert(out.end(), v.begin(), v.end());
    }
    return out;
}

void Target::stop() {
    if (!impl_) return;
    auto& d = *impl_;
    {
        std::lock_guard lock(d.mu);
        if (d.stopping) return;
        d.stopping = true;
        for (auto& r : d.queues) r.queue->close();
    }
    d.cv.notify_all();
    // No new queues: the fabric's accepting thread ends.
    d.fabric->stop();
    if (d.watchdog_thread.joinable()) d.watchdog_thread.join();
    // Every queue was shut down: each is served once more, ends and
    // gives its queue back (a command in progress finishes first).
    for (;;) {
        {
            std::lock_guard lock(d.mu);
            d.reap();
            if (d.queues.empty()) break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    d.workers->stop();
    d.fabric.reset();
}

Result<Target> Target::start(TargetOptions options) {
    if (auto ok = target::check_options(options); !ok) return ok.error();
    auto impl = std::make_unique<Impl>();
    impl->engine = options.engine ? options.engine : make_software_engine();
    auto subsystems = target::build_subsystems(options, impl->engine, impl->handles);
    if (!subsystems) return subsystems.error();
    // More workers than connections could never be busy (one waits).
    impl->workers = std::make_unique<target::Workers>(options.max_connections + 1);
    if (auto e = impl->workers->error()) return Error(errc::io_error, "nvmf target: cannot make its workers: " + e.message());
    auto* d = impl.get();
    // Listening, but no connection is taken before start() (below, once
    // the registry the queues need exists).
    auto port = target::fabric_of(options.transport)
                    .listen(options, &d->stats, [d](const std::shared_ptr<FabricQueue>& q) { return d->admit(q); });
    if (!port) return port.error();
    d->fabric = std::move(*port);
    d->port = d->fabric->port();
    auto limits = target::limits_of(options, d->port);
    auto all = std::move(*subsystems);
    all.insert(all.begin(), target::Subsystem::make_discovery(target::discovery_entries(options, d->port)));
    impl->registry = std::make_unique<target::Registry>(std::move(all), limits);
    impl->options = std::move(options);
    d->fabric->start(d->registry.get());
    d->watchdog_thread = std::thread([d] { d->watchdog_loop(); });
    return Target(std::move(impl));
}

} // namespace rpm::nvmf
