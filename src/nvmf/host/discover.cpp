// Discovery (an admin queue to the discovery NQN, Get Log Page 0x70) and
// the parsing of Identify Controller and discovery log pages.
#include "nvmf/host/impl.hpp"

#include <algorithm>

namespace rpm::nvmf {

namespace host {

namespace {

/// A fixed-width, space- or NUL-padded ASCII field.
std::string text(std::span<const std::uint8_t> b, std::size_t off, std::size_t len) {
    std::string s(reinterpret_cast<const char*>(b.data() + off), len);
    s.erase(std::find(s.begin(), s.end(), '\0'), s.end());
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
}

Result<std::vector<std::uint8_t>> get_log(Queue& admin, std::uint8_t lid, std::uint32_t bytes) {
    std::vector<std::uint8_t> page(bytes);
    wire::Sqe s;
    s.set_opcode(wire::admin::get_log_page);
    const auto numd = bytes / 4 - 1;
    s.set_cdw(10, lid | (numd & 0xFFFF) << 16);
    s.set_cdw(11, numd >> 16);
    auto c = admin.submit(s, {}, std::as_writable_bytes(std::span(page)));
    if (!c) return c.error();
    if (c->status) return Error(errc::nvme_status, "Get Log Page " + std::to_string(lid) + ": " + describe_status(c->status));
    return page;
}

} // namespace

ControllerInfo parse_identify_controller(std::span<const std::uint8_t> id, std::uint32_t mps) {
    ControllerInfo c;
    c.serial = text(id, 4, 20);
    c.model = text(id, 24, 40);
    c.firmware = text(id, 64, 8);
    const auto mdts = id[77];
    c.max_transfer = mdts ? std::uint32_t(std::min<std::uint64_t>(std::uint64_t(mps) << mdts, 1u << 30)) : 0;
    c.cntlid = wire::get16(&id[78]);
    c.namespaces = wire::get32(&id[516]);
    c.oncs = wire::get16(&id[520]);
    c.volatile_write_cache = (id[525] & 1) != 0;
    c.subnqn = text(id, 768, 256);
    const auto ioccsz = wire::get32(&id[1792]);
    c.in_capsule_data = ioccsz >= 4 ? ioccsz * 16 - 64 : 0;
    return c;
}

std::vector<DiscoveryEntry> parse_discovery_log(std::span<const std::uint8_t> log) {
    std::vector<DiscoveryEntry> out;
    if (log.size() < 1024) return out;
    const auto records = wire::get64(&log[8]);
    for (std::uint64_t i = 0; i < records && 1024 * (i + 2) <= log.size(); ++i) {
        const auto e = log.subspan(1024 * (i + 1), 1024);
        out.push_back({e[0], e[1], e[2], wire::get16(&e[4]), wire::get16(&e[6]), text(e, 32, 32), text(e, 512, 256),
                       text(e, 256, 256)});
    }
    return out;
}

} // namespace host

Result<std::vector<DiscoveryEntry>> Host::discover(const HostOptions& options) {
    // The timeout bounds every wait for a reply: one that is not positive
    // would only surface as an io_error at the first wait, after connecting;
    // refused here, as connect() does, before any network activity.
    if (options.timeout.count() <= 0)
        return Error(errc::invalid_argument, "discover: HostOptions::timeout must be positive (is " +
                                                 std::to_string(options.timeout.count()) + " ms)");
    auto o = options;
    o.subnqn = wire::discovery_nqn;
    o.kato_ms = 0;  // a one-shot discovery, as `nvme discover` does
    std::uint16_t cntlid = 0;
    auto admin = host::open_admin(o, cntlid);
    if (!admin) return admin.error();
    auto head = host::get_log(**admin, wire::lid::discovery, 1024);
    if (!head) return head.error();
    const auto records = std::min<std::uint64_t>(wire::get64(&(*head)[8]), 1024);
    auto full = host::get_log(**admin, wire::lid::discovery, std::uint32_t(1024 * (records + 1)));
    if (!full) return full.error();
    return host::parse_discovery_log(*full);
}

} // namespace rpm::nvmf
