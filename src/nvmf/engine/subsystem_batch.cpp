// SubsystemState::execute_many: a queue's commands that arrived together,
// their Reads and Writes in flight on the drive at once (ThreadRing::
// run_many), each answered with the status execute() would give it.
#include "nvmf/engine/io.hpp"
#include "nvmf/engine/ring.hpp"
#include "nvmf/engine/subsystem.hpp"
#include "nvmf/wire.hpp"

#include <vector>

namespace rpm::nvmf::detail {

namespace {

struct Pending {
    StagedCommand* cmd;
    IoCommand io;
    std::shared_ptr<const Namespace> ns;
    std::span<std::byte> data;
};

} // namespace

void SubsystemState::execute_many(std::span<StagedCommand> cmds, std::span<std::byte> staging, bool offloaded) {
    std::vector<Pending> pending;
    std::vector<RingOp> ops;
    pending.reserve(cmds.size());
    ops.reserve(cmds.size());
    for (auto& c : cmds) {
        const auto io = IoCommand::decode(c.sqe);
        const bool rw = io.opcode == wire::io::read || io.opcode == wire::io::write;
        auto data = c.offset <= staging.size() ? staging.subspan(c.offset) : std::span<std::byte>{};
        std::shared_ptr<const Namespace> ns = rw ? find(io.nsid) : nullptr;
        const bool allowed = !offloaded || (attrs_.offload_types & io.offload_type()) != 0;
        if (!ns || !allowed || ns->backend->ring_fd() < 0 ||
            check_transfer(io, *ns, data.size(), attrs_.max_io_size) != wire::sc::success) {
            c.status = execute(c.sqe, data, offloaded);  // its status, or a backend that cannot join
            continue;
        }
        counters_.commands.fetch_add(1, std::memory_order_relaxed);
        data = data.first(std::size_t(io.nlb) * ns->block_size);
        ops.push_back({.write = io.opcode == wire::io::write, .fd = ns->backend->ring_fd(), .buf = data.data(),
                       .len = data.size(), .offset = io.slba * ns->block_size, .dsync = io.fua, .result = 0});
        pending.push_back({&c, io, std::move(ns), data});
    }
    ThreadRing::local().run_many(ops);
    for (std::size_t i = 0; i < pending.size(); ++i) {
        auto& p = pending[i];
        bool ok = ops[i].result == int(p.data.size());
        if (!ok) {
            // Short, or refused by the ring (a buffer O_DIRECT cannot take):
            // the backend's own call finishes it, bouncing where it must.
            const auto offset = p.io.slba * p.ns->block_size;
            ok = p.io.opcode == wire::io::read ? bool(p.ns->backend->read(offset, p.data))
                                               : bool(p.ns->backend->write(offset, p.data, p.io.fua));
        }
        p.cmd->status = count_transfer(p.io, p.data.size(), ok, counters_);
        if (p.cmd->status != wire::sc::success) counters_.errors.fetch_add(1, std::memory_order_relaxed);
    }
}

} // namespace rpm::nvmf::detail
