// Fencing at the server (docs/replication.md, "Fencing"): the highest
// primary term each region has accepted, kept durably in a small file, and
// the lock that orders a newer term's revocation against requests in flight.
#pragma once

#include <rpm/result.hpp>

#include "core/unique_fd.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>

namespace rpm::server {

struct Region;

/// One region's fence. Request handlers hold `mu` shared from their grant
/// check to the end of their stores; a newer term's open holds it
/// exclusively while it records the term and revokes the older sessions:
/// so once that open is granted, no request of an older term is still
/// changing the region, and none will.
struct Fence {
    std::shared_mutex mu;
    std::uint64_t term = 0;                    ///< under mu
    std::optional<std::filesystem::path> file; ///< where `term` is kept; none: cannot be fenced
};

/// Told, under the region's exclusive fence lock, that `r` now belongs to
/// `term`: every session holding a grant of an older term on it must lose
/// it (listeners close such sessions; rdma:// also re-registers the
/// region's memory so the old rkey fails).
class FenceHook {
public:
    virtual ~FenceHook() = default;
    virtual void region_fenced(Region& r, std::uint64_t term) noexcept = 0;
};

/// The fence rule, the one place it is stated: what was opened with term
/// `had` is fenced once the region's term is `now` > `had`. Read `now`
/// (Fence::term) under the fence's lock.
[[nodiscard]] constexpr bool fenced(std::uint64_t now, std::uint64_t had) noexcept { return had < now; }

/// Why a connection that opened region `name` with term `had` lost it to
/// term `now`: the one wording of the handlers' refusal and the
/// transports' goodbye.
std::string fenced_detail(std::string_view name, std::uint64_t now, std::uint64_t had);

/// The fence check of a request, or of a grant being handed out, on region
/// `name` (whose term is `now`) by a session that opened it with term
/// `had`: the request handlers and the transports call it, with the
/// region's fence lock held shared until the request's stores are done.
/// ERRORS: errc::fenced when fenced(now, had) (detail: fenced_detail).
Result<void> check_term(std::string_view name, std::uint64_t now, std::uint64_t had);

/// The fence file of region `name` at `path`: `<fence_dir>/<name>.fence`
/// (a name with bytes outside [A-Za-z0-9._-], or starting with '.', is
/// written in hex: `x-<hex>.fence`); without fence_dir, `<path>.fence`
/// beside a regular file; nullopt for a device without fence_dir.
std::optional<std::filesystem::path> fence_file_for(std::string_view name, const std::filesystem::path& path,
                                                    const std::optional<std::filesystem::path>& fence_dir);

/// The term kept in `file`: 0 when it does not exist.
/// ERRORS: errc::bad_config (malformed: detail names the file),
/// errc::io_error (unreadable).
Result<std::uint64_t> load_term(const std::filesystem::path& file);

/// Lock region `name`'s file `path` (flock; a devdax device too) until the
/// returned descriptor is closed: shared by a server for as long as it
/// serves the region, exclusive by `rpm-server reset-term`
/// (rpm::OfflineFence). So a term is never reset under a running server,
/// whose memory of the term would then differ from its file, and a server
/// never starts while a reset is under way. Advisory: only these two take it.
/// ERRORS: errc::path_not_found (no such path); errc::io_error (held the
/// other way: the detail says by whom; or the path cannot be opened, or
/// flock failed).
Result<UniqueFd> lock_region_file(std::string_view name, const std::filesystem::path& path, bool exclusive);

/// Keep `term` in `file` durably: written beside it, fsync'ed, renamed
/// over it, and the directory fsync'ed.
/// ERRORS: errc::io_error (detail: the file and the failing step).
Result<void> store_term(const std::filesystem::path& file, std::uint64_t term);

} // namespace rpm::server
