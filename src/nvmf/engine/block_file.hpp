#pragma once
// Opening a block backend's file or device: O_DIRECT when the file system
// takes it, the page cache when it refuses with EINVAL (tmpfs before Linux
// 6.6, some FUSE and network file systems), its size and the logical block
// size O_DIRECT transfers must be multiples of.

#include "nvmf/engine/backend.hpp"

#include <rpm/nvmf_offload.hpp>
#include <rpm/result.hpp>

#include <cstdint>
#include <filesystem>
#include <string>

namespace rpm::nvmf::detail {

class BlockFile {
public:
    /// Open (creating a file of spec.size when spec.create and it is
    /// missing) the file or block device at spec.path, read-write.
    /// RETURN VALUE: the open file. ERRORS: as open_block_backend.
    static Result<BlockFile> open(const NamespaceSpec& spec, OpenFn open_fn);

    BlockFile(BlockFile&& other) noexcept;
    BlockFile& operator=(BlockFile&& other) noexcept;
    BlockFile(const BlockFile&) = delete;
    BlockFile& operator=(const BlockFile&) = delete;
    ~BlockFile();

    [[nodiscard]] int fd() const noexcept { return fd_; }
    [[nodiscard]] bool direct() const noexcept { return direct_; }
    [[nodiscard]] bool device() const noexcept { return device_; }
    [[nodiscard]] std::uint64_t bytes() const noexcept { return bytes_; }
    /// Transfers must be multiples of this (1 in the page cache).
    [[nodiscard]] std::uint32_t logical_block() const noexcept { return logical_block_; }
    [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }
    /// Why the page cache is used; empty with O_DIRECT.
    [[nodiscard]] const std::string& buffered_reason() const noexcept { return buffered_reason_; }

private:
    BlockFile() = default;
    Result<void> open_fd(OpenFn open_fn);
    Result<void> measure();

    int fd_ = -1;
    bool direct_ = false;
    bool device_ = false;
    std::uint64_t bytes_ = 0;
    std::uint32_t logical_block_ = 1;
    std::filesystem::path path_;
    std::string buffered_reason_;
};

} // namespace rpm::nvmf::detail
