// rpm-server reset-term --region NAME=PATH [--fence-dir DIR] --fencing-term N [--yes]
//
// Without --yes it only says what it would do and why that is risky; with
// it, it keeps N in the region's fence file through rpm::OfflineFence (the
// server's own file and lock: refused while a server serves the region).
#include "reset_term.hpp"

#include "args.hpp"

#include <rpm/server.hpp>

#include <iostream>
#include <optional>

namespace rpm_server {
namespace {

constexpr const char* kRisk =
    "a primary of a fencing term above the new one that is still running could, after the reset, be accepted "
    "again next to a newer primary, and both would change the region. Stop every primary of the group (and every "
    "rpm-kvstore node) first, and reset to a fencing term at or below the one the next legitimate primary will "
    "use.";

int bad(const std::string& why) {
    std::cerr << "rpm-server reset-term: " << why << "\n";
    return 2;
}

int not_done(const std::string& why) {
    std::cerr << "rpm-server reset-term: " << why << "\n";
    return 1;
}

// The fence, or the exit status of why there is none: a server serving the
// region (or another I/O failure) is not bad input.
std::optional<rpm::OfflineFence> open_fence(const rpm::RegionSpec& r, const std::string& fence_dir, int& status) {
    std::optional<std::filesystem::path> dir;
    if (!fence_dir.empty()) dir = fence_dir;
    auto fence = rpm::OfflineFence::open(r, dir);
    if (fence) return std::move(*fence);
    status = fence.error() == rpm::errc::io_error ? not_done(fence.error().detail()) : bad(fence.error().detail());
    return std::nullopt;
}

std::string describe(const rpm::Result<std::uint64_t>& current, const rpm::OfflineFence& f) {
    if (!current) return "malformed (" + current.error().detail() + ")";
    std::error_code ec;
    if (*current == 0 && !std::filesystem::exists(f.file(), ec)) return "0 (no fence file yet)";
    return std::to_string(*current);
}

} // namespace

CLI::App* add_reset_term(CLI::App& app, ResetTermArgs& a) {
    auto* c = app.add_subcommand("reset-term",
                                 "set a region's fencing term offline (every server of it stopped): without --yes, "
                                 "print what it would do and exit 1");
    c->add_option("--region", a.region, "the region as its server serves it (a :SIZE is ignored)")
        ->type_name("NAME=PATH");
    c->add_option("--fence-dir", a.fence_dir, "the --fence-dir its server uses, if any")->type_name("DIR");
    c->add_option("--fencing-term", a.fencing_term, "the fencing term to keep: 0 to 18446744073709551615")
        ->type_name("N");
    c->add_flag("--yes", a.yes, "do it (the risk: see docs/replication.md, \"Fencing\")");
    return c;
}

int reset_term(const ResetTermArgs& a) {
    if (a.region.empty()) return bad("--region NAME=PATH is required");
    if (a.fencing_term.empty()) return bad("--fencing-term N is required: the fencing term to keep");
    std::uint64_t term = 0;
    if (!parse_u64(a.fencing_term, term))
        return bad("--fencing-term " + a.fencing_term + ": expected a whole number from 0 to 18446744073709551615");
    rpm::RegionSpec r;
    std::string why;
    if (!parse_region(a.region, r, why)) return bad("--region " + a.region + ": " + why);
    int status = 0;
    auto fence = open_fence(r, a.fence_dir, status);
    if (!fence) return status;
    const auto current = fence->fencing_term();
    if (!current && current.error() != rpm::errc::bad_config) return not_done(current.error().detail());
    if (!current && !a.yes) return bad(current.error().detail() + "; with --yes, reset-term overwrites it");
    const std::string what = "region " + r.name + " (" + r.path.string() + "), fence file " + fence->file().string();
    const std::string was = describe(current, *fence);
    if (!a.yes) {
        std::cout << what << "\n  current fencing term: " << was << "\n  new fencing term:     " << term
                  << "\nRisk: " << kRisk << "\nNothing was changed; run again with --yes to set it.\n";
        return 1;
    }
    if (auto kept = fence->set_fencing_term(term); !kept) return not_done(kept.error().detail());
    std::cout << what << ": fencing term set to " << term << ", was " << was
              << (current ? "" : "; the malformed file was overwritten") << "\n";
    return 0;
}

} // namespace rpm_server
