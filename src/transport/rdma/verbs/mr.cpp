// Memory registrations: local ones (ibv_reg_mr with the access the usage
// needs) and the peer's, known from a descriptor the grant carries:
// address, size and rkey (little-endian) and the usage byte.
#include "transport/rdma/verbs/objects.hpp"

#include <cerrno>
#include <cstring>

namespace rpm::rdma::verbs {
namespace {

constexpr std::size_t kDescriptorSize = 8 + 8 + 4 + 1;
constexpr int kAllUsage = kUsageReadSrc | kUsageReadDst | kUsageWriteSrc | kUsageWriteDst | kUsageFlushVisibility |
                          kUsageFlushPersistent | kUsageSend | kUsageRecv;
// The descriptor carries the usage in one byte.
static_assert(kAllUsage <= 0xFF, "a usage bit beyond the descriptor's byte");

int access_for(int usage) noexcept {
    int a = 0;
    // A flush is a read of the region (read-after-write): remote read.
    if (usage & (kUsageReadSrc | kUsageFlushVisibility | kUsageFlushPersistent)) a |= IBV_ACCESS_REMOTE_READ;
    // Remote write needs local write (verbs); atomic writes land here too.
    if (usage & kUsageWriteDst) a |= IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
    if (usage & (kUsageReadDst | kUsageRecv)) a |= IBV_ACCESS_LOCAL_WRITE;
    return a;
}

void put(std::uint8_t*& p, std::uint64_t v, int bytes) noexcept {
    for (int i = 0; i < bytes; ++i) *p++ = static_cast<std::uint8_t>(v >> (8 * i));
}

std::uint64_t get(const std::uint8_t*& p, int bytes) noexcept {
    std::uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v |= std::uint64_t{*p++} << (8 * i);
    return v;
}

} // namespace

int mr_reg(Peer* peer, void* ptr, std::size_t size, int usage, LocalMr** mr) {
    auto* p = obj<PeerObj>(peer);
    if (p == nullptr || ptr == nullptr || size == 0 || mr == nullptr || usage == 0 || (usage & ~kAllUsage) != 0)
        return kErrInval;
    ibv_mr* m = p->v->reg_mr(p->pd, ptr, size, access_for(usage));
    if (m == nullptr) return fail("ibv_reg_mr", errno, errno == EINVAL ? kErrInval : kErrProvider);
    *mr = handle<LocalMr>(new LocalMrObj{p->v, m, usage});
    return 0;
}

int mr_dereg(LocalMr** mr) {
    if (mr == nullptr) return kErrInval;
    auto* m = obj<LocalMrObj>(*mr);
    *mr = nullptr;
    if (m == nullptr) return 0;
    const int ret = m->v->dereg_mr(m->mr);
    delete m;
    return ret == 0 ? 0 : fail("ibv_dereg_mr", ret);
}

int mr_get_descriptor_size(const LocalMr* mr, std::size_t* n) {
    if (mr == nullptr || n == nullptr) return kErrInval;
    *n = kDescriptorSize;
    return 0;
}

int mr_get_descriptor(const LocalMr* mr, void* desc) {
    const auto* m = obj<LocalMrObj>(mr);
    if (m == nullptr || desc == nullptr) return kErrInval;
    auto* p = static_cast<std::uint8_t*>(desc);
    put(p, reinterpret_cast<std::uintptr_t>(m->mr->addr), 8);
    put(p, m->mr->length, 8);
    put(p, m->mr->rkey, 4);
    put(p, static_cast<std::uint64_t>(m->usage), 1);
    return 0;
}

int mr_remote_from_descriptor(const void* desc, std::size_t n, RemoteMr** mr) {
    if (desc == nullptr || mr == nullptr || n != kDescriptorSize) return kErrInval;
    const auto* p = static_cast<const std::uint8_t*>(desc);
    RemoteMrObj r;
    r.addr = get(p, 8);
    r.size = get(p, 8);
    r.rkey = static_cast<std::uint32_t>(get(p, 4));
    r.usage = static_cast<int>(get(p, 1));
    // The remote side cannot name usage bits we do not know, nor wrap.
    if ((r.usage & ~kAllUsage) != 0 || r.size == 0 || r.addr + r.size < r.addr) return kErrInval;
    *mr = handle<RemoteMr>(new RemoteMrObj(r));
    return 0;
}

int mr_remote_get_size(const RemoteMr* mr, std::size_t* n) {
    if (mr == nullptr || n == nullptr) return kErrInval;
    *n = obj<RemoteMrObj>(mr)->size;
    return 0;
}

int mr_remote_get_flush_type(const RemoteMr* mr, int* type) {
    if (mr == nullptr || type == nullptr) return kErrInval;
    *type = obj<RemoteMrObj>(mr)->usage & (kUsageFlushVisibility | kUsageFlushPersistent);
    return 0;
}

int mr_remote_delete(RemoteMr** mr) {
    if (mr == nullptr) return kErrInval;
    delete obj<RemoteMrObj>(*mr);
    *mr = nullptr;
    return 0;
}

} // namespace rpm::rdma::verbs
