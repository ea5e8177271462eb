// EtcdCoordinator: etcd's election service (v3election, through the JSON
// gateway): campaign with a lease, the leader key's creation revision as
// the term, resign; a keep-alive thread that renews the lease every third
// of its TTL (again at once after a failed renewal) and declares the
// leadership lost once it could not for a whole TTL; a watch thread on the
// election's observe stream.
#include <rpm/coordinator.hpp>

#include "coordinator/etcd_http.hpp"
#include "core/base64.hpp"
#include "coordinator/observe.hpp"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace rpm {
namespace {

using detail::base64;
using coordinator::json_field;
using coordinator::json_u64;
using Clock = std::chrono::steady_clock;

std::optional<Leader> leader_of_kv(const nlohmann::json& kv) {
    if (!kv.is_object() || !kv.contains("key")) return std::nullopt;
    Leader l;
    if (kv.contains("value") && kv["value"].is_string()) {
        auto v = detail::unbase64(kv["value"].get<std::string>());
        if (v) l.name = std::move(*v);
    }
    l.fencing_term = json_u64(kv, "create_revision");
    return l;
}

class EtcdCoordinator final : public Coordinator {
public:
    EtcdCoordinator(CoordinatorOptions o, std::vector<coordinator::Endpoint> eps)
        : opts_(std::move(o)), http_(std::move(eps), opts_.request_timeout) {
        keeper_ = std::thread([this] { keep_alive_loop(); });
    }
    ~EtcdCoordinator() override {
        {
            std::lock_guard lock(mu_);
            stopping_ = true;
        }
        cv_.notify_all();
        stream_.stop();
        if (keeper_.joinable()) keeper_.join();
        if (watcher_.joinable()) watcher_.join();
        // An orderly exit hands over at once; a crash leaves it to the TTL.
        // One try, on the member that answered last: with every member
        // down, trying each in turn would hold the destructor N x 500 ms for
        // a lease that expires by itself anyway.
        if (const auto lease = take_lease()) revoke(lease, std::chrono::milliseconds(500), false);
    }

    Result<Leader> campaign(std::string_view name, std::chrono::milliseconds timeout) override;
    Result<std::optional<Leader>> leader() override;
    Result<void> resign() override;
    [[nodiscard]] bool leading() const noexcept override { return leading_.load(); }
    Result<void> watch(std::function<void(const Leader&)> on_change) override;

private:
    nlohmann::json election() const { return base64(opts_.election); }
    std::uint64_t take_lease() {
        std::lock_guard lock(mu_);
        return std::exchange(lease_, 0);
    }
    void revoke(std::uint64_t lease, std::chrono::milliseconds timeout, bool every_member = true) {
        (void)http_.post("/v3/lease/revoke", {{"ID", std::to_string(lease)}}, timeout, every_member);
    }
    void keep_alive_loop();
    /// RETURN VALUE: false when no member renewed the lease (try again soon).
    bool renew_once();
    void lose(Error why);
    void watch_loop();

    CoordinatorOptions opts_;
    coordinator::EtcdHttp http_;
    mutable std::mutex mu_;
    std::condition_variable cv_;
    std::uint64_t lease_ = 0;          ///< under mu_: the lease being kept alive (0: none)
    Clock::time_point renewed_;        ///< under mu_: when the last renewal that succeeded was sent
    nlohmann::json leader_key_;        ///< under mu_: what resign needs
    bool campaigning_ = false;         ///< under mu_
    bool stopping_ = false;            ///< under mu_
    std::atomic<bool> leading_{false};
    std::function<void(const Leader&)> on_change_;  ///< under mu_
    coordinator::JsonStream stream_;
    std::thread keeper_, watcher_;
};

Result<Leader> EtcdCoordinator::campaign(std::string_view name, std::chrono::milliseconds timeout) {
    if (name.empty()) return Error(errc::invalid_argument, "campaign: the candidate's name is empty");
    {
        std::lock_guard lock(mu_);
        if (campaigning_ || leading_) return Error(errc::invalid_argument, "campaign: already campaigning or leading");
        campaigning_ = true;
    }
    const auto done = [this] {
        std::lock_guard lock(mu_);
        campaigning_ = false;
    };
    auto grant = http_.post("/v3/lease/grant", {{"TTL", opts_.lease_ttl.count()}});
    if (!grant) return done(), grant.error();
    const std::uint64_t lease = json_u64(*grant, "ID");
    {
        std::lock_guard lock(mu_);
        lease_ = lease;
        renewed_ = Clock::now();
    }
    cv_.notify_all();  // the keep-alive thread renews it while the campaign waits
    auto won = http_.post("/v3/election/campaign",
                          {{"name", election()}, {"lease", std::to_string(lease)}, {"value", base64(name)}}, timeout,
                          false);
    const nlohmann::json key = won ? json_field(*won, "leader") : nlohmann::json();
    if (!won || !key.is_object()) {
        // The candidate's key goes with its lease.
        if (take_lease() == lease) revoke(lease, opts_.request_timeout);
        done();
        if (!won && won.error() == errc::io_error) {
            auto now = leader();
            const std::string who = now && *now ? "; '" + (*now)->name + "' leads (term " +
                                                      std::to_string((*now)->fencing_term) + ")" : "";
            return Error(errc::io_error, "campaign: not elected within " + std::to_string(timeout.count()) + " ms" + who +
                                             " (" + won.error().detail() + ")");
        }
        return won ? Error(errc::io_error, "campaign: etcd's answer names no leader key") : won.error();
    }
    {
        std::lock_guard lock(mu_);
        leader_key_ = key;
        campaigning_ = false;
    }
    leading_ = true;
    return Leader{std::string(name), json_u64(key, "rev")};
}

Result<std::optional<Leader>> EtcdCoordinator::leader() {
    auto j = http_.post("/v3/election/leader", {{"name", election()}});
    if (!j) {
        if (j.error() == errc::invalid_argument && j.error().detail().find("election: no leader") != std::string::npos)
            return std::optional<Leader>();
        return j.error();
    }
    return leader_of_kv(json_field(*j, "kv"));
}

Result<void> EtcdCoordinator::resign() {
    nlohmann::json key;
    {
        std::lock_guard lock(mu_);
        if (!leading_) return Error(errc::invalid_argument, "resign: not leading");
        key = leader_key_;
    }
    leading_ = false;
    auto r = http_.post("/v3/election/resign", {{"leader", key}});
    if (const auto lease = take_lease()) revoke(lease, opts_.request_timeout);
    if (!r) return r.error();
    return {};
}

void EtcdCoordinator::keep_alive_loop() {
    std::unique_lock lock(mu_);
    bool failed = false;
    while (!stopping_) {
        // In milliseconds: lease_ttl is in whole seconds, and 2 s / 3 is 0 s.
        // After a failed renewal, try again at once: a member may answer as
        // soon as etcd has elected a new leader (which extends every lease),
        // and waiting a third of the TTL again could let the lease lapse.
        cv_.wait_for(lock, failed ? std::chrono::milliseconds(50)
                                  : std::chrono::duration_cast<std::chrono::milliseconds>(opts_.lease_ttl) / 3);
        if (stopping_) break;
        if (lease_ == 0) {
            failed = false;
            continue;
        }
        if (!opts_.keep_alive) {
            // A stalled leader (tests): lost a TTL after its last renewal.
            if (Clock::now() - renewed_ < opts_.lease_ttl) continue;
            lock.unlock();
            lose(Error(errc::io_error, "the lease was not renewed for " + std::to_string(opts_.lease_ttl.count()) + " s"));
            lock.lock();
            continue;
        }
        lock.unlock();
        failed = !renew_once();
        lock.lock();
    }
}

bool EtcdCoordinator::renew_once() {
    std::uint64_t lease = 0;
    Clock::time_point renewed;
    {
        std::lock_guard lock(mu_);
        lease = lease_;
        renewed = renewed_;
    }
    const auto sent = Clock::now();
    // Each member gets a third of the TTL, and never more than is left
    // before the lease counts as lost (at least 100 ms).
    using ms = std::chrono::milliseconds;
    const auto left = std::chrono::duration_cast<ms>(renewed + opts_.lease_ttl - sent);
    const auto budget = std::max(ms(100), std::min({std::chrono::duration_cast<ms>(opts_.lease_ttl) / 3, left,
                                                    opts_.request_timeout}));
    auto r = http_.post("/v3/lease/keepalive", {{"ID", std::to_string(lease)}}, budget);
    if (r && json_u64(json_field(*r, "result"), "TTL") > 0) {
        std::lock_guard lock(mu_);
        if (lease_ == lease) renewed_ = sent;  // the lease lives until sent + TTL at least
        return true;
    }
    if (r) {
        lose(Error(errc::io_error, "etcd says the lease expired"));
        return true;  // nothing left to renew
    }
    // Not renewed: etcd may already count it down. Lost once a whole TTL
    // has passed since the last renewal sent, counted from this side.
    if (Clock::now() - renewed >= opts_.lease_ttl)
        lose(Error(r.error().code(), "the lease could not be renewed for " + std::to_string(opts_.lease_ttl.count()) +
                                         " s: " + r.error().detail()));
    return false;
}

void EtcdCoordinator::lose(Error why) {
    {
        std::lock_guard lock(mu_);
        lease_ = 0;
    }
    if (leading_.exchange(false) && opts_.on_lost) opts_.on_lost(why);
}

Result<void> EtcdCoordinator::watch(std::function<void(const Leader&)> on_change) {
    if (!on_change) return Error(errc::invalid_argument, "watch: empty callback");
    std::lock_guard lock(mu_);
    on_change_ = std::move(on_change);
    if (!watcher_.joinable()) watcher_ = std::thread([this] { watch_loop(); });
    return {};
}

// One observe stream at a time; a broken one is opened again on the next
// member after a short pause, until the coordinator goes.
void EtcdCoordinator::watch_loop() {
    const std::string body = nlohmann::json{{"name", election()}}.dump();
    std::size_t at = http_.preferred();
    const auto deliver = [this](const nlohmann::json& msg) {
        auto l = leader_of_kv(json_field(json_field(msg, "result"), "kv"));
        if (!l) return;
        std::function<void(const Leader&)> cb;
        {
            std::lock_guard lock(mu_);
            cb = on_change_;
        }
        if (cb) cb(*l);
    };
    for (;;) {
        (void)stream_.run(http_.endpoints()[at % http_.endpoints().size()], "/v3/election/observe", body,
                          opts_.request_timeout, deliver);
        std::unique_lock lock(mu_);
        if (cv_.wait_for(lock, std::chrono::milliseconds(200), [this] { return stopping_; })) return;
        ++at;
    }
}

} // namespace

Result<CoordinatorOptions> parse_coordinator_uri(std::string_view uri) {
    constexpr std::string_view scheme = "etcd://";
    if (uri.substr(0, scheme.size()) != scheme)
        return Error(errc::invalid_argument, "coordinator '" + std::string(uri) + "': expected etcd://HOST:PORT[,HOST:PORT...]");
    CoordinatorOptions o;
    std::string_view rest = uri.substr(scheme.size());
    while (!rest.empty()) {
        const auto comma = rest.find(',');
        const auto one = rest.substr(0, comma);
        auto ep = coordinator::parse_endpoint(one);
        if (!ep) return Error(errc::invalid_argument, "coordinator '" + std::string(uri) + "': " + ep.error().detail());
        o.endpoints.emplace_back(one);
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
    if (o.endpoints.empty()) return Error(errc::invalid_argument, "coordinator '" + std::string(uri) + "': no endpoint");
    return o;
}

Result<std::unique_ptr<Coordinator>> connect_etcd(CoordinatorOptions o) {
    if (o.endpoints.empty()) return Error(errc::invalid_argument, "connect_etcd: no endpoints");
    if (o.election.empty()) return Error(errc::invalid_argument, "connect_etcd: the election's name is empty");
    if (o.lease_ttl < std::chrono::seconds(2))
        return Error(errc::invalid_argument, "connect_etcd: lease_ttl must be at least 2 s (renewed every third)");
    if (o.request_timeout.count() <= 0) return Error(errc::invalid_argument, "connect_etcd: request_timeout must be positive");
    std::vector<coordinator::Endpoint> eps;
    for (const auto& e : o.endpoints) {
        auto ep = coordinator::parse_endpoint(e);
        if (!ep) return ep.error();
        eps.push_back(std::move(*ep));
    }
    // Any member that answers will do: the cluster's health shows in each call.
    coordinator::EtcdHttp probe(eps, o.request_timeout);
    if (auto r = probe.post("/v3/maintenance/status", nlohmann::json::object()); !r && r.error() == errc::io_error)
        return r.error();
    return std::unique_ptr<Coordinator>(std::make_unique<EtcdCoordinator>(std::move(o), std::move(eps)));
}

} // namespace rpm
