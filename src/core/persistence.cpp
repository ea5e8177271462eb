#include <rpm/persistence.hpp>

#include <array>
#include <utility>

namespace rpm {
namespace {

template <class E, std::size_t N>
std::optional<E> lookup(const std::array<std::pair<E, std::string_view>, N>& table,
                        std::string_view s) noexcept {
    for (const auto& [value, name] : table)
        if (name == s) return value;
    return std::nullopt;
}

template <class E, std::size_t N>
std::string_view name_of(const std::array<std::pair<E, std::string_view>, N>& table, E e) noexcept {
    for (const auto& [value, name] : table)
        if (value == e) return name;
    return "invalid";
}

constexpr std::array<std::pair<PersistenceDomain, std::string_view>, 5> kDomains{{
    {PersistenceDomain::cpu_cache, "cpu_cache"},
    {PersistenceDomain::memory_controller, "memory_controller"},
    {PersistenceDomain::none, "none"},
    {PersistenceDomain::unknown, "unknown"},
    {PersistenceDomain::not_pmem, "not_pmem"},
}};
constexpr std::array<std::pair<Granularity, std::string_view>, 3> kGranularities{{
    {Granularity::byte, "byte"},
    {Granularity::cache_line, "cache_line"},
    {Granularity::page, "page"},
}};
constexpr std::array<std::pair<Ddio, std::string_view>, 3> kDdio{{
    {Ddio::on, "on"},
    {Ddio::off, "off"},
    {Ddio::unknown, "unknown"},
}};

} // namespace

std::string_view to_string(PersistenceDomain d) noexcept { return name_of(kDomains, d); }
std::string_view to_string(Granularity g) noexcept { return name_of(kGranularities, g); }
std::string_view to_string(Ddio d) noexcept { return name_of(kDdio, d); }

std::optional<PersistenceDomain> parse_persistence_domain(std::string_view s) noexcept {
    // Linux prints an empty line for a region with neither flag (memmap=).
    if (s.empty()) return PersistenceDomain::unknown;
    return lookup(kDomains, s);
}
std::optional<Granularity> parse_granularity(std::string_view s) noexcept {
    return lookup(kGranularities, s);
}
std::optional<Ddio> parse_ddio(std::string_view s) noexcept { return lookup(kDdio, s); }

PersistenceDomain domain_cap(Granularity g) noexcept {
    switch (g) {
    case Granularity::byte: return PersistenceDomain::cpu_cache;
    case Granularity::cache_line: return PersistenceDomain::memory_controller;
    case Granularity::page: return PersistenceDomain::not_pmem;
    }
    return PersistenceDomain::not_pmem;
}

int strength(PersistenceDomain d) noexcept {
    switch (d) {
    case PersistenceDomain::cpu_cache: return 3;
    case PersistenceDomain::memory_controller: return 2;
    case PersistenceDomain::none:
    case PersistenceDomain::unknown: return 1;
    case PersistenceDomain::not_pmem: return 0;
    }
    return 0;
}

PersistenceDomain weaker(PersistenceDomain a, PersistenceDomain b) noexcept {
    return strength(b) < strength(a) ? b : a;
}

} // namespace rpm
