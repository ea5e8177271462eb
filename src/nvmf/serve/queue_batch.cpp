// QueueCommands' batches (QueueCommands::on_commands): a queue's Reads and
// in-capsule Writes that arrived together run on the engine at once, so
// the backend sees the queue's depth rather than one command at a time.
#include "nvmf/serve/queue_commands.hpp"
#include "core/log.hpp"

#include <cstring>

namespace rpm::nvmf::target {

namespace {
// Most commands in one batch (the engine's ring puts 32 in flight at once).
constexpr std::size_t max_batch = 32;
// Each command's data starts on a 4 KiB boundary of the staging buffer (O_DIRECT).
constexpr std::size_t align = 4096;
} // namespace

std::uint32_t QueueCommands::batchable(const Capsule& c) {
    const auto& s = c.sqe;
    const auto& d = c.data;
    if ((s.flags() & 0xC3) != wire::psdt_sgl || d.status != 0) return 0;
    if (!io_queue() || !offload_ || !offload_->runs_many() || !controller_->ready()) return 0;
    const bool read = s.opcode() == wire::io::read;
    if (read ? d.where != CommandData::Where::host
             : s.opcode() != wire::io::write || d.where != CommandData::Where::in_capsule || !d.intact ||
                   d.bytes.size() != d.length || d.length > env_.registry->limits().in_capsule_data)
        return 0;
    const auto bs = block_size(s.nsid());
    if (bs == 0 || std::uint64_t((s.cdw(12) & 0xFFFF) + 1) * bs != d.length) return 0;
    return d.length;
}

bool QueueCommands::on_commands(std::span<const Capsule> capsules) {
    for (std::size_t i = 0; i < capsules.size();) {
        batch_.clear();
        batch_bytes_.clear();
        auto staging = offload_ && io_queue() ? io_buffer() : std::span<std::uint8_t>{};
        std::size_t used = 0, j = i;
        for (; j < capsules.size() && batch_.size() < max_batch; ++j) {
            const auto len = batchable(capsules[j]);
            if (len == 0 || used + len > staging.size()) break;
            const auto& c = capsules[j];
            rpm::detail::logf(LogLevel::trace, "nvmf", "qid %u cid %#x op %#x batched, len %u", qid_, c.sqe.cid(), c.sqe.opcode(),
                         len);
            if (c.sqe.opcode() == wire::io::write) std::memcpy(staging.data() + used, c.data.bytes.data(), len);
            batch_.push_back({std::span<const std::uint8_t, 64>(c.sqe.b.data(), 64), used, 0});
            batch_bytes_.push_back(len);
            used += (len + align - 1) / align * align;
        }
        if (batch_.size() < 2) {
            // A command that runs alone (or a batch of one: the plain path).
            if (!on_command(capsules[i].sqe, capsules[i].data)) return false;
            ++i;
            continue;
        }
        if (!run_batch(staging)) return false;
        i = j;
    }
    return true;
}

bool QueueCommands::run_batch(std::span<std::uint8_t> staging) {
    offload_->execute_many(batch_);
    env_.stats->offloaded += batch_.size();
    for (std::size_t k = 0; k < batch_.size(); ++k) {
        const auto& c = batch_[k];
        wire::Sqe sqe;
        std::memcpy(sqe.b.data(), c.sqe.data(), wire::sqe_len);
        const bool read = sqe.opcode() == wire::io::read;
        const bool ok = c.status == wire::sc::success;
        if (ok) controller_->record_io(!read, batch_bytes_[k]);
        sgl_len_ = batch_bytes_[k];
        const auto data = read && ok ? std::span<const std::uint8_t>(staging.subspan(c.offset, batch_bytes_[k]))
                                     : std::span<const std::uint8_t>{};
        if (!respond(sqe, c.status, 0, 0, data)) return false;
    }
    return true;
}

} // namespace rpm::nvmf::target
