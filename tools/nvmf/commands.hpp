#pragma once
// rpm-nvmf's subcommands: `target` serves namespaces over NVMe/TCP; the
// others are an NVMe/TCP host (discover, identify, read, write, flush,
// write-zeroes, verify); gen-secret makes a DH-HMAC-CHAP secret.
#include <rpm/nvmf.hpp>

#include <CLI/CLI.hpp>

#include <string>

namespace rpm_nvmf {

/// Options every host subcommand shares.
/// --transport tcp|rdma, on a target or host subcommand.
void add_transport_option(CLI::App* s, rpm::nvmf::Transport& t);

struct HostArgs {
    rpm::nvmf::Transport transport = rpm::nvmf::Transport::tcp;
    std::string address = "127.0.0.1";
    std::uint16_t port = 4420;
    std::string subnqn;
    std::string hostnqn = rpm::nvmf::default_host_nqn;
    bool hdgst = false, ddgst = false;
    std::uint32_t nsid = 1;
    std::uint64_t lba = 0;
    std::uint32_t blocks = 8;
    std::string file;
    std::uint64_t seed = 1;
    int timeout_ms = 10000;
    std::string dhchap_secret_file, dhchap_ctrl_secret_file;
    /// The host's options, with the DH-HMAC-CHAP secrets read from their
    /// files. ERRORS: those of rpm::nvmf::read_dhchap_secret.
    rpm::Result<rpm::nvmf::HostOptions> options() const;
};

void add_target(CLI::App& app, int& status);
void add_host(CLI::App& app, int& status);
/// gen-secret: a new DH-HMAC-CHAP secret, printed or written to a 0600 file.
void add_secret(CLI::App& app, int& status);

/// Print "rpm-nvmf: MESSAGE" to stderr and return the exit status.
int fail(const std::string& message, int status = 1);

} // namespace rpm_nvmf
