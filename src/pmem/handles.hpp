// Owning handles for the file descriptor and libpmem2 objects Region::open
// creates, so every early return releases what was acquired before it.
#pragma once

#include "core/unique_fd.hpp"

#include <libpmem2.h>

#include <memory>
#include <utility>

#include <unistd.h>

namespace rpm::pmem::detail {

/// The fd owner is core's (core/unique_fd.hpp).
using rpm::UniqueFd;

struct SourceDeleter {
    void operator()(pmem2_source* s) const noexcept { pmem2_source_delete(&s); }
};
struct ConfigDeleter {
    void operator()(pmem2_config* c) const noexcept { pmem2_config_delete(&c); }
};
struct MapDeleter {
    void operator()(pmem2_map* m) const noexcept { pmem2_map_delete(&m); }
};

using SourcePtr = std::unique_ptr<pmem2_source, SourceDeleter>;
using ConfigPtr = std::unique_ptr<pmem2_config, ConfigDeleter>;
using MapPtr = std::unique_ptr<pmem2_map, MapDeleter>;

}  // namespace rpm::pmem::detail
