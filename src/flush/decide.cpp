// The decision table of docs/flush-methods.md, as code. Each rule's reason
// says why the method is enough, because a user who sees "send_flush" on a
// machine they thought was fast deserves to know which input made it so.
#include <rpm/flush.hpp>

namespace rpm::flush {
namespace {

bool is_pm(PersistenceDomain d) noexcept { return d != PersistenceDomain::not_pmem; }

// Apply one override, remembering its name for the reason and the report.
template <class T, class U>
void apply(Input<T>& target, const std::optional<Input<U>>& ov, const char* name,
           std::vector<std::string>& overridden) {
    if (!ov) return;
    target.value = ov->value;
    target.source = ov->source;
    target.origin = ov->origin;
    std::string what = name;
    if (!ov->origin.empty()) what += " (" + ov->origin + ")";
    overridden.push_back(std::move(what));
}

PersistenceDomain effective_domain(const Inputs& in) noexcept {
    if (!in.granularity.value) return in.domain.value;
    return weaker(in.domain.value, domain_cap(*in.granularity.value));
}

struct Rule {
    Method method;
    ServerPersist persist;
    const char* why;
};

Rule table_rule(PersistenceDomain d, Ddio ddio) noexcept {
    const bool ddio_off = ddio == Ddio::off;  // unknown counts as on
    switch (d) {
    case PersistenceDomain::cpu_cache:
        return {Method::read_after_write, ServerPersist::none,
                "eADR: the LLC is persistent, so a read that pushes the writes out of the IIO "
                "buffers (into the LLC or memory) makes them durable"};
    case PersistenceDomain::memory_controller:
        if (ddio_off)
            return {Method::read_after_write, ServerPersist::none,
                    "ADR with DDIO off: writes bypass the LLC, and a read pushes them out of the "
                    "IIO buffers to the memory controller, inside the ADR domain"};
        return {Method::send_flush, ServerPersist::cache_flush_sfence,
                "ADR with DDIO on (unknown counts as on): writes land in the LLC, outside the ADR "
                "domain, so the server must CLWB/CLFLUSHOPT + SFENCE them"};
    case PersistenceDomain::none:
    case PersistenceDomain::unknown:
        return {Method::send_flush, ServerPersist::cache_flush_sfence_deep_flush,
                "no ADR promise: only media is safe, so the server flushes the cache lines and "
                "then deep-flushes the memory controller's write-pending queues"};
    case PersistenceDomain::not_pmem:
        return {Method::send_flush, ServerPersist::msync,
                "not persistent memory (page cache): only msync makes the writes durable"};
    }
    return {Method::send_flush, ServerPersist::cache_flush_sfence_deep_flush, "unreachable"};
}

std::string describe_inputs(const Decision& d) {
    std::string s = "domain ";
    s += to_string(d.inputs.domain.value);
    // A CXL region's domain comes from its driver, not the platform: say so.
    if (d.inputs.domain.origin.starts_with("CXL ")) s += " (" + d.inputs.domain.origin + ")";
    if (d.effective_domain != d.inputs.domain.value) {
        s += " capped to ";
        s += to_string(d.effective_domain);
        s += " by ";
        s += to_string(*d.inputs.granularity.value);
        s += " granularity";
    }
    s += ", DDIO ";
    s += to_string(d.inputs.ddio.value);
    s += d.inputs.native_flush.value ? ", native flush yes" : ", native flush no";
    if (!d.inputs.native_flush.value && !d.inputs.native_flush_unusable.empty())
        s += " (" + d.inputs.native_flush_unusable + ")";
    return s;
}

std::string overrides_note(const std::vector<std::string>& overridden) {
    if (overridden.empty()) return {};
    std::string s = " [overridden: ";
    for (std::size_t i = 0; i < overridden.size(); ++i) s += (i ? ", " : "") + overridden[i];
    return s + "]";
}

} // namespace

Decision decide(const Inputs& in, const Overrides& ov) {
    Decision d;
    d.inputs = in;
    apply(d.inputs.domain, ov.domain, "persistence_domain", d.overridden);
    apply(d.inputs.ddio, ov.ddio, "ddio", d.overridden);
    apply(d.inputs.native_flush, ov.native_flush, "native_flush", d.overridden);
    apply(d.inputs.granularity, ov.granularity, "granularity", d.overridden);
    d.effective_domain = effective_domain(d.inputs);

    Rule rule = table_rule(d.effective_domain, d.inputs.ddio.value);
    std::string note;
    if (d.inputs.native_flush.value && is_pm(d.effective_domain))
        rule = {Method::native_flush, ServerPersist::none,
                "native persistent RDMA FLUSH is supported for this PM region and is preferred: "
                "the responder makes the range durable without server CPU work"};
    else if (d.inputs.native_flush.value)
        note = " (native flush not used: the region is page cache, not PM; no FLUSH can make it durable, and "
               "rdma:// registers such memory without persistent FLUSH access)";
    d.method = rule.method;
    d.server_persist = rule.persist;
    d.reason = describe_inputs(d) + ": " + rule.why + note + overrides_note(d.overridden);
    return d;
}

ServerPersist server_persist_for(PersistenceDomain effective) noexcept {
    switch (effective) {
    case PersistenceDomain::cpu_cache: return ServerPersist::sfence;
    case PersistenceDomain::memory_controller: return ServerPersist::cache_flush_sfence;
    case PersistenceDomain::none:
    case PersistenceDomain::unknown: return ServerPersist::cache_flush_sfence_deep_flush;
    case PersistenceDomain::not_pmem: return ServerPersist::msync;
    }
    return ServerPersist::cache_flush_sfence_deep_flush;
}

bool is_safe(Method m, PersistenceDomain effective, Ddio ddio, bool native_flush) noexcept {
    switch (m) {
    case Method::send_flush: return true;  // the server persists per the domain
    case Method::native_flush: return native_flush && is_pm(effective);
    case Method::read_after_write:
        return effective == PersistenceDomain::cpu_cache ||
               (effective == PersistenceDomain::memory_controller && ddio == Ddio::off);
    }
    return false;
}

} // namespace rpm::flush
