// What each opaque handle of <rpm/rpm.h> holds: the C++ object it stands
// for, and nothing else the C++ API does not already keep. The C functions
// in this folder are the only code that sees these definitions.
#pragma once

#include <rpm/rpm.h>

#include <rpm/client.hpp>
#include <rpm/flush_plan.hpp>
#include <rpm/replicated_log.hpp>
#include <rpm/replication.hpp>
#include <rpm/server.hpp>

#include <vector>

struct rpm_client_opts {
    rpm::ClientOptions o;
};
struct rpm_conn {
    rpm::Connection c;
};
struct rpm_mem {
    rpm::LocalMemory m;
};
struct rpm_region_opts {
    rpm::RegionOptions o;
};
struct rpm_region {
    rpm::RemoteRegion r;
};
struct rpm_replicator_opts {
    rpm::ReplicatorOptions o;
};
struct rpm_replicator {
    rpm::Replicator r;
};
struct rpm_rlog {
    rpm::ReplicatedLog l;
};
struct rpm_server_opts {
    rpm::ServerOptions o;
};
struct rpm_server {
    rpm::Server s;
};
struct rpm_probe {
    std::vector<rpm::flush::PlannedDecision> decisions;
};

namespace rpm::capi {

/// RETURN VALUE: the bytes at `p`, `len` long (empty for len 0, whatever p).
inline std::span<const std::byte> bytes(const void* p, std::size_t len) noexcept {
    return len == 0 ? std::span<const std::byte>() : std::span(static_cast<const std::byte*>(p), len);
}
inline std::span<std::byte> bytes(void* p, std::size_t len) noexcept {
    return len == 0 ? std::span<std::byte>() : std::span(static_cast<std::byte*>(p), len);
}

/// A C completion callback as the C++ API's: done(ctx, status) with
/// rpm_errormsg() set to a failure's detail first.
Callback completion(rpm_completion_fn done, void* ctx);

/// The C slices as C++ ones, checked: RPM_E_INVALID_ARGUMENT for a NULL
/// array, no slice, more than RPM_MAX_SLICES, or a NULL data pointer with
/// a length. RETURN VALUE: 0, with `out` filled.
int to_slices(const char* function, const rpm_slice* slices, std::size_t count, std::vector<WriteSlice>& out);

} // namespace rpm::capi
