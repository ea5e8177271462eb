// Drives rpm's public API: one thread per Connection, each keeping `qd`
// operations in flight through the callback API (or one at a time through
// the synchronous API), timing each from issue to completion.
#pragma once

#include "measure.hpp"
#include "progress.hpp"

#include <rpm/client.hpp>

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rpmbench {

enum class Op { write, read, persist, atomic_write };
std::string_view to_string(Op op) noexcept;
std::optional<Op> parse_op(std::string_view s) noexcept;

enum class Api { callback, sync };

struct OpSpec {
    Op op = Op::persist;
    std::size_t size = 64;  ///< payload bytes (8 for atomic_write)
    unsigned qd = 1;        ///< operations in flight per thread (1 with Api::sync)
    Api api = Api::callback;
    /// Each thread's buffers are registered with its connection
    /// (Connection::register_memory): zero-copy writes and reads.
    bool registered = false;
};

/// Run `spec` on every region in `regions` (one thread each; each region
/// must come from its own Connection) until `stop`. Each thread's slots
/// use distinct, 64-byte aligned offsets, wrapped to fit the region.
/// With spec.registered, `conns[t]` is the Connection of regions[t].
/// ERRORS (in Measurement::first_error, no operation run): a failed registration.
Measurement run_rpm(const std::vector<rpm::RemoteRegion>& regions, const OpSpec& spec, const StopRule& stop,
                    Progress& progress, const std::string& label, std::span<rpm::Connection> conns = {});

} // namespace rpmbench
