// How every rpm tool parses its command line: --help prints and exits 0;
// any other command-line error (an unknown option, a missing required one,
// a value out of range) prints CLI11's message and exits 2, the usage status
// the man pages document. CLI11's own codes (100-127, one per kind of
// mistake) would tell a script nothing it can act on.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>

namespace rpm_tools {

/// Parse argv into `app`.
/// RETURN VALUE: the status to exit with now (0 after --help, 2 after a
/// command-line error, its message printed), or none to go on.
inline std::optional<int> parse_args(CLI::App& app, int argc, char** argv) {
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e) == 0 ? 0 : 2;
    }
    return std::nullopt;
}

} // namespace rpm_tools
