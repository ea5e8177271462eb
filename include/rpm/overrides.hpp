// Overrides: user-supplied values for every platform input, from a JSON
// configuration file and from RPM_* environment variables (the environment
// wins). A value can apply to everything or to one region / RDMA device.
//
// Environment (each optional):
//   RPM_PERSISTENCE_DOMAIN  cpu_cache|memory_controller|none|unknown|not_pmem
//   RPM_DDIO                on|off|unknown
//   RPM_NATIVE_FLUSH        yes|no
//   RPM_ATOMIC_WRITE        yes|no
//   RPM_GRANULARITY         byte|cache_line|page
//     each either "VALUE" (all), or "NAME=VALUE[,NAME=VALUE...]" per region
//     (nd region name or --pmem path) or per RDMA device; "VALUE" and
//     NAME=VALUE pairs may be mixed: "off,mlx5_1=on".
//   RPM_CPU_FLUSH           list of clwb,clflushopt,clflush, or "none"
//   RPM_IIO_ROOT_PORT_IDS   list of Intel device IDs (hex) to treat as Xeon IIO root ports
//   RPM_CONFIG              path of the JSON configuration file
// Configuration file: the same names in lower case without RPM_, each a
// value or an object {"NAME": VALUE}; cpu_flush and iio_root_port_ids are
// lists. Unknown keys are errors, so a typo is not silently ignored.
#pragma once

#include <rpm/export.hpp>
#include <rpm/flush.hpp>
#include <rpm/platform.hpp>
#include <rpm/result.hpp>

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

RPM_API_BEGIN

namespace rpm {

struct Overrides {
    template <class T>
    using Keyed = std::map<std::string, flush::Input<T>, std::less<>>;  ///< "*" = all

    Keyed<PersistenceDomain> persistence_domain;  ///< by region
    Keyed<Granularity> granularity;               ///< by region
    Keyed<Ddio> ddio;                             ///< by RDMA device
    Keyed<bool> native_flush;                     ///< by RDMA device
    Keyed<bool> atomic_write;                     ///< by RDMA device
    std::optional<flush::Input<platform::CpuFlush>> cpu_flush;
    std::vector<std::uint16_t> iio_root_port_ids;

    /// RETURN VALUE: true when no override of any kind is set (no keyed
    /// value, no cpu_flush, no IIO root port ID); never fails.
    [[nodiscard]] bool empty() const noexcept;

    /// The overrides that apply to the decision for `region` written through
    /// `device` (empty string: no device).
    /// RETURN VALUE: persistence_domain and granularity looked up for
    /// `region`, ddio and native_flush for `device` (lookup(): exact name,
    /// then "*"; with no device only "*" applies); atomic_write, cpu_flush
    /// and iio_root_port_ids play no part in a decision. ERRORS: none.
    [[nodiscard]] flush::Overrides for_decision(std::string_view region,
                                                std::string_view device) const;

    /// The value for `name` (exact key first, then "*"), if any.
    /// RETURN VALUE: that value, or std::nullopt when neither key is set;
    /// never fails.
    template <class T>
    static std::optional<flush::Input<T>> lookup(const Keyed<T>& keyed, std::string_view name) {
        if (auto it = keyed.find(name); it != keyed.end()) return it->second;
        if (auto it = keyed.find(std::string_view("*")); it != keyed.end()) return it->second;
        return std::nullopt;
    }
};

/// A getenv-like function, so tests need not touch the process environment.
using EnvLookup = std::function<const char*(const char*)>;

/// Read the RPM_* variables.
/// RETURN VALUE: the overrides the variables set (Source::override_env,
/// origin the variable's name); an unset or empty variable sets nothing.
/// RPM_CONFIG is not read here (load_overrides reads it).
/// RPM_NATIVE_FLUSH and RPM_ATOMIC_WRITE also take true|false and 1|0.
/// ERRORS: errc::bad_override naming the variable, the bad value and the
/// accepted values: the first bad variable, in the order of the file
/// comment (a value not accepted, an empty item such as a trailing comma,
/// NAME=VALUE with an empty NAME, an empty domain value, an unknown
/// RPM_CPU_FLUSH name, an RPM_IIO_ROOT_PORT_IDS entry that is not 1 to 4
/// hex digits with an optional 0x).
Result<Overrides> overrides_from_env(const EnvLookup& getenv_fn);

/// Read a JSON configuration file.
/// RETURN VALUE: the overrides the file sets (Source::override_config,
/// origin the file's path); a JSON boolean reads as yes/no.
/// ERRORS: errc::bad_config (missing file, malformed JSON, unknown key, bad
/// value; the detail names the file and the key). It is the only error,
/// also for a file that cannot be opened for any reason (never
/// path_not_found or permission_denied); besides the above: the top level
/// is not a JSON object; a value is neither an accepted string nor a
/// boolean; cpu_flush or iio_root_port_ids is not a list of accepted
/// strings.
Result<Overrides> overrides_from_config(const std::filesystem::path& file);

/// `base` with every value of `top` laid over it.
/// RETURN VALUE: `base` with each keyed value of `top` replacing the one of
/// the same key, top's cpu_flush replacing base's when set, and top's
/// iio_root_port_ids appended to base's (a list: both kept, not replaced).
/// ERRORS: none.
Overrides merge(Overrides base, const Overrides& top);

/// The configuration file (`config`, else $RPM_CONFIG, else none) overlaid
/// with the environment. ERRORS: as the two functions above.
/// RETURN VALUE: merge(file's overrides, environment's); RPM_CONFIG is
/// read through getenv_fn, and an empty one means no file.
/// That is: errc::bad_config (the file, as overrides_from_config; checked
/// first); errc::bad_override (the environment, as overrides_from_env).
Result<Overrides> load_overrides(const std::optional<std::filesystem::path>& config,
                                 const EnvLookup& getenv_fn);

} // namespace rpm

RPM_API_END
