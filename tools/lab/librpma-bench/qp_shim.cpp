// --flush-path read_after_write: librpma's read-after-write ("APM") path on
// a device that has FLUSH.
//
// librpma 1.3 takes its flush path from the queue pair (src/flush.c: native
// FLUSH when the QP can post one, its read-after-write otherwise) and asks
// for FLUSH on every QP whose device reports it (src/peer.c), so on rxe of
// Linux 6.12 it never takes the read-after-write path by itself. The client
// defines rdma_create_qp_ex (librdmacm) itself: the executable's definition
// comes first in the dynamic linker's lookup (CMakeLists.txt exports it), so
// librpma's call lands here, and without IBV_QP_EX_WITH_FLUSH the QP is as
// on an RNIC without FLUSH. Which path ran is read off each flush's
// completion (client.cpp), never assumed from this flag.
#include "common.hpp"

#include <dlfcn.h>
#include <rdma/rdma_cma.h>

#include <atomic>
#include <cerrno>

namespace lrb {
namespace {
std::atomic<bool> qp_without_flush{false};
}
void create_qps_without_flush() { qp_without_flush = true; }
}  // namespace lrb

extern "C" int rdma_create_qp_ex(rdma_cm_id* id, ibv_qp_init_attr_ex* attr) {
  using Create = int (*)(rdma_cm_id*, ibv_qp_init_attr_ex*);
  static const auto real = reinterpret_cast<Create>(dlsym(RTLD_NEXT, "rdma_create_qp_ex"));
  if (real == nullptr) {
    errno = ENOSYS;
    return -1;
  }
  if (attr != nullptr && lrb::qp_without_flush) attr->send_ops_flags &= ~static_cast<std::uint64_t>(IBV_QP_EX_WITH_FLUSH);
  return real(id, attr);
}
