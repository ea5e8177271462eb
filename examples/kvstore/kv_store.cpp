#include "kv_store.hpp"

#include <rpm/pmem.hpp>

#include <algorithm>
#include <bit>
#include <cstring>

namespace kv {
namespace {

constexpr char kMagic[8] = {'R', 'P', 'M', 'K', 'V', '0', '0', '1'};
constexpr std::size_t kRecordHeader = 1 + 2 + 4;  // op, key length, value length

struct KvHeader {
    char magic[8];
    std::uint64_t slots, log_offset, log_length;
};

std::uint64_t load64(std::span<const std::byte> s, std::uint64_t off) noexcept {
    std::uint64_t v;
    std::memcpy(&v, s.data() + off, 8);
    return v;
}

std::uint64_t fnv1a(std::string_view key) noexcept {
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : key) h = (h ^ c) * 0x100000001b3ull;
    return h;
}

std::map<std::string, std::string> replay(const std::vector<rpm::LogRecord>& records) {
    std::map<std::string, std::string> out;
    for (const auto& rec : records) {
        auto r = decode(rec.payload);
        if (!r) continue;
        if (r->op == Op::put) out[std::string(r->key)] = std::string(r->value);
        else out.erase(std::string(r->key));
    }
    return out;
}

} // namespace

std::optional<Layout> layout_for(std::uint64_t data_size) noexcept {
    if (data_size + rpm::kReplicaHeaderSize < kMinRegionSize) return std::nullopt;
    // A slot per 32 to 64 bytes (an eighth to a quarter of the area): a
    // record takes 16 bytes of log overhead, 7 of its own and the key and
    // value, so the index stays at most about half full when the log is.
    const std::uint64_t slots = std::bit_floor(data_size / 32);
    Layout l{slots, kKvHeaderSize, kKvHeaderSize + 8 * slots, 0};
    l.log_length = (data_size - l.log_offset) / 8 * 8;
    return l;
}

std::vector<std::byte> encode(Op op, std::string_view key, std::string_view value) {
    std::vector<std::byte> out(kRecordHeader + key.size() + value.size());
    const auto klen = static_cast<std::uint16_t>(key.size());
    const auto vlen = static_cast<std::uint32_t>(value.size());
    out[0] = static_cast<std::byte>(op);
    std::memcpy(out.data() + 1, &klen, 2);
    std::memcpy(out.data() + 3, &vlen, 4);
    std::memcpy(out.data() + kRecordHeader, key.data(), key.size());
    // A delete's value is an empty view whose data() may be null, which
    // memcpy may not be given even for 0 bytes (UBSan: DEL over RESP).
    if (!value.empty()) std::memcpy(out.data() + kRecordHeader + key.size(), value.data(), value.size());
    return out;
}

std::optional<Record> decode(std::span<const std::byte> payload) noexcept {
    if (payload.size() < kRecordHeader) return std::nullopt;
    std::uint16_t klen;
    std::uint32_t vlen;
    std::memcpy(&klen, payload.data() + 1, 2);
    std::memcpy(&vlen, payload.data() + 3, 4);
    const auto op = static_cast<Op>(payload[0]);
    if ((op != Op::put && op != Op::del) || klen == 0 || payload.size() != kRecordHeader + klen + std::size_t{vlen})
        return std::nullopt;
    const auto* p = reinterpret_cast<const char*>(payload.data()) + kRecordHeader;
    return Record{op, std::string_view(p, klen), std::string_view(p + klen, vlen)};
}

rpm::Result<void> check_key(std::string_view key) {
    if (key.empty() || key.size() > 0xffff)
        return rpm::Error(rpm::errc::invalid_argument, "a key is 1 to 65535 bytes, not " + std::to_string(key.size()));
    return {};
}

rpm::Result<std::unique_ptr<Store>> Store::open(rpm::ReplicatorOptions opts) {
    // The layout must be known before the replicator exists (recovery ranks
    // members with it): from the region's size, or the file's when it exists.
    std::uint64_t region_size = opts.local_size;
    if (!opts.create) {
        // Through pmem, not file_size: a devdax device's size is not its
        // file size (0), and pmem gives the clear error for a bad path.
        rpm::pmem::OpenOptions po;
        po.sysfs_root = opts.sysfs_root;
        auto existing = rpm::pmem::Region::open(opts.local_path, po);
        if (!existing) return existing.error();
        region_size = existing->size();
    }
    const auto layout = layout_for(region_size > rpm::kReplicaHeaderSize ? region_size - rpm::kReplicaHeaderSize : 0);
    if (!layout)
        return rpm::Error(rpm::errc::bad_size, std::to_string(region_size) + " bytes; a store needs at least " +
                                                   std::to_string(kMinRegionSize));
    // The replicator passes the data area only up to the group's high water
    // mark; this form of rank copes with a log slice cut short.
    opts.recovery_rank = [l = *layout](std::span<const std::byte> data) {
        return rpm::ReplicatedLog::rank(data, l.log_offset, l.log_length);
    };
    auto r = rpm::Replicator::open(std::move(opts));
    if (!r) return r.error();
    std::unique_ptr<Store> s(new Store(std::move(*r), *layout));
    if (auto f = s->format_if_blank(); !f) return f.error();
    auto log = rpm::ReplicatedLog::open(s->r_, layout->log_offset, layout->log_length);
    if (!log) return log.error();
    s->log_.emplace(std::move(*log));
    if (auto b = s->rebuild_index(); !b) return b.error();
    return s;
}

// The KV header only describes the layout (for people and `offline`); a
// header of another layout means the region was made with another size.
rpm::Result<void> Store::format_if_blank() {
    KvHeader want{};
    std::memcpy(want.magic, kMagic, 8);
    want.slots = layout_.slots;
    want.log_offset = layout_.log_offset;
    want.log_length = layout_.log_length;
    KvHeader have;
    std::memcpy(&have, r_.data().data(), sizeof have);
    if (std::memcmp(have.magic, kMagic, 8) == 0) {
        if (std::memcmp(&have, &want, sizeof have) == 0) return {};
        return rpm::Error(rpm::errc::bad_config, "the region holds a store of another layout (" +
                                                     std::to_string(have.slots) + " slots, log of " +
                                                     std::to_string(have.log_length) + " bytes): another --size?");
    }
    report_.formatted = true;
    if (auto w = r_.write(0, std::as_bytes(std::span(&want, 1))); !w) return w.error();
    if (auto c = r_.commit(); !c) return c.error();
    return {};
}

// The log is the truth: index it in DRAM, then store every slot whose local
// copy differs (through the replicator, so the replicas' index follows).
rpm::Result<void> Store::rebuild_index() {
    std::vector<std::uint64_t> fresh(layout_.slots, 0);
    auto entry_at = [&fresh](std::uint64_t slot) { return fresh[slot]; };
    bool full = false;
    live_ = 0;
    log_->for_each([&](const rpm::LogRecord& rec) {
        auto r = decode(rec.payload);
        if (!r) return ++report_.malformed, true;
        auto s = probe(r->key, entry_at);
        if (!s) return full = true, false;
        const bool was_live = s->live;
        fresh[s->slot] = rec.position + 1;
        count_live(r->op, was_live);
        return true;
    });
    if (full) return rpm::Error(rpm::errc::bad_size, "the log holds more keys than the index has slots");
    for (std::uint64_t slot = 0; slot < layout_.slots; ++slot) {
        if (local_entry(slot) == fresh[slot]) continue;
        if (auto w = r_.atomic_write(layout_.index_offset + 8 * slot, fresh[slot]); !w) return w.error();
        ++report_.repaired_slots;
    }
    if (report_.repaired_slots == 0) return {};
    if (auto c = r_.commit(); !c) return c.error();
    return {};
}

std::uint64_t Store::local_entry(std::uint64_t slot) const noexcept {
    return load64(r_.data(), layout_.index_offset + 8 * slot);
}

std::optional<Record> Store::record_at(std::uint64_t entry) const noexcept {
    auto rec = rpm::ReplicatedLog::record_at(r_.data().subspan(layout_.log_offset, layout_.log_length), entry - 1);
    if (!rec) return std::nullopt;
    return decode(rec->payload);
}

// Linear probing; deletes leave their tombstone record in the slot, so a
// chain is never broken and slots are never freed. nullopt: the index is full.
std::optional<Store::Slot> Store::probe(std::string_view key,
                                        const std::function<std::uint64_t(std::uint64_t)>& entry_at) const {
    const std::uint64_t mask = layout_.slots - 1;
    std::uint64_t slot = fnv1a(key) & mask;
    for (std::uint64_t n = 0; n < layout_.slots; ++n, slot = (slot + 1) & mask) {
        const std::uint64_t entry = entry_at(slot);
        if (entry == 0) return Slot{slot, 0, false};
        auto r = record_at(entry);
        if (r && r->key == key) return Slot{slot, entry, true, r->op == Op::put};
    }
    return std::nullopt;
}

void Store::prefetch(std::string_view key) const noexcept {
    const std::uint64_t slot = fnv1a(key) & (layout_.slots - 1);
    __builtin_prefetch(r_.data().data() + layout_.index_offset + 8 * slot);
}

std::optional<Store::Slot> Store::probe_local(std::string_view key) const {
    return probe(key, [this](std::uint64_t slot) { return local_entry(slot); });
}

rpm::Result<void> Store::append_and_index(Op op, std::string_view key, std::string_view value) {
    if (auto k = check_key(key); !k) return k;
    const auto slot = probe_local(key);
    if (!slot) return rpm::Error(rpm::errc::bad_size, "the index is full (" + std::to_string(layout_.slots) + " keys)");
    const bool was_live = slot->live;  // the probe read its record already
    auto a = log_->append(encode(op, key, value));
    if (!a) return a.error();
    // Before the commit: a crash in between leaves the index stale, and the
    // next open repairs it from the log.
    if (auto w = r_.atomic_write(layout_.index_offset + 8 * slot->slot, a->position + 1); !w) return w.error();
    count_live(op, was_live);
    return {};
}

rpm::Result<void> Store::put_uncommitted(std::string_view key, std::string_view value) {
    return append_and_index(Op::put, key, value);
}

rpm::Result<void> Store::put(std::string_view key, std::string_view value) {
    if (auto w = append_and_index(Op::put, key, value); !w) return w;
    if (auto c = r_.commit(); !c) return c.error();
    return {};
}

rpm::Result<bool> Store::remove_uncommitted(std::string_view key) {
    if (!get(key)) return false;
    if (auto w = append_and_index(Op::del, key, {}); !w) return w.error();
    return true;
}

rpm::Result<bool> Store::remove(std::string_view key) {
    auto r = remove_uncommitted(key);
    if (!r || !*r) return r;
    if (auto c = r_.commit(); !c) return c.error();
    return true;
}

std::optional<std::string> Store::get(std::string_view key) const {
    auto slot = probe_local(key);
    if (!slot || !slot->found) return std::nullopt;
    auto r = record_at(slot->entry);
    if (!r || r->op != Op::put) return std::nullopt;
    return std::string(r->value);
}

void Store::for_each_live(const std::function<void(std::string_view, std::string_view)>& fn) const {
    for (std::uint64_t slot = 0; slot < layout_.slots; ++slot) {
        const std::uint64_t entry = local_entry(slot);
        if (entry == 0) continue;
        if (auto r = record_at(entry); r && r->op == Op::put) fn(r->key, r->value);
    }
}

Stats Store::stats() const {
    Stats s;
    s.records = log_->records();
    s.live_keys = live_;
    s.slots = layout_.slots;
    s.log_used = log_->used();
    s.log_capacity = log_->capacity();
    s.generation = r_.generation();
    s.local = r_.frontier(rpm::Frontier::local);
    s.quorum = r_.frontier(rpm::Frontier::quorum);
    s.all = r_.frontier(rpm::Frontier::all);
    s.durability = rpm::to_string(r_.durability());
    s.members = r_.members();
    s.needed = r_.needed();
    s.replicas = r_.replicas();
    return s;
}

rpm::Result<std::map<std::string, std::string>> scan_region(std::span<const std::byte> data) {
    auto layout = layout_for(data.size());
    if (!layout) return rpm::Error(rpm::errc::bad_size, std::to_string(data.size()) + " bytes of data area is too small");
    // A KV header, when there, says where the log is (a region made larger
    // than the primary's keeps the primary's layout).
    KvHeader h;
    std::memcpy(&h, data.data(), sizeof h);
    if (std::memcmp(h.magic, kMagic, 8) == 0 && h.log_offset <= data.size() && h.log_length <= data.size() - h.log_offset)
        *layout = Layout{h.slots, kKvHeaderSize, h.log_offset, h.log_length};
    auto slice = data.subspan(layout->log_offset, layout->log_length);
    if (rpm::ReplicatedLog::rank(slice) == 0) return rpm::Error(rpm::errc::invalid_argument, "no kvstore log there");
    return replay(rpm::ReplicatedLog::scan(slice));
}

} // namespace kv
