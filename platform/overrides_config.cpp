// Overrides from a JSON configuration file. Parsing uses nlohmann::json's
// exceptions only to get a precise message, and only here: configuration is
// read once at start-up, never on the data path.
#include <rpm/overrides.hpp>

#include "platform/override_values.hpp"

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

namespace rpm {
namespace {
using flush::Input;
using flush::Source;
using nlohmann::json;
namespace d = platform::detail;

struct Ctx {
    std::string file;
    Error bad(const std::string& key, const std::string& what) const {
        return Error(errc::bad_config, file + ": \"" + key + "\" " + what);
    }
};

std::optional<std::string> as_text(const json& v) {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
    return std::nullopt;
}

// A scalar applies to all ("*"); an object maps names to values.
template <class T, class Parse>
Result<void> read_keyed(const Ctx& c, const std::string& key, const json& v, const char* accepted,
                        Parse parse, Overrides::Keyed<T>& out) {
    auto put = [&](const std::string& name, const json& value) -> Result<void> {
        auto text = as_text(value);
        std::optional<T> parsed = text ? parse(*text) : std::nullopt;
        if (!parsed) return c.bad(key, "has value " + value.dump() + "; accepted: " + accepted);
        out[name] = Input<T>{*parsed, Source::override_config, c.file};
        return {};
    };
    if (!v.is_object()) return put("*", v);
    for (const auto& [name, value] : v.items())
        if (auto r = put(name, value); !r) return r;
    return {};
}

std::optional<std::vector<std::string>> string_list(const json& v) {
    if (!v.is_array()) return std::nullopt;
    std::vector<std::string> out;
    for (const auto& e : v) {
        if (!e.is_string()) return std::nullopt;
        out.push_back(e.get<std::string>());
    }
    return out;
}

Result<void> read_cpu(const Ctx& c, const json& v, Overrides& o) {
    auto names = string_list(v);
    auto f = names ? d::parse_cpu_flush(*names) : std::nullopt;
    if (!f) return c.bad("cpu_flush", std::string("must be a list of: ") + d::kCpuFlushValues);
    o.cpu_flush = Input<platform::CpuFlush>{*f, Source::override_config, c.file};
    return {};
}

Result<void> read_ids(const Ctx& c, const json& v, Overrides& o) {
    auto names = string_list(v);
    if (!names) return c.bad("iio_root_port_ids", "must be a list of hex device IDs (\"347a\")");
    for (const auto& s : *names) {
        auto id = d::parse_device_id(s);
        if (!id) return c.bad("iio_root_port_ids", "has \"" + s + "\", not a hex device ID");
        o.iio_root_port_ids.push_back(*id);
    }
    return {};
}

Result<void> read_key(const Ctx& c, const std::string& key, const json& v, Overrides& o) {
    auto domain = [](const std::string& s) {
        return s.empty() ? std::nullopt : parse_persistence_domain(s);
    };
    auto gran = [](const std::string& s) { return parse_granularity(s); };
    auto ddio = [](const std::string& s) { return parse_ddio(s); };
    auto yes_no = [](const std::string& s) { return d::parse_yes_no(s); };
    if (key == "persistence_domain")
        return read_keyed<PersistenceDomain>(c, key, v, d::kDomainValues, domain, o.persistence_domain);
    if (key == "granularity")
        return read_keyed<Granularity>(c, key, v, d::kGranularityValues, gran, o.granularity);
    if (key == "ddio") return read_keyed<Ddio>(c, key, v, d::kDdioValues, ddio, o.ddio);
    if (key == "native_flush") return read_keyed<bool>(c, key, v, d::kYesNoValues, yes_no, o.native_flush);
    if (key == "atomic_write") return read_keyed<bool>(c, key, v, d::kYesNoValues, yes_no, o.atomic_write);
    if (key == "cpu_flush") return read_cpu(c, v, o);
    if (key == "iio_root_port_ids") return read_ids(c, v, o);
    return c.bad(key, "is not a known key (persistence_domain, granularity, ddio, native_flush, "
                      "atomic_write, cpu_flush, iio_root_port_ids)");
}

Result<json> parse_file(const std::filesystem::path& file) {
    std::ifstream in(file);
    if (!in) return Error(errc::bad_config, file.string() + ": cannot open the configuration file");
    std::stringstream text;
    text << in.rdbuf();
    try {
        return json::parse(text.str());
    } catch (const json::parse_error& e) {
        return Error(errc::bad_config, file.string() + ": " + e.what());
    }
}

} // namespace

Result<Overrides> overrides_from_config(const std::filesystem::path& file) {
    auto doc = parse_file(file);
    if (!doc) return doc.error();
    Ctx c{file.string()};
    if (!doc->is_object()) return Error(errc::bad_config, c.file + ": the top level must be a JSON object");
    Overrides o;
    for (const auto& [key, value] : doc->items())
        if (auto r = read_key(c, key, value, o); !r) return r.error();
    return o;
}

} // namespace rpm
