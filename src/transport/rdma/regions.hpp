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

struct Flusher;

struct RemoteRegion {
    RemoteMrHandle mr;
    const Flusher* flusher = nullptr;  ///< the grant's method, chosen once (Flusher::of, flusher.hpp)
    std::uint64_t size = 0;
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
