// rpm-nvmf gen-secret: a new DH-HMAC-CHAP secret (what nvme gen-dhchap-key
// makes), printed, or written to a new file that only its owner may read.
#include "commands.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

namespace rpm_nvmf {

namespace {

struct SecretArgs {
    std::size_t key_length = 32;
    unsigned transform = 1;
    std::string out;
};

int write_new_file(const std::string& path, const std::string& text) {
    // O_EXCL: an existing file (another host's secret, say) is never replaced.
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return fail("--out " + path + ": " + std::strerror(errno), errno == EEXIST ? 2 : 1);
    const std::string line = text + "\n";
    const bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
    const bool closed = ::close(fd) == 0;
    if (!ok || !closed) {
        ::unlink(path.c_str());
        return fail("--out " + path + ": the secret could not be written");
    }
    return 0;
}

int run(const SecretArgs& a) {
    auto s = rpm::nvmf::generate_dhchap_secret(a.key_length, static_cast<std::uint8_t>(a.transform));
    if (!s) return fail(s.error().message(), s.error() == rpm::errc::invalid_argument ? 2 : 1);
    if (a.out.empty()) {
        std::cout << *s << "\n";
        return 0;
    }
    return write_new_file(a.out, *s);
}

} // namespace

void add_secret(CLI::App& app, int& status) {
    auto a = std::make_shared<SecretArgs>();
    auto* s = app.add_subcommand("gen-secret", "make a DH-HMAC-CHAP secret (DHHC-1:..) for --dhchap-host / --dhchap-secret-file");
    s->add_option("--key-length", a->key_length, "random key bytes: 32 (default), 48 or 64")
        ->check(CLI::IsMember({32, 48, 64}));
    s->add_option("--transform", a->transform,
                  "0: the key is used as is; 1 (default), 2, 3: the secret says that each side transforms it with HMAC-SHA-256/384/512 over the host's NQN when using it")
        ->check(CLI::Range(0u, 3u));
    s->add_option("--out", a->out, "write it to this new file (mode 0600) instead of printing it");
    s->callback([a, &status] { status = run(*a); });
}

} // namespace rpm_nvmf
