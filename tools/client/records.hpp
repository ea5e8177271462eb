// Numbered, self-checking records for rpm-client's stream and verify: the
// crash tests' ground truth.
#pragma once

#include <rpm/client.hpp>

#include <functional>
#include <optional>
#include <string>

namespace rpmtool {

struct StreamOptions {
    std::uint64_t count = 0;
    std::size_t record_size = 64;
    std::string log;
    double reconnect_seconds = 0;
    std::string fault;
    std::uint64_t run = 0;  ///< mixed into every record, so an earlier run's bytes never pass verify
};

using Opener = std::function<rpm::Result<rpm::RemoteRegion>(std::optional<rpm::Connection>&)>;

/// Record n's bytes: its number, then a pattern derived from it and the run.
std::vector<std::byte> record(std::uint64_t n, std::size_t size, std::uint64_t run = 0);

int stream(const StreamOptions& o, const Opener& open);
int verify(const StreamOptions& o, const Opener& open);

} // namespace rpmtool
