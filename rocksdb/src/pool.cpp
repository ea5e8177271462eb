// The Replicator and its slots: which WAL file has which log, appends in
// chunks, syncs that commit only when no commit covered them yet.
#include "pool.hpp"

#include "fault.hpp"

#include <cstring>

namespace rpm_rocksdb {
namespace {

using rpm::errc;
using rpm::Error;

constexpr std::string_view kIdentity = "rpm-rocksdb-wal:";

std::vector<std::byte> identity(const std::string& path) {
    std::vector<std::byte> out(kIdentity.size() + path.size());
    std::memcpy(out.data(), kIdentity.data(), kIdentity.size());
    std::memcpy(out.data() + kIdentity.size(), path.data(), path.size());
    return out;
}

std::optional<std::string> path_of(std::span<const std::byte> record) {
    const std::string_view s(reinterpret_cast<const char*>(record.data()), record.size());
    if (!s.starts_with(kIdentity) || s.size() == kIdentity.size()) return std::nullopt;
    return std::string(s.substr(kIdentity.size()));
}

rpm::ReplicatorOptions replicator_options(const Options& o) {
    rpm::ReplicatorOptions ro;
    ro.local_path = o.local_path;
    ro.local_size = o.pool_size();
    ro.create = !std::filesystem::exists(o.local_path);
    ro.replicas = o.replicas;
    ro.durability = o.durability;
    ro.fencing_term = o.fencing_term;
    ro.failure_timeout = o.failure_timeout;
    ro.recovery_rank = counter_of;
    return ro;
}

} // namespace

std::uint64_t counter_of(std::span<const std::byte> data_area) noexcept {
    std::uint64_t n = 0;
    if (data_area.size() >= sizeof n) std::memcpy(&n, data_area.data(), sizeof n);
    return n;
}

rpm::Result<std::unique_ptr<Pool>> Pool::open(const Options& o) {
    if (o.replicas.empty()) return Error(errc::invalid_argument, "rpm-rocksdb: no replica");
    if (o.slots == 0) return Error(errc::bad_size, "rpm-rocksdb: slots must be at least 1");
    auto r = rpm::Replicator::open(replicator_options(o));
    if (!r) return r.error().with_context("rpm-rocksdb: opening the replicated pool " + o.local_path.string());
    const auto need = o.pool_size() - rpm::kReplicaHeaderSize;
    if (r->size() < need)
        return Error(errc::bad_size, "rpm-rocksdb: the pool " + o.local_path.string() + " holds " + std::to_string(r->size()) +
                                         " data bytes, " + std::to_string(o.slots) + " slots of " +
                                         std::to_string(o.slot_size) + " need " + std::to_string(need));
    std::unique_ptr<Pool> p(new Pool(std::move(*r), o));
    p->counter_ = counter_of(p->r_.data());
    if (auto s = p->open_slots(); !s) return s.error();
    return p;
}

rpm::Result<void> Pool::open_slots() {
    for (unsigned i = 0; i < options_.slots; ++i) {
        auto log = rpm::ReplicatedLog::open(r_, kPoolHeaderSize + std::uint64_t{i} * options_.slot_size, options_.slot_size);
        if (!log) return log.error().with_context("rpm-rocksdb: slot " + std::to_string(i));
        slots_.push_back(std::make_unique<Slot>(std::move(*log)));
    }
    return {};
}

std::vector<Mirrored> Pool::mirrored() {
    std::vector<Mirrored> out;
    std::lock_guard g(mu_);
    for (auto& s : slots_) {
        std::lock_guard sg(s->mu);
        Mirrored m;
        bool first = true, named = false;
        s->log.for_each([&](const rpm::LogRecord& rec) {
            if (first) {
                first = false;
                auto p = path_of(rec.payload);
                if (p) m.path = *p, named = true;
                return named;
            }
            m.bytes.insert(m.bytes.end(), rec.payload.begin(), rec.payload.end());
            return true;
        });
        if (!named || by_path_.contains(m.path)) continue;  // free, or foreign
        s->path = m.path;
        by_path_[m.path] = s.get();
        out.push_back(std::move(m));
    }
    return out;
}

rpm::Result<Slot*> Pool::take(const std::string& path) {
    std::unique_lock g(mu_);
    Slot* slot = nullptr;
    if (auto it = by_path_.find(path); it != by_path_.end()) slot = it->second;
    for (auto& s : slots_)
        if (!slot && s->path.empty()) slot = s.get();
    if (!slot)
        return Error(errc::bad_size, "rpm-rocksdb: every one of the " + std::to_string(slots_.size()) +
                                         " slots holds a WAL file RocksDB has not deleted yet (raise slots=)");
    slot->path = path;
    by_path_[path] = slot;
    std::unique_lock sg(slot->mu);
    g.unlock();
    if (slot->log.records() > 0)
        if (auto r = slot->log.reset(); !r) return r.error().with_context("rpm-rocksdb: emptying a slot for " + path);
    auto a = slot->log.append(identity(path));
    if (!a) return a.error().with_context("rpm-rocksdb: naming " + path + " in its slot");
    slot->last_lsn = a->lsn;
    wal_files_.fetch_add(1, std::memory_order_relaxed);
    return slot;
}

rpm::Result<void> Pool::release(const std::string& path) {
    std::unique_lock g(mu_);
    const auto it = by_path_.find(path);
    if (it == by_path_.end()) return {};
    Slot* slot = it->second;
    by_path_.erase(it);
    slot->path.clear();
    std::unique_lock sg(slot->mu);
    g.unlock();
    auto r = slot->log.reset();
    if (!r) return r.error().with_context("rpm-rocksdb: freeing the slot of " + path);
    freed_.fetch_add(1, std::memory_order_relaxed);
    return {};
}

rpm::Result<void> Pool::append(Slot& slot, std::span<const std::byte> data) {
    std::lock_guard g(slot.mu);
    while (!data.empty()) {
        const auto n = std::min(data.size(), kChunk);
        auto a = slot.log.append(data.first(n));
        if (!a) return a.error().with_context("rpm-rocksdb: appending to the log of " + slot.path);
        slot.last_lsn = a->lsn;
        data = data.subspan(n);
    }
    return {};
}

rpm::Result<void> Pool::sync(Slot& slot) {
    syncs_.fetch_add(1, std::memory_order_relaxed);
    rpm::Lsn want = 0;
    {
        std::lock_guard g(slot.mu);
        want = slot.last_lsn;
    }
    // The planted control (docs/testing.md): acknowledge without a commit.
    if (fault_planted("rocksdb-sync-before-commit")) return {};
    if (r_.frontier(rpm::Frontier::quorum) >= want) return {};
    auto c = commit();
    if (!c) return c.error().with_context("rpm-rocksdb: syncing " + slot.path);
    commits_.fetch_add(1, std::memory_order_relaxed);
    return {};
}

rpm::Result<rpm::Lsn> Pool::commit() {
    {
        std::lock_guard g(mu_);
        auto w = r_.atomic_write(0, ++counter_);
        if (!w) return w.error();
    }
    return r_.commit();
}

void Pool::count_restored(std::uint64_t bytes) {
    restored_.fetch_add(1, std::memory_order_relaxed);
    restored_bytes_.fetch_add(bytes, std::memory_order_relaxed);
}

Stats Pool::stats() const {
    return {wal_files_.load(), restored_.load(), restored_bytes_.load(), syncs_.load(), commits_.load(), freed_.load()};
}

std::string Pool::describe() const {
    const auto& o = options_;
    std::string uris;
    for (const auto& r : o.replicas) uris += (uris.empty() ? "" : ", ") + r.uri + "/" + r.region;
    return "WAL files replicated to " + std::to_string(o.replicas.size()) + " replicas (" + uris + "), durability " +
           rpm::to_string(o.durability) + ", local copy " + o.local_path.string() + ", " + std::to_string(o.slots) +
           " slots of " + std::to_string(o.slot_size >> 20) + " MiB";
}

} // namespace rpm_rocksdb
