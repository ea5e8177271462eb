// The flush decision: which sequence makes a remote writer's bytes durable in
// a target region, given the target's platform.
//
// decide() is a pure function of its inputs (persistence domain, DDIO, native
// RDMA FLUSH capability, the region's store granularity) and the overrides a
// user set; it implements the table in docs/flush-methods.md:
//
//   domain \ DDIO    off                          on or unknown
//   eADR             read-after-write             read-after-write
//   ADR              read-after-write             send + CLWB/CLFLUSHOPT + SFENCE
//   none / unknown   send + flush + deep flush    send + flush + deep flush
//   not_pmem         send + msync                 send + msync
//
// Native persistent RDMA FLUSH, where both sides support it for a PM region,
// is preferred over all of these. Every Decision carries a one-line reason
// naming the inputs and the rule, and which inputs were overridden.
#pragma once

#include <rpm/export.hpp>
#include <rpm/persistence.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

RPM_API_BEGIN

namespace rpm::flush {

/// What the client does after its RDMA writes.
enum class Method {
    read_after_write,  ///< an RDMA read of the last written range
    send_flush,        ///< a message naming the ranges; the server persists and replies
    native_flush,      ///< IBTA RDMA FLUSH with the persistent placement type
};

/// What the server does for a send_flush (none for the one-sided methods).
enum class ServerPersist {
    none,                          ///< nothing: the NIC's own operation suffices
    sfence,                        ///< order the stores; caches are persistent (eADR)
    cache_flush_sfence,            ///< CLWB (or CLFLUSHOPT) each line, then SFENCE (ADR)
    cache_flush_sfence_deep_flush, ///< as above, then flush the WPQ (no ADR)
    msync,                         ///< write the page cache back (not PM)
};

/// RETURN VALUE: the method's name, as the enumerator is spelt
/// ("read_after_write", "send_flush", "native_flush"); "invalid" for a
/// value outside the enum; never fails.
std::string_view to_string(Method m) noexcept;
/// RETURN VALUE: the step's name, as the enumerator is spelt ("none", ...,
/// "msync"); "invalid" for a value outside the enum; never fails.
std::string_view to_string(ServerPersist p) noexcept;
/// RETURN VALUE: the method to_string(Method) names by `s` (exact,
/// case-sensitive), or std::nullopt; never fails.
std::optional<Method> parse_method(std::string_view s) noexcept;

/// Where an input's value came from.
enum class Source {
    detected,         ///< read from the machine (sysfs, config space, cpuid, verbs)
    assumed,          ///< could not be read; the safe assumption was used
    override_env,     ///< an RPM_* environment variable
    override_config,  ///< a configuration file
    override_api,     ///< set by the calling program
};
/// RETURN VALUE: "detected", "assumed", "override (environment)",
/// "override (configuration)" or "override (program)"; "invalid" for a
/// value outside the enum; never fails.
std::string_view to_string(Source s) noexcept;
/// RETURN VALUE: true for override_env, override_config and override_api;
/// never fails.
inline bool is_override(Source s) noexcept {
    return s == Source::override_env || s == Source::override_config || s == Source::override_api;
}

/// A value with its provenance. `origin` says where exactly: a sysfs path,
/// "RPM_DDIO", a configuration file's path.
template <class T>
struct Input {
    T value{};
    Source source = Source::detected;
    std::string origin;
};

struct Inputs {
    Input<PersistenceDomain> domain{PersistenceDomain::unknown, Source::assumed, {}};
    Input<Ddio> ddio{Ddio::unknown, Source::assumed, {}};
    /// Both the RNIC and the server support native persistent FLUSH for the region.
    Input<bool> native_flush{false, Source::assumed, {}};
    /// The region's store granularity, when it is mapped (nullopt: not known).
    Input<std::optional<Granularity>> granularity{std::nullopt, Source::assumed, {}};
    /// Why a native flush the RNIC reports is not used (this build cannot
    /// issue it: flush::limit_to); empty otherwise. The reason quotes it.
    std::string native_flush_unusable;
};

/// Values that replace detected inputs. Each must carry an override Source.
struct Overrides {
    std::optional<Input<PersistenceDomain>> domain;
    std::optional<Input<Ddio>> ddio;
    std::optional<Input<bool>> native_flush;
    std::optional<Input<Granularity>> granularity;
};

struct Decision {
    Method method = Method::send_flush;
    ServerPersist server_persist = ServerPersist::cache_flush_sfence_deep_flush;
    std::string reason;                   ///< one line: inputs and rule
    PersistenceDomain effective_domain{}; ///< domain after the granularity cap
    Inputs inputs;                        ///< the inputs as used, overrides applied
    std::vector<std::string> overridden;  ///< "ddio (RPM_DDIO)", ...
};

/// Choose the method and the server's persist step. Pure and total.
/// Each override present replaces its input (value, source and origin as
/// given: its Source is not checked) and is named in Decision::overridden.
/// RETURN VALUE: the decision: method and server_persist by the table
/// above, applied to the effective domain (the domain capped by the
/// granularity, when known); native_flush when native_flush is true and
/// that domain is PM; the reason, inputs and overrides as used.
/// ERRORS: none; every input combination has a decision.
Decision decide(const Inputs& in, const Overrides& ov = {});

/// The server's persist step when it applies the writes itself or receives
/// a send_flush: what the region's domain needs after CPU or NIC stores.
/// RETURN VALUE: sfence for cpu_cache, cache_flush_sfence for
/// memory_controller, cache_flush_sfence_deep_flush for none and unknown
/// (and a value outside the enum), msync for not_pmem; never fails.
ServerPersist server_persist_for(PersistenceDomain effective_domain) noexcept;

/// Whether `m` keeps acknowledged writes durable for these inputs (used to
/// refuse a forced method unless the caller says unsafe).
/// RETURN VALUE: send_flush: always true; native_flush: true when
/// `native_flush` and the domain is PM (not not_pmem); read_after_write:
/// true for cpu_cache, or memory_controller with DDIO off (unknown counts
/// as on); false for a method outside the enum; never fails.
bool is_safe(Method m, PersistenceDomain effective_domain, Ddio ddio, bool native_flush) noexcept;

} // namespace rpm::flush

RPM_API_END
