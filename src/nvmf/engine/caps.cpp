// The software engine's capabilities (the seed's ibv_nvmf_caps) and the
// check create_subsystem makes of its attributes.
#include "nvmf/engine/caps.hpp"

#include <cstdint>
#include <string>

namespace rpm::nvmf::detail {
namespace {

constexpr std::uint32_t page = 4096;
constexpr std::uint32_t max_io = 1u << 20;

Error outside(const char* field, std::uint64_t value, std::uint64_t lo, std::uint64_t hi, const char* unit = "") {
    return {errc::unsupported, std::string(field) + " " + std::to_string(value) + " is outside " + std::to_string(lo) +
                                   ".." + std::to_string(hi) + unit};
}

Result<void> check_io(const SubsystemAttrs& a, const OffloadCaps& c) {
    if ((a.offload_types & ~c.offload_types) != 0 || a.offload_types == 0)
        return Error(errc::unsupported, "offload_types " + std::to_string(a.offload_types) +
                                            " is not a non-empty subset of " + std::to_string(c.offload_types));
    if (a.max_namespaces < 1 || a.max_namespaces > c.max_namespaces)
        return outside("max_namespaces", a.max_namespaces, 1, c.max_namespaces);
    if (a.max_io_size < page || a.max_io_size > c.max_io_size || a.max_io_size % page != 0)
        return Error(errc::unsupported, "max_io_size " + std::to_string(a.max_io_size) +
                                            " is not a multiple of 4096 from 4096 to " + std::to_string(c.max_io_size));
    if (a.queue_size < c.min_queue_size || a.queue_size > c.max_queue_size)
        return outside("queue_size", a.queue_size, c.min_queue_size, c.max_queue_size);
    if (a.ioccsz < c.min_ioccsz || a.ioccsz > c.max_ioccsz)
        return outside("ioccsz", a.ioccsz, c.min_ioccsz, c.max_ioccsz, " (16-byte units)");
    if (a.icdoff > c.max_icdoff) return outside("icdoff", a.icdoff, 0, c.max_icdoff);
    return {};
}

Result<void> check_staging(const SubsystemAttrs& a, const OffloadCaps& c) {
    if (a.staging_bytes % page != 0)
        return Error(errc::unsupported, "staging_bytes " + std::to_string(a.staging_bytes) + " is not a multiple of 4096");
    const auto pages = a.staging_bytes / page;
    if (pages < c.min_staging_buf_pages || pages > c.max_staging_buf_pages)
        return outside("staging_bytes", a.staging_bytes, std::uint64_t(c.min_staging_buf_pages) * page,
                       std::uint64_t(c.max_staging_buf_pages) * page);
    if (a.staging_bytes < a.max_io_size)
        return Error(errc::unsupported, "staging_bytes " + std::to_string(a.staging_bytes) +
                                            " holds no max_io_size slot of " + std::to_string(a.max_io_size));
    return {};
}

} // namespace

OffloadCaps software_caps() noexcept {
    OffloadCaps c;
    c.offload_types = offload_read_write_flush | offload_write_zeroes | offload_dataset_management;
    c.max_backend_ctrls_total = 4096;
    c.max_backend_ctrls = 1024;
    c.max_namespaces = 1024;
    c.min_staging_buf_pages = 32;      // 128 KiB: one default-sized slot
    c.max_staging_buf_pages = 65536;   // 256 MiB
    c.max_io_size = max_io;
    c.min_queue_size = 2;
    c.max_queue_size = 1024;
    // In-capsule data is the transport's business; the engine only needs
    // it to fit a transfer, so up to max_io_size of it is fine.
    c.min_ioccsz = 64 / 16;
    c.max_ioccsz = (64 + max_io) / 16;
    c.max_icdoff = 0;
    return c;
}

Result<void> check_attrs(const SubsystemAttrs& a, const OffloadCaps& caps) {
    if (auto io = check_io(a, caps); !io) return io;
    return check_staging(a, caps);
}

} // namespace rpm::nvmf::detail
