// rpm::OfflineFence: a region's fencing term set while no server serves the
// region (rpm-server reset-term). The fence file and the lock are the
// server's own (server::fence_file_for, server::lock_region_file), so the
// two cannot disagree on where the term is or who may change it.
#include <rpm/server.hpp>

#include "protocol/protocol.hpp"
#include "server/fence.hpp"

namespace rpm {

struct OfflineFence::Impl {
    std::filesystem::path file;
    UniqueFd lock;  ///< the region file's exclusive flock
};

Result<OfflineFence> OfflineFence::open(const RegionSpec& region,
                                        const std::optional<std::filesystem::path>& fence_dir) {
    if (region.name.empty() || region.name.size() > proto::kMaxName)
        return Error(errc::invalid_argument, "region names are 1 to 255 bytes ('" + region.name + "')");
    std::error_code ec;
    if (fence_dir && !std::filesystem::is_directory(*fence_dir, ec))
        return Error(errc::invalid_argument, "fence dir " + fence_dir->string() + " is not a directory");
    if (!std::filesystem::exists(region.path, ec))
        return Error(errc::path_not_found, "region " + region.name + ": " + region.path.string() + " does not exist");
    auto file = server::fence_file_for(region.name, region.path, fence_dir);
    if (!file)
        return Error(errc::unsupported, "region " + region.name + " (" + region.path.string() +
                                            ") is not a regular file: its term is kept only in a fence dir; give the "
                                            "one its server uses (rpm-server --fence-dir)");
    // Before the term is read: a server starting from now on is refused;
    // one already serving makes this open fail.
    auto lock = server::lock_region_file(region.name, region.path, true);
    if (!lock) return lock.error();
    auto impl = std::make_unique<Impl>();
    impl->file = std::move(*file);
    impl->lock = std::move(*lock);
    return OfflineFence(std::move(impl));
}

OfflineFence::OfflineFence(std::unique_ptr<Impl> impl) noexcept : impl_(std::move(impl)) {}
OfflineFence::OfflineFence(OfflineFence&&) noexcept = default;
OfflineFence& OfflineFence::operator=(OfflineFence&&) noexcept = default;
OfflineFence::~OfflineFence() = default;

const std::filesystem::path& OfflineFence::file() const noexcept { return impl_->file; }

Result<std::uint64_t> OfflineFence::fencing_term() const { return server::load_term(impl_->file); }

Result<void> OfflineFence::set_fencing_term(std::uint64_t fencing_term) {
    return server::store_term(impl_->file, fencing_term);
}

} // namespace rpm
