// The libpmem2 half of Region::open: source, config, map.
#include "pmem/mapping.hpp"

#include "pmem/pmem2_error.hpp"

#include <string>

namespace rpm::pmem::detail {
namespace {

namespace fs = std::filesystem;

std::string_view explain(Granularity g) noexcept {
    switch (g) {
    case Granularity::byte: return "persistent memory with eADR";
    case Granularity::cache_line:
        return "persistent memory without eADR: stores need cache flushes";
    case Granularity::page: return "not persistent memory";
    }
    return "unknown";
}

Result<ConfigPtr> make_config(const fs::path& path, std::size_t length, Granularity granularity) {
    pmem2_config* raw = nullptr;
    if (int rc = pmem2_config_new(&raw); rc != 0)
        return pmem2_error(rc, "pmem2_config_new for " + path.string());
    ConfigPtr config(raw);
    if (int rc = pmem2_config_set_required_store_granularity(config.get(), to_pmem2(granularity));
        rc != 0)
        return pmem2_error(rc, "pmem2_config_set_required_store_granularity for " + path.string());
    if (int rc = pmem2_config_set_length(config.get(), length); rc != 0)
        return pmem2_error(rc, "pmem2_config_set_length for " + path.string());
    return config;
}

// The granularity the source offers, learned by mapping it with the
// coarsest requirement (which libpmem2 always accepts) and unmapping again.
std::optional<Granularity> offered_granularity(const fs::path& path, pmem2_source* source,
                                               std::size_t length) {
    auto config = make_config(path, length, Granularity::page);
    if (!config) return std::nullopt;
    pmem2_map* raw = nullptr;
    if (pmem2_map_new(&raw, config->get(), source) != 0) return std::nullopt;
    const MapPtr probe(raw);
    return from_pmem2(pmem2_map_get_store_granularity(probe.get()));
}

Error map_error(int rc, const fs::path& path, pmem2_source* source, std::size_t length,
                std::optional<Granularity> required) {
    if (rc != PMEM2_E_GRANULARITY_NOT_SUPPORTED || !required)
        return pmem2_error(rc, "cannot map " + path.string());
    const std::string msg = pmem2_message();  // before the probe replaces it
    std::string detail =
        granularity_detail(path, *required, offered_granularity(path, source, length));
    if (!msg.empty()) detail += " (libpmem2: " + msg + ")";
    return {errc::granularity_not_supported, std::move(detail)};
}

}  // namespace

pmem2_granularity to_pmem2(Granularity g) noexcept {
    switch (g) {
    case Granularity::byte: return PMEM2_GRANULARITY_BYTE;
    case Granularity::cache_line: return PMEM2_GRANULARITY_CACHE_LINE;
    case Granularity::page: return PMEM2_GRANULARITY_PAGE;
    }
    return PMEM2_GRANULARITY_PAGE;
}

Granularity from_pmem2(pmem2_granularity g) noexcept {
    switch (g) {
    case PMEM2_GRANULARITY_BYTE: return Granularity::byte;
    case PMEM2_GRANULARITY_CACHE_LINE: return Granularity::cache_line;
    case PMEM2_GRANULARITY_PAGE: return Granularity::page;
    }
    return Granularity::page;
}

std::string granularity_detail(const fs::path& path, Granularity required,
                               std::optional<Granularity> offered) {
    std::string detail = "region " + path.string();
    if (offered)
        detail += " offers " + std::string(to_string(*offered)) + " granularity (" +
                  std::string(explain(*offered)) + "); ";
    else
        detail += " cannot give the granularity asked for; ";
    return detail + std::string(to_string(required)) + " was required";
}

Result<Mapping> map_fd(int fd, const fs::path& path, std::size_t length,
                       std::optional<Granularity> required) {
    pmem2_source* raw_source = nullptr;
    if (int rc = pmem2_source_from_fd(&raw_source, fd); rc != 0)
        return pmem2_error(rc, "cannot use " + path.string());
    const SourcePtr source(raw_source);
    // Unset means any granularity will do, and page is the coarsest.
    auto config = make_config(path, length, required.value_or(Granularity::page));
    if (!config) return config.error();
    pmem2_map* raw_map = nullptr;
    if (int rc = pmem2_map_new(&raw_map, config->get(), source.get()); rc != 0)
        return map_error(rc, path, source.get(), length, required);
    Mapping mapping;
    mapping.map.reset(raw_map);
    mapping.granularity = from_pmem2(pmem2_map_get_store_granularity(raw_map));
    return mapping;
}

}  // namespace rpm::pmem::detail
