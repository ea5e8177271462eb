// PmemBackend: a PM region (rpm::pmem::Region). Every write is made durable
// before it completes, the way the rpm server persists after a send-flush:
// flush::server_persist_for(the region's domain) picks the step (SFENCE on
// eADR, CLWB + SFENCE on ADR, + the WPQ deep flush without ADR, msync for
// the page cache), so Flush has nothing left to do but order.
#include "nvmf/engine/backend.hpp"
#include "pmem/persist_step.hpp"

#include <rpm/flush.hpp>
#include <rpm/pmem.hpp>

#include <cstdint>
#include <cstring>
#include <string>
#include <system_error>
#include <utility>

namespace rpm::nvmf::detail {
namespace {

namespace fs = std::filesystem;
using flush::ServerPersist;

class PmemBackend final : public Backend {
public:
    PmemBackend(pmem::Region region, BackendInfo info)
        : Backend(std::move(info)), region_(std::move(region)), step_(flush::server_persist_for(region_.domain())) {}

    Result<void> read(std::uint64_t offset, std::span<std::byte> out) override {
        std::memcpy(out.data(), at(offset), out.size());
        return {};
    }

    Result<void> write(std::uint64_t offset, std::span<const std::byte> in, bool /*fua: always durable*/) override {
        std::memcpy(at(offset), in.data(), in.size());
        return persist(offset, in.size());
    }

    Result<void> write_zeroes(std::uint64_t offset, std::uint64_t length) override {
        std::memset(at(offset), 0, static_cast<std::size_t>(length));
        return persist(offset, static_cast<std::size_t>(length));
    }

    // PM has nothing to give back: zeroes, durable, so that a read of a
    // deallocated block returns them (DLFEAT 001b).
    Result<void> deallocate(std::uint64_t offset, std::uint64_t length) override {
        return write_zeroes(offset, length);
    }

    Result<void> flush() override {
        region_.drain();
        return {};
    }

private:
    std::byte* at(std::uint64_t offset) const { return region_.bytes().data() + offset; }

    // One extent through the server's executor: the same step, the same
    // errors (an msync failure is never dropped).
    Result<void> persist(std::uint64_t offset, std::size_t n) const {
        const struct {
            std::uint64_t offset, length;
        } extent[] = {{offset, n}};
        return pmem::detail::run_persist_step(region_, step_, extent);
    }

    pmem::Region region_;
    ServerPersist step_;
};

std::string describe(const pmem::Region& r) {
    const auto step = flush::server_persist_for(r.domain());
    return "pmem region " + r.path().string() + " (" + std::string(pmem::to_string(r.kind())) + ", " +
           std::string(rpm::to_string(r.granularity())) + " granularity, domain " + std::string(rpm::to_string(r.domain())) +
           ": " + std::string(flush::to_string(step)) + " on every write)";
}

} // namespace

Result<std::shared_ptr<Backend>> open_pmem_backend(const NamespaceSpec& spec, const fs::path& sysfs_root) {
    std::error_code ec;
    fs::path path = fs::absolute(spec.path, ec);
    if (ec) path = spec.path;
    pmem::OpenOptions o;
    o.create = spec.create && !fs::exists(path, ec);
    o.size = o.create ? spec.size : 0;
    o.sysfs_root = sysfs_root;
    auto region = pmem::Region::open(path, o);
    if (!region) return region.error();
    if (region->size() == 0) return Error(errc::bad_size, path.string() + " is empty");
    BackendInfo info{BackendKind::pmem, path, region->size(), 1, describe(*region), true};
    return std::shared_ptr<Backend>(std::make_shared<PmemBackend>(std::move(*region), std::move(info)));
}

} // namespace rpm::nvmf::detail
