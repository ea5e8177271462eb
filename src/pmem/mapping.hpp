// The libpmem2 half of Region::open: source, config, map.
#pragma once

#include "pmem/handles.hpp"

#include <rpm/persistence.hpp>
#include <rpm/result.hpp>

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>

namespace rpm::pmem::detail {

pmem2_granularity to_pmem2(Granularity g) noexcept;
Granularity from_pmem2(pmem2_granularity g) noexcept;

struct Mapping {
    MapPtr map;
    Granularity granularity = Granularity::page;
};

/// Map `length` bytes (0: all) of the open `fd` with at least the
/// `required` granularity (any when unset).
Result<Mapping> map_fd(int fd, const std::filesystem::path& path, std::size_t length,
                       std::optional<Granularity> required);

/// The detail for a granularity the region cannot give, e.g. "region
/// /dev/shm/x offers page granularity (not persistent memory); byte was
/// required". `offered` is nullopt when it could not be learned.
std::string granularity_detail(const std::filesystem::path& path, Granularity required,
                               std::optional<Granularity> offered);

}  // namespace rpm::pmem::detail
