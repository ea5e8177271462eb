// Overrides from the environment, merging, and the per-decision view.
#include <rpm/overrides.hpp>

#include "platform/override_values.hpp"

#include <cstdlib>

namespace rpm {
namespace {
using flush::Input;
using flush::Source;
namespace d = platform::detail;

Error bad_env(const char* var, std::string_view value, const char* accepted) {
    return Error(errc::bad_override, std::string(var) + "=\"" + std::string(value) +
                                         "\" is not valid; accepted values: " + accepted);
}

// "VALUE" or "NAME=VALUE,..." into keyed inputs; parse maps one value.
template <class T, class Parse>
Result<void> read_keyed(const EnvLookup& env, const char* var, const char* accepted,
                        Parse parse, Overrides::Keyed<T>& out) {
    const char* raw = env(var);
    if (raw == nullptr || *raw == '\0') return {};
    for (const auto& item : d::split(raw, ',')) {
        auto eq = item.find('=');
        std::string key = eq == std::string::npos ? "*" : item.substr(0, eq);
        std::string text = eq == std::string::npos ? item : item.substr(eq + 1);
        std::optional<T> v = parse(text);
        if (!v || key.empty()) return bad_env(var, raw, accepted);
        out[key] = Input<T>{*v, Source::override_env, var};
    }
    return {};
}

Result<void> read_cpu(const EnvLookup& env, Overrides& out) {
    const char* raw = env("RPM_CPU_FLUSH");
    if (raw == nullptr || *raw == '\0') return {};
    auto f = d::parse_cpu_flush(d::split(raw, ','));
    if (!f) return bad_env("RPM_CPU_FLUSH", raw, d::kCpuFlushValues);
    out.cpu_flush = Input<platform::CpuFlush>{*f, Source::override_env, "RPM_CPU_FLUSH"};
    return {};
}

Result<void> read_iio_ids(const EnvLookup& env, Overrides& out) {
    const char* raw = env("RPM_IIO_ROOT_PORT_IDS");
    if (raw == nullptr || *raw == '\0') return {};
    for (const auto& s : d::split(raw, ',')) {
        auto id = d::parse_device_id(s);
        if (!id) return bad_env("RPM_IIO_ROOT_PORT_IDS", raw, "hex PCI device IDs such as 347a");
        out.iio_root_port_ids.push_back(*id);
    }
    return {};
}

template <class T>
void overlay(Overrides::Keyed<T>& base, const Overrides::Keyed<T>& top) {
    for (const auto& [k, v] : top) base[k] = v;
}

} // namespace

bool Overrides::empty() const noexcept {
    return persistence_domain.empty() && granularity.empty() && ddio.empty() && native_flush.empty() &&
           atomic_write.empty() && !cpu_flush && iio_root_port_ids.empty();
}

flush::Overrides Overrides::for_decision(std::string_view region, std::string_view device) const {
    flush::Overrides ov;
    ov.domain = lookup(persistence_domain, region);
    ov.granularity = lookup(granularity, region);
    if (!device.empty()) {
        ov.ddio = lookup(ddio, device);
        ov.native_flush = lookup(native_flush, device);
    } else {
        // Without a device the decision still honours a global value.
        ov.ddio = lookup(ddio, "*");
        ov.native_flush = lookup(native_flush, "*");
    }
    return ov;
}

Result<Overrides> overrides_from_env(const EnvLookup& env) {
    Overrides o;
    Result<void> r;
    auto domain = [](const std::string& s) { return parse_persistence_domain(s); };
    auto gran = [](const std::string& s) { return parse_granularity(s); };
    auto ddio = [](const std::string& s) { return parse_ddio(s); };
    auto yes_no = [](const std::string& s) { return d::parse_yes_no(s); };
    // An empty string is not a valid domain here: unset the variable instead.
    auto domain_nonempty = [&](const std::string& s) {
        return s.empty() ? std::nullopt : domain(s);
    };
    if (!(r = read_keyed<PersistenceDomain>(env, "RPM_PERSISTENCE_DOMAIN", d::kDomainValues,
                                            domain_nonempty, o.persistence_domain))) return r.error();
    if (!(r = read_keyed<Granularity>(env, "RPM_GRANULARITY", d::kGranularityValues, gran,
                                      o.granularity))) return r.error();
    if (!(r = read_keyed<Ddio>(env, "RPM_DDIO", d::kDdioValues, ddio, o.ddio))) return r.error();
    if (!(r = read_keyed<bool>(env, "RPM_NATIVE_FLUSH", d::kYesNoValues, yes_no, o.native_flush)))
        return r.error();
    if (!(r = read_keyed<bool>(env, "RPM_ATOMIC_WRITE", d::kYesNoValues, yes_no, o.atomic_write)))
        return r.error();
    if (!(r = read_cpu(env, o))) return r.error();
    if (!(r = read_iio_ids(env, o))) return r.error();
    return o;
}

Overrides merge(Overrides base, const Overrides& top) {
    overlay(base.persistence_domain, top.persistence_domain);
    overlay(base.granularity, top.granularity);
    overlay(base.ddio, top.ddio);
    overlay(base.native_flush, top.native_flush);
    overlay(base.atomic_write, top.atomic_write);
    if (top.cpu_flush) base.cpu_flush = top.cpu_flush;
    base.iio_root_port_ids.insert(base.iio_root_port_ids.end(), top.iio_root_port_ids.begin(),
                                  top.iio_root_port_ids.end());
    return base;
}

Result<Overrides> load_overrides(const std::optional<std::filesystem::path>& config,
                                 const EnvLookup& env) {
    Overrides base;
    std::optional<std::filesystem::path> file = config;
    if (!file) {
        const char* from_env = env("RPM_CONFIG");
        if (from_env != nullptr && *from_env != '\0') file = from_env;
    }
    if (file) {
        auto cfg = overrides_from_config(*file);
        if (!cfg) return cfg.error();
        base = std::move(*cfg);
    }
    auto top = overrides_from_env(env);
    if (!top) return top.error();
    return merge(std::move(base), *top);
}

} // namespace rpm
