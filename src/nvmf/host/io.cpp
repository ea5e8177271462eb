// rpm::nvmf::Host's commands: Identify, and Read / Write / Flush / Write
// Zeroes on I/O queue 1, split into transfers the controller accepts (MDTS).
#include "nvmf/host/impl.hpp"

#include <algorithm>

namespace rpm::nvmf {

Result<void> Host::Impl::check(const Result<Completion>& c, const std::string& what) {
    if (!c) return c.error();
    if (c->status) {
        last_status = c->status;
        return Error(errc::nvme_status, what + ": " + describe_status(c->status));
    }
    return {};
}

Result<std::vector<std::uint32_t>> Host::active_namespaces() {
    if (!impl_) return host::moved_from_host("active_namespaces");
    std::vector<std::byte> list(4096);
    wire::Sqe s;
    s.set_opcode(wire::admin::identify);
    s.set_cdw(10, wire::cns::active_ns_list);
    if (auto ok = impl_->check(impl_->admin->submit(s, {}, list), "Identify (active namespaces)"); !ok) return ok.error();
    std::vector<std::uint32_t> out;
    for (std::size_t i = 0; i + 4 <= list.size(); i += 4) {
        const auto id = wire::get32(reinterpret_cast<const std::uint8_t*>(list.data()) + i);
        if (id == 0) break;
        out.push_back(id);
    }
    return out;
}

Result<NamespaceInfo> Host::identify(std::uint32_t nsid) {
    if (!impl_) return host::moved_from_host("identify");
    std::vector<std::byte> id(4096);
    wire::Sqe s;
    s.set_opcode(wire::admin::identify);
    s.set_nsid(nsid);
    s.set_cdw(10, wire::cns::ns);
    if (auto ok = impl_->check(impl_->admin->submit(s, {}, id), "Identify Namespace " + std::to_string(nsid)); !ok)
        return ok.error();
    const auto* b = reinterpret_cast<const std::uint8_t*>(id.data());
    NamespaceInfo info{nsid, wire::get64(b), 0};
    const auto format = b[26] & 0xF;  // FLBAS: the LBA format in use
    const auto lbads = b[128 + 4 * format + 2];
    if (info.blocks == 0) return Error(errc::invalid_argument, "namespace " + std::to_string(nsid) + " is not active");
    if (lbads < 9 || lbads > 16) return Error(errc::protocol_error, "namespace LBA size 2^" + std::to_string(lbads));
    info.block_size = 1u << lbads;
    auto& cache = impl_->block_sizes;
    std::erase_if(cache, [&](auto& e) { return e.first == nsid; });
    cache.emplace_back(nsid, info.block_size);
    return info;
}

namespace {

wire::Sqe rw(std::uint8_t op, std::uint32_t nsid, std::uint64_t lba, std::uint32_t blocks) {
    wire::Sqe s;
    s.set_opcode(op);
    s.set_nsid(nsid);
    s.set_cdw(10, std::uint32_t(lba));
    s.set_cdw(11, std::uint32_t(lba >> 32));
    s.set_cdw(12, blocks - 1);
    return s;
}

} // namespace

/// The namespace's block size (Identify on first use) and the largest
/// number of blocks one command may move.
static Result<std::pair<std::uint32_t, std::uint32_t>> geometry(Host& h, Host::Impl& d, std::uint32_t nsid) {
    auto it = std::find_if(d.block_sizes.begin(), d.block_sizes.end(), [&](auto& e) { return e.first == nsid; });
    std::uint32_t bs = it == d.block_sizes.end() ? 0 : it->second;
    if (!bs) {
        auto info = h.identify(nsid);
        if (!info) return info.error();
        bs = info->block_size;
    }
    const std::uint32_t max_bytes = d.info.max_transfer ? std::min<std::uint32_t>(d.info.max_transfer, 1u << 20) : 1u << 20;
    // A controller whose largest transfer is under one block could move
    // nothing: refused, rather than commands of zero blocks (NLB wraps).
    if (max_bytes < bs)
        return Error(errc::unsupported, "namespace " + std::to_string(nsid) + ": its " + std::to_string(bs) +
                                            "-byte blocks exceed the controller's largest transfer (" +
                                            std::to_string(max_bytes) + " bytes, MDTS)");
    return std::pair{bs, std::min<std::uint32_t>(max_bytes / bs, 65536)};
}

Result<void> Host::read(std::uint32_t nsid, std::uint64_t lba, std::span<std::byte> out) {
    if (!impl_) return host::moved_from_host("read");
    auto g = geometry(*this, *impl_, nsid);
    if (!g) return g.error();
    const auto [bs, max_blocks] = *g;
    if (out.empty() || out.size() % bs) return Error(errc::invalid_argument, "read of " + std::to_string(out.size()) + " bytes: not whole " + std::to_string(bs) + "-byte blocks");
    for (std::size_t done = 0; done < out.size();) {
        const auto blocks = std::uint32_t(std::min<std::size_t>((out.size() - done) / bs, max_blocks));
        auto c = impl_->io->submit(rw(wire::io::read, nsid, lba + done / bs, blocks), {}, out.subspan(done, std::size_t(blocks) * bs));
        if (auto ok = impl_->check(c, "Read nsid " + std::to_string(nsid) + " lba " + std::to_string(lba + done / bs)); !ok) return ok;
        done += std::size_t(blocks) * bs;
    }
    return {};
}

Result<void> Host::write(std::uint32_t nsid, std::uint64_t lba, std::span<const std::byte> in) {
    if (!impl_) return host::moved_from_host("write");
    auto g = geometry(*this, *impl_, nsid);
    if (!g) return g.error();
    const auto [bs, max_blocks] = *g;
    if (in.empty() || in.size() % bs) return Error(errc::invalid_argument, "write of " + std::to_string(in.size()) + " bytes: not whole " + std::to_string(bs) + "-byte blocks");
    for (std::size_t done = 0; done < in.size();) {
        const auto blocks = std::uint32_t(std::min<std::size_t>((in.size() - done) / bs, max_blocks));
        auto c = impl_->io->submit(rw(wire::io::write, nsid, lba + done / bs, blocks), in.subspan(done, std::size_t(blocks) * bs), {});
        if (auto ok = impl_->check(c, "Write nsid " + std::to_string(nsid) + " lba " + std::to_string(lba + done / bs)); !ok) return ok;
        done += std::size_t(blocks) * bs;
    }
    return {};
}

Result<void> Host::flush(std::uint32_t nsid) {
    if (!impl_) return host::moved_from_host("flush");
    wire::Sqe s;
    s.set_opcode(wire::io::flush);
    s.set_nsid(nsid);
    return impl_->check(impl_->io->submit(s, {}, {}), "Flush nsid " + std::to_string(nsid));
}

Result<void> Host::write_zeroes(std::uint32_t nsid, std::uint64_t lba, std::uint32_t blocks) {
    if (!impl_) return host::moved_from_host("write_zeroes");
    if (blocks == 0 || blocks > 65536) return Error(errc::invalid_argument, "write_zeroes of " + std::to_string(blocks) + " blocks: 1..65536");
    return impl_->check(impl_->io->submit(rw(wire::io::write_zeroes, nsid, lba, blocks), {}, {}),
                        "Write Zeroes nsid " + std::to_string(nsid));
}

} // namespace rpm::nvmf
