// rpm-probe --dirty-shutdown-since FILE (issue 52): each nvdimm's dirty
// shutdown count now against the one in FILE, an earlier `rpm-probe --json`
// saved with the data. The kernel shows only the count; a count that moved
// since the data was written is what says a power loss may have cost some.
#pragma once

#include <rpm/result.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rpm::probe {

struct Report;

/// One nvdimm as the baseline or this probe saw it.
struct DirtyEntry {
    std::string nmem;                     ///< "nmem0"
    std::string memdev;                   ///< the CXL memdev ("mem0"), "" for NFIT or unknown
    std::optional<std::uint64_t> serial;  ///< the CXL memdev's serial; nullopt for NFIT or unknown
    std::optional<std::uint64_t> count;   ///< the dirty shutdown count; nullopt: not reported
};

enum class DirtyStatus {
    unchanged,    ///< a count in both, equal
    moved,        ///< a count in both, different (a wrap to 0 included)
    gone,         ///< a count in the baseline, the device is not here now
    no_count,     ///< a count in the baseline, none now (an older kernel booted?)
    no_baseline,  ///< a count now, none in the baseline (a new device, or a kernel that did not show it)
};

std::string_view to_string(DirtyStatus s);

/// One device matched across the two probes. Devices with a count on
/// neither side are left out: there is nothing to say about them.
struct DirtyChange {
    std::optional<DirtyEntry> before;  ///< nullopt: not in the baseline
    std::optional<DirtyEntry> now;     ///< nullopt: not here now
    DirtyStatus status = DirtyStatus::unchanged;
};

struct DirtySince {
    std::string file;                  ///< the baseline, as given
    std::vector<DirtyChange> devices;  ///< in this probe's order, then the baseline's gone ones
    [[nodiscard]] bool any_moved() const;
};

/// Compare the counts in `now` with those in `file`. CXL devices are
/// matched by memdev serial, NFIT nvdimms (and memdevs without a unique
/// serial) by nmem name.
/// ERRORS: errc::io_error when `file` cannot be read, errc::invalid_argument
/// when it is not rpm-probe --json output; the detail names the file and why.
Result<DirtySince> dirty_shutdown_since(const Report& now, const std::filesystem::path& file);

} // namespace rpm::probe
