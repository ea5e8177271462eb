// The regions a client connection has been granted (each with its remote
// memory and the flusher its flush method chose) and the application's
// registered memory (register_memory). Its own object so that lookups are
// written once; the connection calls it under its mu_.
#pragma once

#include "protocol/protocol.hpp"
#include "transport/rdma/handles.hpp"
#include "transport/rdma/op_queue.hpp"
#include "transport/rdma/user_memory.hpp"

#include <rpm/flush_plan.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <vector>

namespace rpm::rdma {

class ClientConn;
struct Flusher;

struct RemoteRegion {
    RemoteMrHandle mr;
    const Flusher* flusher = nullptr;  ///< the grant's method, chosen once (flusher_for)
    std::uint64_t size = 0;
};
/// How one region's flushes go on the wire, chosen once when its grant
/// is applied (flusher_for, client_flush.cpp), as librpma picks one
/// flush function per connection: the posting paths call through it and
/// never ask the method again. One per method: read_after_write (an
/// 8-byte read), send_flush (a Flush frame), native_flush (IBTA FLUSH).
struct Flusher {
    flush::Method method;
    /// Queue what flushes `ranges` of `r`, behind what was queued before.
    void (ClientConn::*submit)(const RemoteRegion& r, std::uint32_t grant_id, std::span<const proto::Range> ranges,
                               client::Done&& done);
    /// A direct one-slice persist (try_direct_persist): its flush takes
    /// a send slot; the kind its completion finishes it as.
    bool direct_slot;
    OpKind direct_kind;
    /// Before anything is taken (nullptr: nothing to do). RETURN VALUE:
    /// false: the persist goes through the queue instead.
    bool (ClientConn::*prepare_direct)(std::uint32_t grant_id, const proto::Slice& s);
    /// Queue the flush behind the direct write (deferred doorbell) and
    /// set what the direct operation owes. RETURN VALUE: the Api's code.
    int (ClientConn::*post_direct)(const RemoteRegion& r, const proto::Slice& s);
};

class RegionTable {
public:
    /// The region of grant `grant_id`, or nullptr.
    [[nodiscard]] const RemoteRegion* find(std::uint32_t grant_id) const {
        auto it = regions_.find(grant_id);
        return it == regions_.end() ? nullptr : &it->second;
    }
    void add(std::uint32_t grant_id, RemoteRegion r) { regions_[grant_id] = std::move(r); }
    /// The registered memory `[p, p + n)` lies in, while its handle lives.
    /// Inline: most connections register nothing, and every direct
    /// operation asks (a call saved per operation).
    std::shared_ptr<UserMemory> user_memory(const std::byte* p, std::size_t n) {
        return user_mem_.empty() ? nullptr : find_user_memory(p, n);
    }
    void add_user_memory(const std::shared_ptr<UserMemory>& m) { user_mem_.push_back(m); }

private:
    std::shared_ptr<UserMemory> find_user_memory(const std::byte* p, std::size_t n) {
        std::shared_ptr<UserMemory> found;
        std::erase_if(user_mem_, [&](const std::weak_ptr<UserMemory>& w) {
            auto m = w.lock();
            if (m && !found && m->contains(p, n)) found = m;
            return !m;  // its handle is gone
        });
        return found;
    }

    std::map<std::uint32_t, RemoteRegion> regions_;
    std::vector<std::weak_ptr<UserMemory>> user_mem_;
};

} // namespace rpm::rdma
