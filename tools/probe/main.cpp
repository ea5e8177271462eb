// rpm-probe: what this machine (or a sysfs tree) is, and which flush
// sequence a remote writer must use for each persistent-memory region.
#include "report.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <iostream>

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
    app.add_flag("--json", json, "print JSON instead of text");
    app.set_version_flag("--version", "rpm-probe 0.1.0");
    CLI11_PARSE(app, argc, argv);

    opts.sysfs_root = root;
    for (const auto& p : paths) opts.pmem_paths.emplace_back(p);
    if (!config.empty()) opts.config = config;
    auto report = rpm::probe::build_report(opts, [](const char* k) { return std::getenv(k); });
    if (!report) {
        std::cerr << "rpm-probe: " << report.error().message() << "\n";
        return 2;
    }
    std::cout << (json ? rpm::probe::render_json(*report) : rpm::probe::render_text(*report));
    return 0;
}
