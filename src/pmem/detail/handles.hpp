// Owning handles for the file descriptor and libpmem2 objects Region::open
// creates, so every early return releases what was acquired before it.
#pragma once

#include <libpmem2.h>

#include <memory>
#include <utility>

#include <unistd.h>

namespace rpm::pmem::detail {

/// A file descriptor closed on destruction unless released.
class UniqueFd {
public:
    UniqueFd() = default;
    explicit UniqueFd(int fd) noexcept : fd_(fd) {}
    UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
    UniqueFd& operator=(UniqueFd&& other) noexcept {
        if (this != &other) reset(std::exchange(other.fd_, -1));
        return *this;
    }
    UniqueFd(const UniqueFd&) = delete;
    UniqueFd& operator=(const UniqueFd&) = delete;
    ~UniqueFd() { reset(); }

    [[nodiscard]] int get() const noexcept { return fd_; }
    [[nodiscard]] int release() noexcept { return std::exchange(fd_, -1); }
    void reset(int fd = -1) noexcept {
        if (fd_ >= 0) ::close(fd_);
        fd_ = fd;
    }

private:
    int fd_ = -1;
};

struct SourceDeleter {
    void operator()(pmem2_source* s) const noexcept { pmem2_source_delete(&s); }
};
struct ConfigDeleter {
    void operator()(pmem2_config* c) const noexcept { pmem2_config_delete(&c); }
};
struct MapDeleter {
    void operator()(pmem2_map* m) const noexcept { pmem2_map_delete(&m); }
};

using SourcePtr = std::unique_ptr<pmem2_source, SourceDeleter>;
using ConfigPtr = std::unique_ptr<pmem2_config, ConfigDeleter>;
using MapPtr = std::unique_ptr<pmem2_map, MapDeleter>;

}  // namespace rpm::pmem::detail
