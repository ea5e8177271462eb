// Recovery at open: find the most advanced reachable member, make the local
// copy equal to it, and start a new generation. A member is more advanced
// when a later generation synchronised it, then when recovery_rank (for a log:
// the length of its valid chain) says so.
#include "replication/impl.hpp"
#include "replication/quorum.hpp"

#include <algorithm>
#include <cstring>
#include <tuple>

namespace rpm {

using replication::DecodedHeader;

Result<std::vector<std::byte>> Replicator::Impl::fetch(std::size_t i, std::uint64_t length) const {
    std::vector<std::byte> out(length);
    RemoteRegion r = *replicas[i].region;  // a handle; reads are not const
    for (std::uint64_t off = 0; off < length; off += replication::kResyncChunk) {
        const auto n = std::min<std::uint64_t>(replication::kResyncChunk, length - off);
        if (auto got = r.read(kReplicaHeaderSize + off, std::span(out).subspan(off, n)); !got.has_value())
            return got.error().with_context(replicas[i].spec.uri + ": reading its data for recovery");
    }
    return out;
}

Result<int> Replicator::Impl::choose_best(std::uint64_t length, std::vector<std::byte>& best_data) {
    const auto lh = replication::decode_header(local->bytes());
    // Key: (generation, rank, local first); without recovery_rank,
    // (generation, local first, position). -1 stands for the local copy.
    using Key = std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>;
    std::optional<Key> best_key;
    int best = -1;
    auto key = [&](int who, const DecodedHeader& h, std::span<const std::byte> bytes) -> Key {
        const std::uint64_t mine = who < 0 ? 1 : 0;
        if (opts.recovery_rank) return {h.h.generation, opts.recovery_rank(bytes), mine};
        return {h.h.generation, mine, h.h.position};
    };
    if (lh.valid) best_key = key(-1, lh, data.first(length));
    for (std::size_t i = 0; i < replicas.size(); ++i) {
        const auto& m = replicas[i];
        if (!m.region || !m.opened_header.valid) continue;
        std::vector<std::byte> theirs;
        if (opts.recovery_rank) {
            auto f = fetch(i, length);
            if (!f) return f.error();
            theirs = std::move(*f);
        }
        const Key k = key(static_cast<int>(i), m.opened_header, theirs);
        if (best_key && k <= *best_key) continue;
        best_key = k;
        best = static_cast<int>(i);
        best_data = std::move(theirs);
    }
    if (best >= 0 && best_data.size() != length) {
        auto f = fetch(static_cast<std::size_t>(best), length);
        if (!f) return f.error();
        best_data = std::move(*f);
    }
    return best;
}

Result<void> Replicator::Impl::recover(const std::string& unreachable) {
    const auto lh = replication::decode_header(local->bytes());
    bool existing = lh.valid;
    replication::GroupId group = lh.h.group;
    for (auto& m : replicas) {
        if (!m.region || !m.opened_header.valid) continue;
        if (!existing) group = m.opened_header.h.group, existing = true;
        if (m.opened_header.h.group == group) continue;
        if (!opts.adopt_foreign)
            return Error(errc::bad_config, m.spec.uri + " region " + m.spec.region +
                                               " holds another group's data; set adopt_foreign to overwrite it");
        m.opened_header.valid = false;
    }
    std::uint64_t hw = 0, generation = 0;
    Lsn position = 0;
    // Members that can answer for the group: the local copy when it holds
    // it (it is drained before every commit returns, counted or not), and
    // every reachable replica. A blank replica is a new member (the group
    // grew, or a node was replaced), known to hold nothing.
    unsigned counted = lh.valid ? 1 : 0;
    auto take = [&](const replication::Header& h) {
        hw = std::max(hw, h.high_water);
        generation = std::max(generation, h.generation);
        position = std::max(position, h.position);
    };
    if (lh.valid) take(lh.h);
    for (const auto& m : replicas) {
        if (!m.region) continue;
        ++counted;
        if (m.opened_header.valid) take(m.opened_header.h);
    }
    counted = std::min(counted, members);
    // Every committed write is on `needed` members; to be sure of finding
    // it, fewer than `needed` may be missing: a read quorum must be here.
    if (existing && counted < replication::read_quorum(members, needed))
        return Error(errc::quorum_lost, "recovery needs " + std::to_string(replication::read_quorum(members, needed)) +
                                            " members that can answer for the group (the local copy, reachable replicas), found " + std::to_string(counted) +
                                            (unreachable.empty() ? "" : " (unreachable: " + unreachable + ")"));
    hw = std::min<std::uint64_t>(hw, data.size());
    std::vector<std::byte> best_data;
    auto best = choose_best(hw, best_data);
    if (!best) return best.error();
    // A group that never wrote (high-water 0) has no bytes to take: memcpy
    // from an empty vector's null data is undefined even for 0 bytes.
    if (*best >= 0 && !best_data.empty()) {
        std::memcpy(data.data(), best_data.data(), best_data.size());
        local->persist(data.data(), best_data.size());
    }
    start_generation({existing ? group : replication::random_group(), generation + 1, hw, position, data.size()});
    return {};
}

void Replicator::Impl::start_generation(const replication::Header& h) {
    header = h;
    auto raw = replication::encode_header(header);
    std::memcpy(local->bytes().data(), raw.data(), raw.size());
    local->persist(local->bytes().data(), raw.size());
    last_lsn = h.position;
    local_frontier = quorum_frontier = all_frontier = h.position;
    for (auto& m : replicas) {
        m.full_resync = true;
        m.frontier = h.position;
        if (m.region) m.state = ReplicaState::syncing;
    }
}

} // namespace rpm
