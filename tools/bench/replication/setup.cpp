#include "setup.hpp"

#include "../setup.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>

namespace rpmbench {

void EventLog::record(const rpm::ReplicaEvent& e) {
    if (e.kind == rpm::ReplicaEvent::Kind::joined) return;
    std::lock_guard lock(mu_);
    if (e.kind == rpm::ReplicaEvent::Kind::left) ++left_;
    if (lines_.size() < 20)
        lines_.push_back("replica " + std::to_string(e.replica) + " (" + e.uri + ") " + std::string(to_string(e.kind)) +
                         " at frontier " + std::to_string(e.frontier) +
                         (e.error.code() ? ": " + e.error.message() : std::string()));
}

std::uint64_t EventLog::left() const {
    std::lock_guard lock(mu_);
    return left_;
}

std::vector<std::string> EventLog::errors() const {
    std::lock_guard lock(mu_);
    return lines_;
}

std::uint64_t stride_of(std::size_t size) { return (std::max<std::size_t>(size, 8) + 63) / 64 * 64; }

unsigned slots_of(const Options& o) { return std::max(1u, o.replication.batch); }

std::uint64_t area_of(const Options& o) {
    const auto biggest = *std::max_element(o.sizes.begin(), o.sizes.end());
    std::uint64_t used = slots_of(o) * stride_of(biggest);
    // --log: room for a few records of the biggest size before the log is
    // formatted again.
    if (o.replication.log) used = std::max<std::uint64_t>(used, 4 * (stride_of(biggest) + 64));
    return std::max<std::uint64_t>(1, (used + (1 << 20) - 1) >> 20) << 20;
}

std::unique_ptr<RepSetup> RepSetup::create(const Options& o, ReplicationReport& report, std::string& error) {
    auto& base = report.base;
    if (!pin(o.cpus, base.cpus)) return error = "cannot pin to --cpus " + base.cpus, nullptr;
    describe_machine(base);
    base.command_line = o.command_line;
    base.duration = o.duration;
    base.warmup = o.warmup;
    base.ops_limit = o.op_count;
    base.rounds = o.rounds;
    base.completion = std::string(rpm::to_string(o.completion));
    report.batch = o.replication.batch;
    std::unique_ptr<RepSetup> s(new RepSetup);
    s->area_ = area_of(o);
    report.local_size = rpm::kReplicaHeaderSize + s->area_;
    report.single_offset = rpm::kReplicaHeaderSize + s->area_;
    s->local_path_ = std::filesystem::path(o.pool_dir) / ("rpm-bench-" + std::to_string(::getpid()) + "-primary.pool");
    report.local_path = s->local_path_.string();
    if (o.replication.uris.empty()) {
        const unsigned count = *std::max_element(o.replication.replicas.begin(), o.replication.replicas.end());
        if (!s->start_local(o, count, error)) return nullptr;
        base.mode = "in-process (" + std::to_string(count) + " servers, each its own pool in " + o.pool_dir + ")";
    } else {
        s->uris = o.replication.uris;
        s->region_ = o.region;
        s->client_.client_id = o.id;
        s->client_.secret = o.secret;
        if (!o.secret_file.empty()) std::getline(std::ifstream(o.secret_file), s->client_.secret);
        base.mode = "external";
    }
    if (!s->probe(report, error)) return nullptr;
    return s;
}

bool RepSetup::start_local(const Options& o, unsigned count, std::string& error) {
    const std::uint64_t pool = rpm::kReplicaHeaderSize + 2 * area_;
    for (unsigned i = 0; i < count; ++i) {
        auto ls = LocalServer::start(o.listen, o.pool_dir, pool, "r" + std::to_string(i), o.server_io_threads,
                                     o.completion);
        if (!ls) return error = "cannot start in-process server " + std::to_string(i) + ": " + ls.error().message(), false;
        uris.push_back((*ls)->uri());
        local_.push_back(std::move(*ls));
    }
    // Every in-process server shares one id and region name; each has its own secret.
    region_ = local_.front()->region();
    client_.client_id = local_.front()->client_id();
    return true;
}

// Connect to every server once: its region's decisions go to the report
// and its size is checked; the connection to replica 0 is kept for the
// single-replica baselines.
bool RepSetup::probe(ReplicationReport& report, std::string& error) {
    const std::uint64_t need = rpm::kReplicaHeaderSize + 2 * area_;
    for (std::size_t i = 0; i < uris.size(); ++i) {
        auto client = client_;
        if (!local_.empty()) client.secret = local_[i]->secret();
        auto c = rpm::Client(client).connect(uris[i]);
        if (!c) return error = "connect " + uris[i] + ": " + c.error().message(), false;
        auto r = c->open_region(region_);
        if (!r) return error = "open_region " + region_ + " on " + uris[i] + ": " + r.error().message(), false;
        if (r->size() < need)
            return error = "region " + region_ + " on " + uris[i] + " has " + std::to_string(r->size()) +
                           " bytes; these sizes and --batch need " + std::to_string(need),
                   false;
        report.servers.push_back({uris[i], region_info(*r)});
        if (i == 0) {
            report.base.transport = std::string(rpm::to_string(*c->transport()));
            report.base.uri = uris[0];
            report.base.region = report.servers[0].region;
            single_.emplace(*r);
            conn_.emplace(std::move(*c));
        } else if (rpm::to_string(*c->transport()) != report.base.transport) {
            report.base.notes.push_back("replicas mix transports; the TCP round-trip baseline is " +
                                        report.base.transport + " to replica 0");
        }
    }
    return true;
}

rpm::Result<rpm::Replicator> RepSetup::open(const RepConfig& cfg) {
    rpm::ReplicatorOptions ro;
    ro.local_path = local_path_;
    ro.local_size = rpm::kReplicaHeaderSize + area_;
    ro.create = true;
    for (unsigned i = 0; i < cfg.replicas; ++i) {
        rpm::ReplicaSpec spec;
        spec.uri = uris[i];
        spec.region = region_;
        spec.client = client_;
        if (!local_.empty()) spec.client.secret = local_[i]->secret();
        ro.replicas.push_back(std::move(spec));
    }
    ro.durability = cfg.durability;
    // The regions hold junk of this or an earlier run; the benchmark owns them.
    ro.adopt_foreign = true;
    ro.on_event = [log = events](const rpm::ReplicaEvent& e) { log->record(e); };
    return rpm::Replicator::open(std::move(ro));
}

void RepSetup::close() {
    single_.reset();
    if (conn_) conn_->close();
    conn_.reset();
    local_.clear();  // stops each server and removes its pool
    std::error_code ec;
    if (!local_path_.empty()) std::filesystem::remove(local_path_, ec);
    local_path_.clear();
}

RepSetup::~RepSetup() { close(); }

std::vector<RepConfig> make_configs(const Options& o, std::size_t servers, std::vector<Skipped>& skipped) {
    std::vector<RepConfig> out;
    for (unsigned n : o.replication.replicas)
        for (const auto& name : o.replication.durability) {
            RepConfig c{n, name, {}, 0, 0};
            auto d = rpm::parse_durability(name);
            if (!d) continue;  // main() refused it already
            c.durability = *d;
            c.members = n + (d->include_local ? 1 : 0);
            auto needed = rpm::needed_members(*d, c.members);
            c.needed = needed ? *needed : 0;
            if (n > servers)
                skipped.push_back({describe(c), "only " + std::to_string(servers) + " replica servers"});
            else if (!needed)
                skipped.push_back({describe(c), needed.error().detail()});
            else
                out.push_back(std::move(c));
        }
    return out;
}

std::string describe(const RepConfig& c) {
    return "replicas=" + std::to_string(c.replicas) + " " + c.name + " (" + std::to_string(c.needed) + " of " +
           std::to_string(c.members) + " members)";
}

std::string not_live(const rpm::Replicator& rep) {
    std::string out;
    const auto all = rep.replicas();
    for (std::size_t i = 0; i < all.size(); ++i)
        if (all[i].state != rpm::ReplicaState::live)
            out += (out.empty() ? "" : "; ") + std::string("replica ") + std::to_string(i) + " (" + all[i].uri + ") is " +
                   std::string(rpm::to_string(all[i].state)) +
                   (all[i].last_error.code() ? ": " + all[i].last_error.message() : std::string());
    return out;
}

} // namespace rpmbench
