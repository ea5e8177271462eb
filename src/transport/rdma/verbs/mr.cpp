// Memory registrations: local ones (ibv_reg_mr with the access the usage
// needs) and the peer's, known from a descriptor the grant carries:
// address, size and rkey (little-endian) and the usage byte.
#include "transport/rdma/verbs/objects.hpp"

#include "core/fault.hpp"

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

// What a native persistent FLUSH needs of the responder's registration:
// its own access bit, and GLOBAL with it (the persistent placement type
// makes the range visible too; a responder checks each type it is asked
// for against its own bit). RPM_FAULT=flush-global-only leaves PERSISTENT
// out while mr_get_native_flush still claims it: the lab's control that a
// FLUSH the memory does not admit fails on the wire (docs/testing.md).
int native_flush_access() noexcept {
    return fault_planted("flush-global-only") ? kAccessFlushGlobal : kAccessFlushGlobal | kAccessFlushPersistent;
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
    // Native persistent FLUSH where the device and the build have it. A
    // device may refuse the access for this memory (rxe does unless every
    // page is persistent memory): then it is registered as it always was,
    // without native FLUSH, and mr_get_native_flush says so.
    ibv_mr* m = nullptr;
    int native = 0;
    if (p->native_flush && (usage & kUsageFlushPersistent) != 0) {
        m = p->v->reg_mr(p->pd, ptr, size, access_for(usage) | native_flush_access());
        if (m != nullptr) native = kUsageFlushPersistent;
    }
    if (m == nullptr) m = p->v->reg_mr(p->pd, ptr, size, access_for(usage));
    if (m == nullptr) return fail("ibv_reg_mr", errno, errno == EINVAL ? kErrInval : kErrProvider);
    *mr = handle<LocalMr>(new LocalMrObj{p->v, m, usage, native});
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

int mr_get_native_flush(const LocalMr* mr, int* usage) {
    if (mr == nullptr || usage == nullptr) return kErrInval;
    *usage = obj<LocalMrObj>(mr)->native_flush;
    return 0;
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
