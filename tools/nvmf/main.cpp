// rpm-nvmf: an NVMe/TCP target and host on rpm::nvmf (docs/nvmf.md).
//   rpm-nvmf target --subsystem NQN --ns 1=/dev/nvme0n1 [--listen 127.0.0.1:4420]
//   rpm-nvmf discover|identify|read|write|flush|write-zeroes|verify ...
//   rpm-nvmf gen-secret [--key-length 32|48|64] [--transform 0-3] [--out FILE]
// Exit status: 0 done, 1 a failure (I/O, NVMe status), 2 bad input.
#include "commands.hpp"
#include "../lib/parse_args.hpp"

#include <iostream>

namespace rpm_nvmf {

int fail(const std::string& message, int status) {
    std::cerr << "rpm-nvmf: " << message << "\n";
    return status;
}

} // namespace rpm_nvmf

int main(int argc, char** argv) {
    CLI::App app{"rpm-nvmf: NVMe over Fabrics (NVMe/TCP and NVMe/RDMA) target and host"};
    app.require_subcommand(1);
    int status = 0;
    rpm_nvmf::add_target(app, status);
    rpm_nvmf::add_host(app, status);
    rpm_nvmf::add_secret(app, status);
    if (auto done = rpm_tools::parse_args(app, argc, argv)) return *done;
    return status;
}
