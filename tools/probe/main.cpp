// rpm-probe: what this machine (or a sysfs tree) is, and which flush
// sequence a remote writer must use for each persistent-memory region.
#include "dirty_since.hpp"
#include "p2p.hpp"
#include "report.hpp"
#include "../lib/parse_args.hpp"

#include <rpm/version.hpp>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>

namespace {

// --p2p: 0 with a full report, 1 when a client could not be placed, 2 when
// discovery failed.
int p2p_main(const std::string& root, const std::vector<std::string>& clients, bool json) {
    auto report = rpm::probe::build_p2p_report(root, clients);
    if (!report) {
        std::cerr << "rpm-probe: " << report.error().message() << "\n";
        return 2;
    }
    std::cout << (json ? rpm::probe::render_p2p_json(*report) : rpm::probe::render_p2p_text(*report));
    for (const auto& c : report->clients)
        if (!c.placement) return 1;
    return 0;
}

// The exit status when --dirty-shutdown-since finds a count that moved:
// apart from 1 (--p2p's) and 2 (errors), so a script can tell "check the
// data" from "the probe failed".
constexpr int kDirtyShutdownMoved = 3;

// The report: 0 when printed, kDirtyShutdownMoved when printed and a count
// moved since `since_file`, 2 when detection failed or the baseline is bad.
int report_main(const rpm::probe::Options& opts, bool json, const std::string& since_file) {
    auto report = rpm::probe::build_report(opts, [](const char* k) { return std::getenv(k); });
    if (!report) {
        std::cerr << "rpm-probe: " << report.error().message() << "\n";
        return 2;
    }
    std::optional<rpm::probe::DirtySince> since;
    if (!since_file.empty()) {
        auto s = rpm::probe::dirty_shutdown_since(*report, since_file);
        if (!s) {
            // The detail names the option, the file and what is wrong.
            std::cerr << "rpm-probe: " << s.error().detail() << "\n";
            return 2;
        }
        since = std::move(*s);
    }
    const rpm::probe::DirtySince* p = since ? &*since : nullptr;
    std::cout << (json ? rpm::probe::render_json(*report, p) : rpm::probe::render_text(*report, p));
    return p != nullptr && p->any_moved() ? kDirtyShutdownMoved : 0;
}

} // namespace

int main(int argc, char** argv) {
    CLI::App app{"rpm-probe: detect persistence domains, DDIO and RDMA capabilities, and "
                 "print the flush method each PM region needs, with the reason.\n"
                 "Overrides: RPM_* environment variables or --config (see docs/flush-methods.md)."};
    rpm::probe::Options opts;
    bool json = false;
    std::string root = "/";
    std::vector<std::string> paths;
    std::string config;
    app.add_option("--sysfs-root", root, "read sysfs under DIR instead of / (a fixture tree)")
        ->check(CLI::ExistingDirectory);
    app.add_option("--pmem", paths, "also inspect this PM file or devdax device (repeatable)");
    app.add_option("--config", config, "JSON overrides file (default: $RPM_CONFIG)")
        ->check(CLI::ExistingFile);
    std::vector<std::string> p2p_clients;
    auto* p2p = app.add_option("--p2p", p2p_clients,
                               "P2P mode: list the P2P memory providers; with CLIENTs (BDFs or device names: "
                               "nvme0, mlx5_0, eth0), where each sits, every provider's verdict and the choice")
                    ->expected(0, -1);
    app.add_flag("--json", json, "print JSON instead of text");
    std::string since;
    app.add_option("--dirty-shutdown-since", since,
                   "compare each nvdimm's dirty shutdown count with FILE, an earlier rpm-probe --json "
                   "saved with the data; exit 3 when a count moved")
        ->check(CLI::ExistingFile)
        ->excludes(p2p);
    app.footer("Exit status:\n"
               "  0  the report was printed\n"
               "  1  --p2p: a client could not be placed (the rest is printed)\n"
               "  2  an error: detection, an override, --dirty-shutdown-since FILE unreadable or not\n"
               "     rpm-probe --json output, or the command line\n"
               "  3  --dirty-shutdown-since: a dirty shutdown count moved (the report is printed)\n");
    app.set_version_flag("--version", std::string("rpm-probe ") + rpm::version());
    if (auto done = rpm_tools::parse_args(app, argc, argv)) return *done;

    // CLI11 hands a bare --p2p over as one empty value.
    std::erase(p2p_clients, std::string());
    if (app.count("--p2p") > 0) return p2p_main(root, p2p_clients, json);
    opts.sysfs_root = root;
    for (const auto& p : paths) opts.pmem_paths.emplace_back(p);
    if (!config.empty()) opts.config = config;
    return report_main(opts, json, since);
}
