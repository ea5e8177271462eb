// rpm-probe --p2p [CLIENT...]: the P2P providers, where each client sits,
// the kernel's verdict on every provider for those clients, and the choice.
#pragma once

#include <rpm/p2p.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace rpm::probe {

struct P2pClient {
    std::string name;                     ///< as given (BDF or device name)
    std::optional<p2p::Placement> placement;
    std::string error;                    ///< why it could not be placed
};

struct P2pReport {
    std::filesystem::path root;
    std::vector<p2p::Provider> providers;
    std::vector<std::string> skipped;
    std::vector<P2pClient> clients;
    std::optional<p2p::Choice> choice;    ///< when every client was placed
};

/// Discover under `root`, place every client, and (if all were placed) find.
/// ERRORS: those of p2p::Manager::discover.
Result<P2pReport> build_p2p_report(const std::filesystem::path& root,
                                   const std::vector<std::string>& clients);

std::string render_p2p_text(const P2pReport& r);
std::string render_p2p_json(const P2pReport& r);

} // namespace rpm::probe
