// rpm-server reset-term: set a region's fencing term while no server serves
// it (docs/replication.md, "Fencing"), the way back from a term that should
// never have been kept.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace rpm_server {

struct ResetTermArgs {
    std::string region, fence_dir, fencing_term;  // checked by reset_term, for one-line errors
    bool yes = false;
};

/// Add the reset-term subcommand to `app`, parsing into `a`.
CLI::App* add_reset_term(CLI::App& app, ResetTermArgs& a);

/// Run it. RETURN VALUE: the exit status: 0 the fencing term was set; 1 nothing
/// was changed (no --yes: what it would do was printed; a server serves
/// the region; an I/O error); 2 bad input (a missing or non-numeric
/// --fencing-term, a bad --region or --fence-dir, a malformed fence file without
/// --yes), with a one-line error on stderr.
int reset_term(const ResetTermArgs& a);

} // namespace rpm_server
