// rpm-kvbench's output (report.cpp): one run as text or one JSON line, and
// --summarize, which turns the JSON lines of many runs (tools/bench/kv-peer
// collects them) into the peer table: medians over rounds and the ratios
// the goals are stated in.
#pragma once

#include "load.hpp"
#include "options.hpp"

#include <nlohmann/json.hpp>

#include <ostream>
#include <string>

namespace kvbench {

nlohmann::json result_json(const Options& o, const LoadResult& r);
void print_text(std::ostream& out, const nlohmann::json& run);

/// Reads JSON lines (one run each) from `file`; prints the table, or with
/// `json` {"runs": [...], "summary": [...]}. RETURN VALUE: exit status.
int summarize(const std::string& file, bool json, std::ostream& out, std::ostream& err);

} // namespace kvbench
