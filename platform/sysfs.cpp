#include "platform/sysfs.hpp"

#include <algorithm>
#include <cerrno>
#include <deque>
#include <fcntl.h>
#include <system_error>
#include <unistd.h>

namespace rpm::platform::sysfs {
namespace {

// Linux gives up after 40 links (MAXSYMLINKS); so do we, which also ends
// a fixture tree's accidental link loop.
constexpr int kMaxLinks = 40;

// A text file in sysfs is at most a page; 64 KiB leaves room for anything
// a fixture might hold without letting a stray large file be slurped.
constexpr std::size_t kMaxText = 64 * 1024;

struct Walk {
    fs::path origin;                // root / rel, for messages
    std::vector<std::string> done;  // resolved components, none a symlink
    std::deque<std::string> todo;   // components still to resolve
    int links = 0;
};

fs::path join(const fs::path& base, const std::vector<std::string>& parts) {
    fs::path p = base;
    for (const auto& c : parts) p /= c;
    return p;
}

void push_front(std::deque<std::string>& todo, const fs::path& p) {
    std::vector<std::string> parts;
    for (const auto& c : p.relative_path()) parts.push_back(c.string());
    todo.insert(todo.begin(), parts.begin(), parts.end());
}

Result<void> follow_link(const fs::path& here, Walk& w) {
    if (++w.links > kMaxLinks) return path_error(here, ELOOP);
    std::error_code ec;
    fs::path target = fs::read_symlink(here, ec);
    if (ec) return path_error(here, ec.value());
    // An absolute target means "from the root" (as under chroot), never
    // the host's own tree.
    if (target.is_absolute()) w.done.clear();
    push_front(w.todo, target);
    return {};
}

Result<void> step(const fs::path& root, Walk& w) {
    std::string c = std::move(w.todo.front());
    w.todo.pop_front();
    if (c.empty() || c == ".") return {};
    if (c == "..") {
        if (w.done.empty())
            return Error(errc::sysfs_unreadable,
                         w.origin.string() + ": resolves above the sysfs root " + root.string());
        w.done.pop_back();
        return {};
    }
    const fs::path here = join(root, w.done) / c;
    std::error_code ec;
    const fs::file_status st = fs::symlink_status(here, ec);
    if (ec) return path_error(here, ec.value());
    if (st.type() == fs::file_type::not_found) return path_error(here, ENOENT);
    if (fs::is_symlink(st)) return follow_link(here, w);
    w.done.push_back(std::move(c));
    return {};
}

// open(2) + read(2) rather than iostreams: the errno of a refused sysfs
// read (EACCES, EIO, EPERM) is what the user needs to see.
Result<std::vector<std::uint8_t>> read_fd(int fd, const fs::path& path, std::size_t max) {
    std::vector<std::uint8_t> buf(max);
    std::size_t got = 0;
    while (got < max) {
        const ssize_t n = ::read(fd, buf.data() + got, max - got);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return path_error(path, errno);
        if (n == 0) break;
        got += static_cast<std::size_t>(n);
    }
    buf.resize(got);
    return buf;
}

} // namespace

Error path_error(const fs::path& path, int err) {
    const errc code = (err == ENOENT || err == ENOTDIR) ? errc::path_not_found
                                                        : errc::sysfs_unreadable;
    return Error(code, path.string() + ": " + std::generic_category().message(err));
}

std::string_view trim(std::string_view s) noexcept {
    constexpr std::string_view ws = " \t\n\r\f\v";
    const auto first = s.find_first_not_of(ws);
    if (first == std::string_view::npos) return {};
    const auto last = s.find_last_not_of(ws);
    return s.substr(first, last - first + 1);
}

Result<fs::path> resolve(const fs::path& root, const fs::path& rel) {
    Walk w;
    w.origin = root / rel;
    push_front(w.todo, rel);
    while (!w.todo.empty()) {
        if (auto r = step(root, w); !r) return r.error();
    }
    return join(fs::path(), w.done);
}

Result<std::vector<std::uint8_t>> read_bytes(const fs::path& root, const fs::path& rel,
                                             std::size_t max) {
    auto real = resolve(root, rel);
    if (!real) return real.error();
    const fs::path path = root / *real;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return path_error(root / rel, errno);
    auto bytes = read_fd(fd, root / rel, max);
    ::close(fd);
    return bytes;
}

Result<std::string> read_text(const fs::path& root, const fs::path& rel) {
    auto bytes = read_bytes(root, rel, kMaxText);
    if (!bytes) return bytes.error();
    const std::string text(bytes->begin(), bytes->end());
    return std::string(trim(text));
}

Result<std::vector<std::string>> list_dir(const fs::path& root, const fs::path& rel) {
    auto real = resolve(root, rel);
    if (!real) return real.error();
    std::error_code ec;
    fs::directory_iterator it(root / *real, ec);
    std::vector<std::string> names;
    for (; !ec && it != fs::directory_iterator(); it.increment(ec))
        names.push_back(it->path().filename().string());
    if (ec) return path_error(root / rel, ec.value());
    std::sort(names.begin(), names.end());
    return names;
}

bool exists(const fs::path& root, const fs::path& rel) {
    return resolve(root, rel).has_value();
}

} // namespace rpm::platform::sysfs
