// BlockBackend: a file or block device driven through this thread's
// io_uring (ring.hpp), O_DIRECT where the file system allows.
#include "nvmf/engine/backend.hpp"
#include "nvmf/engine/block_file.hpp"
#include "nvmf/engine/ring.hpp"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

namespace rpm::nvmf::detail {
namespace {

// Write Zeroes writes from one zero-filled scratch chunk of this size.
constexpr std::size_t zero_chunk = 1u << 20;

class BlockBackend final : public Backend {
public:
    BlockBackend(BlockFile file, BackendInfo info) : Backend(std::move(info)), file_(std::move(file)) {}

    Result<void> read(std::uint64_t offset, std::span<std::byte> out) override {
        auto& ring = ThreadRing::local();
        for (std::size_t done = 0; done < out.size();) {
            const int n = ring.read(file_.fd(), out.subspan(done), offset + done);
            if (n == -EFAULT && file_.direct()) return bounced_read(offset + done, out.subspan(done));
            if (n <= 0) return failure("read", offset + done, n);
            done += static_cast<std::size_t>(n);
        }
        return {};
    }

    Result<void> write(std::uint64_t offset, std::span<const std::byte> in, bool fua) override {
        auto& ring = ThreadRing::local();
        for (std::size_t done = 0; done < in.size();) {
            const int n = ring.write(file_.fd(), in.subspan(done), offset + done, fua);
            if (n == -EFAULT && file_.direct()) return bounced_write(offset + done, in.subspan(done), fua);
            if (n <= 0) return failure("write", offset + done, n);
            done += static_cast<std::size_t>(n);
        }
        return {};
    }

    int ring_fd() const noexcept override { return file_.fd(); }

    Result<void> write_zeroes(std::uint64_t offset, std::uint64_t length) override {
        const auto chunk = static_cast<std::size_t>(std::min<std::uint64_t>(length, zero_chunk));
        auto zeros = ThreadRing::local().scratch(chunk);
        if (zeros.size() < chunk) return failure("write zeroes", offset, -ENOMEM);
        std::memset(zeros.data(), 0, zeros.size());
        for (std::uint64_t done = 0; done < length;) {
            const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(length - done, chunk));
            if (auto w = write(offset + done, zeros.first(n), false); !w) return w;
            done += n;
        }
        return {};
    }

    Result<void> flush() override {
        if (const int rc = ThreadRing::local().fdatasync(file_.fd()); rc < 0) return failure("fdatasync", 0, rc);
        return {};
    }

    Result<void> deallocate(std::uint64_t offset, std::uint64_t length) override {
        if (file_.device()) {
            // A hint: a device that cannot discard keeps its data, which
            // DLFEAT 000b allows (reads of deallocated blocks are undefined).
            std::uint64_t range[2] = {offset, length};
            if (::ioctl(file_.fd(), BLKDISCARD, range) == 0 || errno == EOPNOTSUPP) return {};
            return failure("discard", offset, -errno);
        }
        // A hole reads as zeroes, as this namespace promises (DLFEAT 001b);
        // where the file system cannot punch one, zeroes keep the promise.
        if (::fallocate(file_.fd(), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(offset),
                        static_cast<off_t>(length)) == 0)
            return {};
        if (errno == EOPNOTSUPP) return write_zeroes(offset, length);
        return failure("punching a hole", offset, -errno);
    }

private:
    // O_DIRECT cannot pin a buffer without struct pages (a BAR mapping:
    // the kernel answers EFAULT), so such staging goes through host memory.
    Result<void> bounced_read(std::uint64_t offset, std::span<std::byte> out) {
        auto bounce = ThreadRing::local().scratch(out.size());
        if (bounce.size() < out.size()) return failure("read", offset, -ENOMEM);
        if (auto r = read(offset, bounce); !r) return r;
        std::memcpy(out.data(), bounce.data(), out.size());
        return {};
    }

    Result<void> bounced_write(std::uint64_t offset, std::span<const std::byte> in, bool fua) {
        auto bounce = ThreadRing::local().scratch(in.size());
        if (bounce.size() < in.size()) return failure("write", offset, -ENOMEM);
        std::memcpy(bounce.data(), in.data(), in.size());
        return write(offset, bounce.first(in.size()), fua);
    }

    Error failure(const char* op, std::uint64_t offset, int rc) const {
        const std::string why = rc == 0 ? "unexpected end of file" : std::strerror(-rc);
        return {errc::io_error, std::string(op) + " of " + info().path.string() + " at byte " +
                                    std::to_string(offset) + ": " + why};
    }

    BlockFile file_;
};

std::string describe(const BlockFile& f) {
    std::string d = (f.device() ? "block device " : "file ") + f.path().string() + " (";
    const auto& ring = ThreadRing::local();
    d += ring.uring() ? "io_uring" : "pread/pwrite, " + ring.failure();
    if (f.direct())
        d += ", O_DIRECT, logical block " + std::to_string(f.logical_block()) + ")";
    else
        d += ", buffered (page cache): " + f.buffered_reason() + "; writes are volatile until Flush)";
    return d;
}

} // namespace

Result<std::shared_ptr<Backend>> open_block_backend(const NamespaceSpec& spec, OpenFn open_fn) {
    auto file = BlockFile::open(spec, open_fn);
    if (!file) return file.error();
    BackendInfo info{BackendKind::block, file->path(), file->bytes(), file->logical_block(), describe(*file),
                     !file->device()};
    return std::shared_ptr<Backend>(std::make_shared<BlockBackend>(std::move(*file), std::move(info)));
}

} // namespace rpm::nvmf::detail
