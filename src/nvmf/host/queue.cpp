// A host queue over the fabric the options name.
#include "nvmf/host/queue.hpp"
#include "nvmf/host/rdma_queue.hpp"

namespace rpm::nvmf::host {

Result<std::unique_ptr<Queue>> Queue::open(const HostOptions& o, std::uint16_t qid, std::uint16_t depth) {
    if (o.transport == Transport::rdma) return RdmaHostQueue::open(o, qid, depth);
    return TcpHostQueue::open(o);
}

} // namespace rpm::nvmf::host
