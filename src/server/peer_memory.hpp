// A served region's bytes are shared with the remote peers that were granted
// it. Requests of different connections that touch the same bytes are not
// ordered against each other, by contract, exactly as RDMA reads and writes
// from different peers are not: a read that overlaps another connection's
// write may see old bytes, new bytes or a mix (docs/protocol.md, "Between
// connections"). The server's own stores and loads of those bytes therefore
// race by design, and ThreadSanitizer is told not to track them; every other
// access of a server thread (sessions, queues, grants) stays tracked.
#pragma once

#if defined(__SANITIZE_THREAD__)
extern "C" void AnnotateIgnoreReadsBegin(const char* file, int line);
extern "C" void AnnotateIgnoreReadsEnd(const char* file, int line);
extern "C" void AnnotateIgnoreWritesBegin(const char* file, int line);
extern "C" void AnnotateIgnoreWritesEnd(const char* file, int line);
#endif

namespace rpm::server {

/// For the lifetime of this object the calling thread's accesses are the
/// peer-shared region's: keep its scope to the copy (or send) itself.
class PeerMemoryAccess {
public:
#if defined(__SANITIZE_THREAD__)
    PeerMemoryAccess() noexcept {
        AnnotateIgnoreReadsBegin(__FILE__, __LINE__);
        AnnotateIgnoreWritesBegin(__FILE__, __LINE__);
    }
    ~PeerMemoryAccess() {
        AnnotateIgnoreWritesEnd(__FILE__, __LINE__);
        AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
    }
#else
    // User-provided, so a scope object is not an "unused variable".
    PeerMemoryAccess() noexcept {}  // NOLINT(modernize-use-equals-default)
#endif
    PeerMemoryAccess(const PeerMemoryAccess&) = delete;
    PeerMemoryAccess& operator=(const PeerMemoryAccess&) = delete;
};

} // namespace rpm::server
