// The fence file: one line, "rpm-fence 1 <term>\n", replaced atomically
// (write beside, fsync, rename, fsync the directory) so that a crash leaves
// either the old term or the new one, never a torn file.
#include "server/fence.hpp"

#include "core/unique_fd.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

namespace rpm::server {
namespace {

constexpr std::string_view kPrefix = "rpm-fence 1 ";
constexpr std::size_t kMaxFile = 64;

bool plain_name(std::string_view name) {
    if (name.empty() || name.front() == '.') return false;
    for (char c : name)
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
              c == '-'))
            return false;
    return true;
}

std::string hex(std::string_view s) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string out;
    for (unsigned char c : s) {
        out += digits[c >> 4];
        out += digits[c & 15];
    }
    return out;
}

Error failed(const std::filesystem::path& file, std::string_view step) {
    return Error(errc::io_error, "fence file " + file.string() + ": " + std::string(step) + ": " + std::strerror(errno));
}

Result<void> write_all(int fd, std::string_view s, const std::filesystem::path& file) {
    while (!s.empty()) {
        const ssize_t n = ::write(fd, s.data(), s.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return failed(file, "write");
        s.remove_prefix(static_cast<std::size_t>(n));
    }
    return {};
}

} // namespace

std::string fenced_detail(std::string_view name, std::uint64_t now, std::uint64_t had) {
    return "region '" + std::string(name) + "' was taken over by primary term " + std::to_string(now) +
           "; this connection opened it with term " + std::to_string(had);
}

Result<void> check_term(std::string_view name, std::uint64_t now, std::uint64_t had) {
    if (!fenced(now, had)) return {};
    return Error(errc::fenced, fenced_detail(name, now, had));
}

std::optional<std::filesystem::path> fence_file_for(std::string_view name, const std::filesystem::path& path,
                                                    const std::optional<std::filesystem::path>& fence_dir) {
    if (fence_dir) return *fence_dir / ((plain_name(name) ? std::string(name) : "x-" + hex(name)) + ".fence");
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
    auto beside = path;
    beside += ".fence";
    return beside;
}

Result<std::uint64_t> load_term(const std::filesystem::path& file) {
    UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) {
        if (errno == ENOENT) return std::uint64_t{0};
        return failed(file, "open");
    }
    char buf[kMaxFile + 1];
    std::size_t len = 0;
    for (;;) {
        const ssize_t n = ::read(fd.get(), buf + len, sizeof buf - len);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return failed(file, "read");
        if (n == 0) break;
        len += static_cast<std::size_t>(n);
        if (len == sizeof buf) break;
    }
    const std::string_view s(buf, len);
    const auto bad = [&] {
        return Error(errc::bad_config, "fence file " + file.string() +
                                           " is malformed (expected \"rpm-fence 1 <term>\"): remove it only if no "
                                           "primary of a newer term can still be running");
    };
    if (len > kMaxFile || s.substr(0, kPrefix.size()) != kPrefix || s.back() != '\n') return bad();
    const std::string_view digits = s.substr(kPrefix.size(), s.size() - kPrefix.size() - 1);
    std::uint64_t term = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), term);
    if (ec != std::errc{} || end != digits.data() + digits.size() || digits.empty()) return bad();
    return term;
}

Result<UniqueFd> lock_region_file(std::string_view name, const std::filesystem::path& path, bool exclusive) {
    const std::string what = std::string(name) + " (" + path.string() + ")";
    // Read-only is enough for flock, and opens a device without side effects.
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) {
        if (errno == ENOENT) return Error(errc::path_not_found, "region " + what + " does not exist");
        return Error(errc::io_error, "region " + what + ": open to lock it: " + std::strerror(errno));
    }
    int rc;
    do rc = ::flock(fd.get(), (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB);
    while (rc != 0 && errno == EINTR);
    if (rc == 0) return fd;
    if (errno != EWOULDBLOCK) return Error(errc::io_error, "region " + what + ": flock: " + std::strerror(errno));
    if (exclusive) return Error(errc::io_error, "a server is serving " + what + "; stop it first");
    return Error(errc::io_error, "region " + what +
                                     " is locked by rpm-server reset-term, which is changing its fencing term; "
                                     "start the server once it is done");
}

Result<void> store_term(const std::filesystem::path& file, std::uint64_t term) {
    auto tmp = file;
    tmp += ".new";
    {
        UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
        if (fd.get() < 0) return failed(tmp, "create");
        if (auto ok = write_all(fd.get(), std::string(kPrefix) + std::to_string(term) + "\n", tmp); !ok) return ok;
        if (::fsync(fd.get()) != 0) return failed(tmp, "fsync");
    }
    if (::rename(tmp.c_str(), file.c_str()) != 0) return failed(file, "rename");
    const auto dir = file.has_parent_path() ? file.parent_path() : std::filesystem::path(".");
    UniqueFd d(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (d.get() < 0) return failed(dir, "open directory");
    if (::fsync(d.get()) != 0) return failed(dir, "fsync directory");
    return {};
}

} // namespace rpm::server
